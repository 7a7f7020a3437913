/**
 * Reads an OTLP `ExportLogsServiceRequest` in OTLP/JSON: protobuf's JSON
 * mapping with lowerCamelCase keys, trace and span ids as hex, 64-bit
 * integers as decimal strings or numbers, enums as numbers. A body that is
 * not JSON, or whose outer shape (resourceLogs → scopeLogs → logRecords) is
 * not arrays of objects, refuses the request (400); a record with a field
 * of the wrong type is refused alone, in partial_success.
 *
 * The body is never parsed whole: its outer shape is walked byte by byte
 * (otlp-json-scan.ts), checking all of it and counting groups, records and
 * each record's values, and each resource, scope and record is parsed on
 * its own when its turn comes. A duplicated key counts as JSON.parse would
 * take it: the last one.
 */
import { invalidRequest } from '../../core/errors.js';
import {
  OtlpRecordError,
  tooDeep,
  type Attributes,
  type JsonValue,
  type OtlpRecordInput,
  type OtlpResourceInput,
  type OtlpScopeInput,
} from './otlp-mapping.js';
import { JsonText, malformedJson } from './otlp-json-scan.js';
import { MAX_OTLP_RECORD_VALUES, MAX_VALUE_DEPTH, OtlpCounts, tooManyValues, type OtlpGroup, type OtlpRequest } from './otlp-request.js';

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function badShape(where: string): never {
  throw invalidRequest(`The request body is not an OTLP ExportLogsServiceRequest in JSON: ${where}.`);
}

function field(record: Obj, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function wrongType(key: string, expected: string): OtlpRecordError {
  return new OtlpRecordError(`'${key}' must be ${expected}.`);
}

const DECIMAL = /^[0-9]{1,20}$/;
/** The largest fixed64, as the decimal text of a 20-digit string to compare with. */
const MAX_UINT64_TEXT = '18446744073709551615';
const TWO_TO_64 = 2 ** 64;

/**
 * Epoch milliseconds of a count of nanoseconds sent as a decimal string or
 * a number; null for 0 or absent. The field is a fixed64, as in protobuf:
 * a count past 2^64 − 1 (or a negative one) is the wrong type, so both
 * encodings accept the same times (at most year 2554, always a valid entry
 * timestamp).
 */
export function jsonNanosToMillis(value: unknown, key: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && value >= 0 && value < TWO_TO_64) return value === 0 ? null : Math.floor(value / 1e6);
  if (typeof value === 'string' && DECIMAL.test(value) && (value.length < 20 || value <= MAX_UINT64_TEXT)) {
    // The digits above the last six are the milliseconds, exactly.
    const ms = value.length > 6 ? Number(value.slice(0, -6)) : 0;
    return ms === 0 && /^0*$/.test(value) ? null : ms;
  }
  throw wrongType(key, `a count of nanoseconds from 0 to ${MAX_UINT64_TEXT} (a decimal string or a number)`);
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

const SEVERITY_NAMES = [
  'UNSPECIFIED',
  'TRACE',
  'TRACE2',
  'TRACE3',
  'TRACE4',
  'DEBUG',
  'DEBUG2',
  'DEBUG3',
  'DEBUG4',
  'INFO',
  'INFO2',
  'INFO3',
  'INFO4',
  'WARN',
  'WARN2',
  'WARN3',
  'WARN4',
  'ERROR',
  'ERROR2',
  'ERROR3',
  'ERROR4',
  'FATAL',
  'FATAL2',
  'FATAL3',
  'FATAL4',
];

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

function resourceOf(resource: unknown): OtlpResourceInput {
  if (!isObject(resource)) return { attributes: [], droppedAttributesCount: 0 };
  return { attributes: keyValues(resource.attributes, 2), droppedAttributesCount: uint(resource.droppedAttributesCount, 'droppedAttributesCount') };
}

function scopeOf(scope: unknown): OtlpScopeInput {
  if (!isObject(scope)) return { name: '', version: '', attributes: [], droppedAttributesCount: 0 };
  return {
    name: text(scope.name, 'scope.name'),
    version: text(scope.version, 'scope.version'),
    attributes: keyValues(scope.attributes, 2),
    droppedAttributesCount: uint(scope.droppedAttributesCount, 'droppedAttributesCount'),
  };
}

function recordOf(value: unknown): OtlpRecordInput {
  const r = value as Obj;
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

/** Where one value of the body is, and how many values it holds. */
interface Span {
  start: number;
  end: number;
  values: number;
}

const ABSENT: Span = { start: -1, end: -1, values: 0 };

/**
 * Walks the body once: checks it is JSON, finds the outer shape and counts
 * it (400 past a bound), and notes where each resource, scope and record
 * is, with the values each holds.
 */
class ExportShape {
  readonly counts = new OtlpCounts();
  readonly groups: OtlpGroup[] = [];
  readonly resources: Span[] = [];
  readonly scopes: Span[] = [];
  readonly records: Span[] = [];

  constructor(private readonly text: JsonText) {}

  read(): void {
    const { text } = this;
    const start = text.space(0);
    if (text.kind(start) !== 'object') {
      this.end(text.value(start));
      badShape('the body must be a JSON object');
    }
    this.end(
      text.members(start, (key, at) =>
        key === 'resourceLogs'
          ? this.list(
              at,
              'resourceLogs',
              (at) => this.resourceLogs(at),
              () => this.reset(),
            )
          : text.value(at),
      ),
    );
  }

  private end(at: number): void {
    if (this.text.space(at) !== this.text.raw.length) throw malformedJson();
  }

  /** `resourceLogs` found again: JSON.parse would keep only the last one. */
  private reset(): void {
    this.counts.groups = 0;
    this.counts.records = 0;
    this.groups.length = 0;
    this.resources.length = 0;
    this.scopes.length = 0;
    this.records.length = 0;
  }

  /** An array of objects (or null) at `at`: `element` reads each object. `restart` runs first, for a key seen before. */
  private list(at: number, where: string, element: (at: number) => number, restart: () => void): number {
    restart();
    const kind = this.text.kind(at);
    if (kind === 'null') return this.text.value(at);
    if (kind !== 'array') return this.wrongShape(at, where);
    return this.text.elements(at, (at) => (this.text.kind(at) === 'object' ? element(at) : this.wrongShape(at, where)));
  }

  /** A value of the wrong shape: 400, unless the body is not even JSON further on (then that is said). */
  private wrongShape(at: number, where: string): never {
    this.text.value(at);
    badShape(`'${where}' must be an array of objects`);
  }

  private span(at: number): Span {
    this.text.values = 0;
    const end = this.text.value(at);
    return { start: at, end, values: this.text.values };
  }

  private resourceLogs(at: number): number {
    this.counts.addGroup();
    const resourceLogs = this.resources.length;
    this.resources.push(ABSENT);
    const firstGroup = this.groups.length;
    return this.text.members(at, (key, at) => {
      if (key === 'resource') {
        this.resources[resourceLogs] = this.span(at);
        return this.resources[resourceLogs]!.end;
      }
      if (key !== 'scopeLogs') return this.text.value(at);
      return this.list(
        at,
        'scopeLogs',
        (at) => this.scopeLogs(at, resourceLogs),
        () => this.dropGroupsFrom(firstGroup),
      );
    });
  }

  private dropGroupsFrom(first: number): void {
    const dropped = this.groups.length - first;
    if (dropped === 0) return;
    this.counts.groups -= dropped;
    this.dropRecordsFrom(this.groups[first]!.first);
    this.groups.length = first;
    this.scopes.length = first;
  }

  private dropRecordsFrom(first: number): void {
    this.counts.records -= this.records.length - first;
    this.records.length = first;
  }

  private scopeLogs(at: number, resourceLogs: number): number {
    this.counts.addGroup();
    const group: OtlpGroup = { resourceLogs, first: this.records.length, count: 0 };
    const scopeAt = this.scopes.length;
    this.groups.push(group);
    this.scopes.push(ABSENT);
    return this.text.members(at, (key, at) => {
      if (key === 'scope') {
        this.scopes[scopeAt] = this.span(at);
        return this.scopes[scopeAt]!.end;
      }
      if (key !== 'logRecords') return this.text.value(at);
      const restart = () => {
        this.dropRecordsFrom(group.first);
        group.count = 0;
      };
      return this.list(at, 'logRecords', (at) => this.record(at, group), restart);
    });
  }

  private record(at: number, group: OtlpGroup): number {
    this.counts.addRecord();
    const span = this.span(at);
    this.records.push(span);
    group.count++;
    return span.end;
  }
}

/** The value at `span`, parsed, once its values are known to be few enough to build. */
function parsed(text: JsonText, span: Span): unknown {
  if (span.values > MAX_OTLP_RECORD_VALUES) throw tooManyValues();
  return text.parse(span.start, span.end);
}

/** The request's groups and where its records are; 400 when the body is not JSON, its outer shape is wrong, or it holds more groups or records than allowed. */
export function readJsonRequest(raw: Buffer): OtlpRequest {
  const text = new JsonText(raw);
  const shape = new ExportShape(text);
  shape.read();
  return {
    bodyBytes: raw.length,
    groups: shape.groups,
    count: shape.counts.records,
    resource: (at) => (shape.resources[at]!.start < 0 ? resourceOf(undefined) : resourceOf(parsed(text, shape.resources[at]!))),
    scope: (at) => (shape.scopes[at]!.start < 0 ? scopeOf(undefined) : scopeOf(parsed(text, shape.scopes[at]!))),
    record: (index) => recordOf(parsed(text, shape.records[index]!)),
  };
}
