/**
 * Reads an OTLP `ExportLogsServiceRequest` in OTLP/JSON: protobuf's JSON
 * mapping with lowerCamelCase keys, trace and span ids as hex, 64-bit
 * integers as decimal strings or numbers, enums as numbers. A body that is
 * not JSON, or whose outer shape (resourceLogs → scopeLogs → logRecords) is
 * not arrays of objects, refuses the request (400); a record with a field
 * of the wrong type is refused alone, in partial_success.
 */
import { isAscii } from 'node:buffer';
import { invalidRequest } from '../core/errors.js';
import { OtlpRecordError, convertOrRefuse, type Attributes, type JsonValue, type OtlpRecordInput, type OtlpResourceInput, type OtlpScopeInput } from './otlp-mapping.js';
import type { OtlpGroup, OtlpRequest } from './otlp-request.js';
import { MAX_OTLP_RECORDS, MAX_VALUE_DEPTH, tooDeep, tooManyRecords } from './otlp-request.js';

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function badShape(where: string): never {
  throw invalidRequest(`The request body is not an OTLP ExportLogsServiceRequest in JSON: ${where}.`);
}

/** An optional array of objects at `key`. */
function objects(parent: Obj, key: string, where: string): Obj[] {
  const value = parent[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isObject)) badShape(`'${where}' must be an array of objects`);
  return value;
}

function field(record: Obj, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function wrongType(key: string, expected: string): OtlpRecordError {
  return new OtlpRecordError(`'${key}' must be ${expected}.`);
}

const DECIMAL = /^[0-9]{1,20}$/;

/** Epoch milliseconds of a count of nanoseconds sent as a decimal string or a number; null for 0 or absent. */
export function jsonNanosToMillis(value: unknown, key: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value === 0 ? null : Math.floor(value / 1e6);
  if (typeof value === 'string' && DECIMAL.test(value)) {
    // The digits above the last six are the milliseconds, exactly.
    const ms = value.length > 6 ? Number(value.slice(0, -6)) : 0;
    return ms === 0 && /^0*$/.test(value) ? null : ms;
  }
  throw wrongType(key, 'a count of nanoseconds (a decimal string or a number)');
}

function uint(value: unknown, key: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^[0-9]{1,10}$/.test(value)) return Number(value);
  throw wrongType(key, 'a non-negative integer');
}

function text(value: unknown, key: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  throw wrongType(key, 'a string');
}

const SEVERITY_NAMES = ['UNSPECIFIED', 'TRACE', 'TRACE2', 'TRACE3', 'TRACE4', 'DEBUG', 'DEBUG2', 'DEBUG3', 'DEBUG4', 'INFO', 'INFO2', 'INFO3', 'INFO4', 'WARN', 'WARN2', 'WARN3', 'WARN4', 'ERROR', 'ERROR2', 'ERROR3', 'ERROR4', 'FATAL', 'FATAL2', 'FATAL3', 'FATAL4'];

/** A number, or the enum's name (`SEVERITY_NUMBER_WARN`), which protobuf's JSON mapping also allows. */
function severityNumber(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string') {
    const n = SEVERITY_NAMES.indexOf(value.replace(/^SEVERITY_NUMBER_/, ''));
    if (n >= 0) return n;
  }
  throw wrongType('severityNumber', 'a SeverityNumber');
}

function id(value: unknown, key: string): string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value === 'string' && /^[0-9a-fA-F]+$/.test(value)) return value.toLowerCase();
  throw wrongType(key, 'a hex string');
}

function int64(value: unknown): number | string {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?[0-9]{1,20}$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  throw wrongType('intValue', 'an integer');
}

function anyValue(value: unknown, depth: number): JsonValue {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw wrongType('AnyValue', 'an object');
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  if (Object.hasOwn(value, 'stringValue')) return text(value.stringValue, 'stringValue');
  if (Object.hasOwn(value, 'boolValue')) {
    if (typeof value.boolValue !== 'boolean') throw wrongType('boolValue', 'a boolean');
    return value.boolValue;
  }
  if (Object.hasOwn(value, 'intValue')) return int64(value.intValue);
  if (Object.hasOwn(value, 'doubleValue')) {
    const n = value.doubleValue;
    if (typeof n === 'number') return n;
    if (n === 'NaN' || n === 'Infinity' || n === '-Infinity') return n;
    throw wrongType('doubleValue', 'a number');
  }
  if (Object.hasOwn(value, 'bytesValue')) return text(value.bytesValue, 'bytesValue');
  if (Object.hasOwn(value, 'arrayValue')) {
    const values = isObject(value.arrayValue) ? value.arrayValue.values : undefined;
    if (values === undefined || values === null) return [];
    if (!Array.isArray(values)) throw wrongType('arrayValue.values', 'an array');
    return values.map((v) => anyValue(v, depth + 1));
  }
  if (Object.hasOwn(value, 'kvlistValue')) {
    const out = Object.create(null) as Record<string, JsonValue>;
    for (const [key, v] of keyValues(isObject(value.kvlistValue) ? value.kvlistValue.values : undefined, depth + 1)) out[key] = v;
    return out;
  }
  return null;
}

function keyValues(list: unknown, depth: number): Attributes {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw wrongType('attributes', 'an array of key-values');
  return list.map((kv) => {
    if (!isObject(kv) || typeof kv.key !== 'string') throw wrongType('attributes', 'an array of {key, value}');
    return [kv.key, anyValue(kv.value, depth)];
  });
}

function resourceOf(resource: unknown): OtlpResourceInput | OtlpRecordError {
  if (!isObject(resource)) return { attributes: [], droppedAttributesCount: 0 };
  return convertOrRefuse(() => ({ attributes: keyValues(resource.attributes, 2), droppedAttributesCount: uint(resource.droppedAttributesCount, 'droppedAttributesCount') }));
}

function scopeOf(scope: unknown): OtlpScopeInput | OtlpRecordError {
  if (!isObject(scope)) return { name: '', version: '', attributes: [], droppedAttributesCount: 0 };
  return convertOrRefuse(() => ({
    name: text(scope.name, 'scope.name'),
    version: text(scope.version, 'scope.version'),
    attributes: keyValues(scope.attributes, 2),
    droppedAttributesCount: uint(scope.droppedAttributesCount, 'droppedAttributesCount'),
  }));
}

function recordOf(r: Obj): OtlpRecordInput {
  const body = field(r, 'body');
  return {
    timeMs: jsonNanosToMillis(field(r, 'timeUnixNano'), 'timeUnixNano'),
    observedTimeMs: jsonNanosToMillis(field(r, 'observedTimeUnixNano'), 'observedTimeUnixNano'),
    severityNumber: severityNumber(field(r, 'severityNumber')),
    severityText: text(field(r, 'severityText'), 'severityText'),
    body: body === undefined || body === null ? undefined : anyValue(body, 2),
    attributes: keyValues(field(r, 'attributes'), 2),
    droppedAttributesCount: uint(field(r, 'droppedAttributesCount'), 'droppedAttributesCount'),
    flags: uint(field(r, 'flags'), 'flags'),
    traceId: id(field(r, 'traceId'), 'traceId'),
    spanId: id(field(r, 'spanId'), 'spanId'),
    eventName: text(field(r, 'eventName'), 'eventName'),
  };
}

/** The request's groups of records; 400 when the body is not JSON or its outer shape is wrong. */
export function readJsonRequest(raw: Buffer): OtlpRequest<Obj> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(isAscii(raw) ? raw.toString('latin1') : raw.toString('utf8'));
  } catch {
    throw invalidRequest('The request body is not valid JSON.');
  }
  if (!isObject(parsed)) badShape('the body must be a JSON object');
  const groups: OtlpGroup<Obj>[] = [];
  let count = 0;
  for (const resourceLogs of objects(parsed, 'resourceLogs', 'resourceLogs')) {
    const resource = resourceOf(resourceLogs.resource);
    for (const scopeLogs of objects(resourceLogs, 'scopeLogs', 'scopeLogs')) {
      const records = objects(scopeLogs, 'logRecords', 'logRecords');
      count += records.length;
      if (count > MAX_OTLP_RECORDS) throw tooManyRecords();
      groups.push({ resource, scope: scopeOf(scopeLogs.scope), records });
    }
  }
  return { groups, count, decodeRecord: recordOf };
}
