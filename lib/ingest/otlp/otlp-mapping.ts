/**
 * THE mapping from an OpenTelemetry LogRecord to a logkeep entry
 * (docs/ingestion.md has it as a table). Pure: the protobuf and JSON
 * readers (otlp-protobuf.ts, otlp-json.ts) first turn a record, its scope
 * and its resource into the plain shapes below, then this module decides
 * every key of the entry. The entry then goes through the same validation
 * as one sent to `POST /v1/logs`.
 */
import { CORRELATION_FIELDS, MAX_ENTRY_DEPTH } from '../entry-validation.js';
import type { LevelName } from '../../search/levels.js';

/** An AnyValue as JSON: kvlist → object, array → array, bytes → base64, int64 → number (text beyond 2^53). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Attributes in their order, values already as JSON. */
export type Attributes = [string, JsonValue][];

export interface OtlpResourceInput {
  attributes: Attributes;
  droppedAttributesCount: number;
}

export interface OtlpScopeInput {
  name: string;
  version: string;
  attributes: Attributes;
  droppedAttributesCount: number;
}

export interface OtlpRecordInput {
  /** Epoch milliseconds of `time_unix_nano`; null when unset (0). */
  timeMs: number | null;
  /** Epoch milliseconds of `observed_time_unix_nano`; null when unset (0). */
  observedTimeMs: number | null;
  /** 0 when unset. */
  severityNumber: number;
  severityText: string;
  /** undefined when the record has no body. */
  body: JsonValue | undefined;
  attributes: Attributes;
  droppedAttributesCount: number;
  flags: number;
  /** Lowercase hex; '' when unset. */
  traceId: string;
  spanId: string;
  eventName: string;
}

/** A record refused before it became an entry (its message goes to partial_success). */
export class OtlpRecordError extends Error {}

/** A value nesting deeper than an entry may: refused without walking the rest of it. */
export function tooDeep(): OtlpRecordError {
  return new OtlpRecordError(`The entry nests objects and arrays more than ${MAX_ENTRY_DEPTH} levels deep.`);
}

/** The event of a structured body: its compact JSON, cut to this many characters. */
export const STRUCTURED_EVENT_CHARS = 200;
/** The event of a record with neither a body nor an event name. */
export const NO_BODY_EVENT = '(no body)';

/**
 * severity_number ranges of the OTLP data model, then severity_text (case
 * ignored, a trailing digit as in `WARN2` too) when the number is unset or
 * out of range; neither → info.
 */
export function otlpLevel(severityNumber: number, severityText: string): LevelName {
  if (severityNumber >= 1 && severityNumber <= 8) return 'debug';
  if (severityNumber >= 9 && severityNumber <= 12) return 'info';
  if (severityNumber >= 13 && severityNumber <= 16) return 'warning';
  if (severityNumber >= 17 && severityNumber <= 20) return 'error';
  if (severityNumber >= 21 && severityNumber <= 24) return 'critical';
  return (
    TEXT_LEVELS[
      severityText
        .trim()
        .toLowerCase()
        .replace(/[0-9]$/, '')
    ] ?? 'info'
  );
}

const TEXT_LEVELS: Record<string, LevelName> = Object.assign(Object.create(null) as Record<string, LevelName>, {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  information: 'info',
  notice: 'info',
  warn: 'warning',
  warning: 'warning',
  error: 'error',
  err: 'error',
  fatal: 'critical',
  critical: 'critical',
  crit: 'critical',
  alert: 'critical',
  emerg: 'critical',
  emergency: 'critical',
  panic: 'critical',
});

function newObject(): Record<string, JsonValue> {
  // No prototype: an attribute named `__proto__` is a key like any other.
  return Object.create(null) as Record<string, JsonValue>;
}

function isPlainObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The most dot-separated segments a key is nested by: one more would nest
 * deeper than an entry may (the entry and `attributes` take two levels),
 * so such a key stays whole instead of making its entry invalid, and is
 * never split into more pieces than this.
 */
export const MAX_KEY_SEGMENTS = MAX_ENTRY_DEPTH - 1;

/** Whether `key` has more than MAX_KEY_SEGMENTS segments, counting no further than that. */
function hasTooManySegments(key: string): boolean {
  let dots = 0;
  for (let i = key.indexOf('.'); i !== -1; i = key.indexOf('.', i + 1)) if (++dots >= MAX_KEY_SEGMENTS) return true;
  return false;
}

/**
 * Attributes as an object whose dotted keys become nested objects
 * (`service.name` → `{service: {name}}`), so `context.resource.service.name`
 * reaches them. A key whose place is already taken (`http` holding a
 * string, then `http.method`), with an empty segment, or with more than
 * MAX_KEY_SEGMENTS segments, stays whole.
 */
export function nestAttributes(attributes: Attributes): Record<string, JsonValue> {
  const root = newObject();
  for (const [key, value] of attributes) {
    const parts = hasTooManySegments(key) ? [key] : key.split('.');
    let target: Record<string, JsonValue> | null = root;
    if (parts.some((p) => p === '')) target = null;
    for (let i = 0; target !== null && i < parts.length - 1; i++) {
      const existing: JsonValue | undefined = target[parts[i]!];
      if (existing === undefined) {
        const child = newObject();
        target[parts[i]!] = child;
        target = child;
      } else target = isPlainObject(existing) ? existing : null;
    }
    const last = parts[parts.length - 1]!;
    if (target !== null && target[last] === undefined) target[last] = value;
    else if (root[key] === undefined) root[key] = value;
  }
  return root;
}

/** A correlation field's value from an attribute, or undefined when its type does not fit (it stays an attribute). */
function correlationValue(field: string, value: JsonValue): string | number | undefined {
  if (typeof value === 'string') return value;
  if (field === 'connection_generation' && typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function eventOf(record: OtlpRecordInput): string {
  const body = record.body;
  if (typeof body === 'string' && body !== '') return body;
  if (body !== undefined && body !== null && body !== '') {
    const text = typeof body === 'object' ? JSON.stringify(body) : String(body);
    return text.length > STRUCTURED_EVENT_CHARS ? `${text.slice(0, STRUCTURED_EVENT_CHARS - 1)}…` : text;
  }
  return record.eventName !== '' ? record.eventName : NO_BODY_EVENT;
}

/**
 * The latest instant an entry's timestamp can hold (ISO 8601 years have
 * four digits). Every time an OTLP reader accepts (a uint64 of
 * nanoseconds, at most year 2554) is before it; this keeps a reader's
 * mistake a refused record instead of a failed request.
 */
export const MAX_ENTRY_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * What a group's scope and resource give each of its entries, built once
 * for the group: every entry of the group holds these same values.
 */
export interface OtlpShared {
  logger: string | undefined;
  resource: Record<string, JsonValue> | undefined;
  scopeVersion: string | undefined;
  scopeAttributes: Record<string, JsonValue> | undefined;
  resourceDropped: number;
  scopeDropped: number;
  /** The bytes these add to each entry's compact JSON (what quotas count), exactly. */
  bytes: number;
}

/** What a resource gives every entry of its records: made once per resource, however many scopes and records it has. */
export interface OtlpResourcePart {
  resource: Record<string, JsonValue> | undefined;
  resourceDropped: number;
  /** The bytes its members add to an entry's compact JSON, commas included. */
  bytes: number;
}

/** `"key":value` and the comma before or after it in an entry's compact JSON, in UTF-8 bytes. */
function memberBytes(key: string, value: unknown): number {
  return value === undefined ? 0 : key.length + 4 + Buffer.byteLength(JSON.stringify(value), 'utf8');
}

export function otlpResourcePart(resource: OtlpResourceInput): OtlpResourcePart {
  const nested = resource.attributes.length > 0 ? nestAttributes(resource.attributes) : undefined;
  const dropped = resource.droppedAttributesCount;
  return {
    resource: nested,
    resourceDropped: dropped,
    bytes: memberBytes('resource', nested) + memberBytes('resource_dropped_attributes_count', dropped !== 0 ? dropped : undefined),
  };
}

/** The part of every entry a scope and its resource give (`resource` made by `otlpResourcePart`, or made here). */
export function otlpShared(scope: OtlpScopeInput, resource: OtlpResourceInput | OtlpResourcePart): OtlpShared {
  const part = 'bytes' in resource ? resource : otlpResourcePart(resource);
  const shared: OtlpShared = {
    logger: scope.name !== '' ? scope.name : undefined,
    resource: part.resource,
    scopeVersion: scope.version !== '' ? scope.version : undefined,
    scopeAttributes: scope.attributes.length > 0 ? nestAttributes(scope.attributes) : undefined,
    resourceDropped: part.resourceDropped,
    scopeDropped: scope.droppedAttributesCount,
    bytes: 0,
  };
  // Each member adds `"key":value` and one comma to an entry (never empty), exactly.
  shared.bytes =
    part.bytes +
    memberBytes('logger', shared.logger) +
    memberBytes('scope_version', shared.scopeVersion) +
    memberBytes('scope_attributes', shared.scopeAttributes) +
    memberBytes('scope_dropped_attributes_count', shared.scopeDropped !== 0 ? shared.scopeDropped : undefined);
  return shared;
}

/**
 * The entry for one record. Keys, in order: timestamp, level, event,
 * logger, the correlation fields found, then `body` (a body that is not a
 * string), `event_name`, `severity_text`, `severity_number`, `trace_id`,
 * `span_id`, `flags`, `attributes`, `resource`, `scope_version`,
 * `scope_attributes`, and the dropped counts that are not zero.
 */
export function otlpEntry(record: OtlpRecordInput, shared: OtlpShared, receivedAt: number): Record<string, unknown> {
  const ms = record.timeMs ?? record.observedTimeMs ?? receivedAt;
  if (!(ms >= 0 && ms <= MAX_ENTRY_TIME_MS)) throw new OtlpRecordError("The record's time is after the year 9999, the latest an entry's timestamp may have.");
  const entry: Record<string, unknown> = {
    timestamp: new Date(ms).toISOString(),
    level: otlpLevel(record.severityNumber, record.severityText),
    event: eventOf(record),
  };
  if (shared.logger !== undefined) entry.logger = shared.logger;
  let attributes = record.attributes;
  if (attributes.length > 0) {
    const taken = new Set<string>();
    for (const field of CORRELATION_FIELDS) {
      const attribute = attributes.find(([key]) => key === field);
      if (attribute === undefined) continue;
      const value = correlationValue(field, attribute[1]);
      if (value === undefined) continue;
      entry[field] = value;
      taken.add(field);
    }
    if (taken.size > 0) attributes = attributes.filter(([key]) => !taken.has(key));
  }
  const body = record.body;
  if (body !== undefined && typeof body !== 'string') entry.body = body;
  if (record.eventName !== '') entry.event_name = record.eventName;
  if (record.severityText !== '') entry.severity_text = record.severityText;
  if (record.severityNumber !== 0) entry.severity_number = record.severityNumber;
  if (record.traceId !== '') entry.trace_id = record.traceId;
  if (record.spanId !== '') entry.span_id = record.spanId;
  if (record.flags !== 0) entry.flags = record.flags;
  if (attributes.length > 0) entry.attributes = nestAttributes(attributes);
  if (shared.resource !== undefined) entry.resource = shared.resource;
  if (shared.scopeVersion !== undefined) entry.scope_version = shared.scopeVersion;
  if (shared.scopeAttributes !== undefined) entry.scope_attributes = shared.scopeAttributes;
  if (record.droppedAttributesCount !== 0) entry.dropped_attributes_count = record.droppedAttributesCount;
  if (shared.resourceDropped !== 0) entry.resource_dropped_attributes_count = shared.resourceDropped;
  if (shared.scopeDropped !== 0) entry.scope_dropped_attributes_count = shared.scopeDropped;
  return entry;
}
