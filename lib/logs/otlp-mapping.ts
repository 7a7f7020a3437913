/**
 * THE mapping from an OpenTelemetry LogRecord to a logkeep entry
 * (docs/ingestion.md has it as a table). Pure: the protobuf and JSON
 * readers (otlp-protobuf.ts, otlp-json.ts) first turn a record, its scope
 * and its resource into the plain shapes below, then this module decides
 * every key of the entry. The entry then goes through the same validation
 * as one sent to `POST /v1/logs`.
 */
import { CORRELATION_FIELDS } from './entry-validation.js';
import type { LevelName } from '../search/levels.js';

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

/** Runs one record's conversion, turning its refusal into a value so the other records go on. */
export function convertOrRefuse<T>(convert: () => T): T | OtlpRecordError {
  try {
    return convert();
  } catch (err) {
    if (err instanceof OtlpRecordError) return err;
    throw err;
  }
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
  return TEXT_LEVELS[severityText.trim().toLowerCase().replace(/[0-9]$/, '')] ?? 'info';
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
 * Attributes as an object whose dotted keys become nested objects
 * (`service.name` → `{service: {name}}`), so `context.resource.service.name`
 * reaches them. A key whose place is already taken (`http` holding a
 * string, then `http.method`), or with an empty segment, stays whole.
 */
export function nestAttributes(attributes: Attributes): Record<string, JsonValue> {
  const root = newObject();
  for (const [key, value] of attributes) {
    const parts = key.split('.');
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
 * The entry for one record. Keys, in order: timestamp, level, event,
 * logger, the correlation fields found, then `body` (a body that is not a
 * string), `event_name`, `severity_text`, `severity_number`, `trace_id`,
 * `span_id`, `flags`, `attributes`, `resource`, `scope_version`,
 * `scope_attributes`, and the dropped counts that are not zero.
 */
export function otlpEntry(record: OtlpRecordInput, scope: OtlpScopeInput, resource: OtlpResourceInput, receivedAt: number): Record<string, unknown> {
  const ms = record.timeMs ?? record.observedTimeMs ?? receivedAt;
  const entry: Record<string, unknown> = {
    timestamp: new Date(ms).toISOString(),
    level: otlpLevel(record.severityNumber, record.severityText),
    event: eventOf(record),
  };
  if (scope.name !== '') entry.logger = scope.name;
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
  if (resource.attributes.length > 0) entry.resource = nestAttributes(resource.attributes);
  if (scope.version !== '') entry.scope_version = scope.version;
  if (scope.attributes.length > 0) entry.scope_attributes = nestAttributes(scope.attributes);
  if (record.droppedAttributesCount !== 0) entry.dropped_attributes_count = record.droppedAttributesCount;
  if (resource.droppedAttributesCount !== 0) entry.resource_dropped_attributes_count = resource.droppedAttributesCount;
  if (scope.droppedAttributesCount !== 0) entry.scope_dropped_attributes_count = scope.droppedAttributesCount;
  return entry;
}
