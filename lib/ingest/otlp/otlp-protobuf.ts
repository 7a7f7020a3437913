/**
 * Reads an OTLP `ExportLogsServiceRequest` in protobuf. The outer messages
 * (ResourceLogs, ScopeLogs) are walked by hand so that groups and log
 * records are counted before any is decoded (a request past a bound costs
 * no decoding, and keeps nothing but the positions of its records), and
 * each resource, scope and record is decoded only when its turn comes,
 * after its values were counted, keeping one record's objects alive at a
 * time. Bytes that are not protobuf, or a record that does not decode,
 * refuse the whole request (400); a record nesting more than 100 messages
 * (the decoder's limit, as protoc's), holding too many values, or values
 * deeper than an entry may, is refused alone.
 */
import { LogServiceError, invalidRequest } from '../../core/errors.js';
import { OTLP, ProtoReader } from './otlp-schema.js';
import { OtlpRecordError, tooDeep, type Attributes, type JsonValue, type OtlpRecordInput } from './otlp-mapping.js';
import { MAX_OTLP_RECORD_VALUES, MAX_VALUE_DEPTH, OtlpCounts, tooManyValues, type OtlpGroup, type OtlpRequest } from './otlp-request.js';

const LENGTH_DELIMITED = 2;

interface LongLike {
  low: number;
  high: number;
  toNumber(): number;
  toString(): string;
}

function undecodable(): never {
  throw invalidRequest('The request body is not an OTLP ExportLogsServiceRequest in protobuf.');
}

/** A reader of `raw` from `start`, never reading past `end`. */
function readerOf(raw: Uint8Array, start: number, end: number) {
  const reader = ProtoReader.create(raw);
  reader.pos = start;
  reader.len = end;
  return reader;
}

/** Calls `field` with the number and the position of each length-delimited field of the message in raw[start, end); other fields are skipped. */
function eachField(raw: Uint8Array, start: number, end: number, field: (number: number, start: number, end: number) => void): void {
  const reader = readerOf(raw, start, end);
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag >>> 3 === 0) undecodable();
    if ((tag & 7) !== LENGTH_DELIMITED) {
      reader.skipType(tag & 7);
      continue;
    }
    const length = reader.uint32();
    const from = reader.pos;
    reader.skip(length);
    field(tag >>> 3, from, from + length);
  }
}

// The messages that hold values, and in which fields: what is counted before a record, resource or scope is decoded.
const RECORD = 0;
const RESOURCE = 1;
const SCOPE = 2;
const KEY_VALUE = 3;
const ANY_VALUE = 4;
const ARRAY_VALUE = 5;
const KEY_VALUE_LIST = 6;
const CHILDREN: Record<number, Record<number, number>> = {
  [RECORD]: { 5: ANY_VALUE, 6: KEY_VALUE },
  [RESOURCE]: { 1: KEY_VALUE },
  [SCOPE]: { 3: KEY_VALUE },
  [KEY_VALUE]: { 2: ANY_VALUE },
  [ANY_VALUE]: { 5: ARRAY_VALUE, 6: KEY_VALUE_LIST },
  [ARRAY_VALUE]: { 1: ANY_VALUE },
  [KEY_VALUE_LIST]: { 1: KEY_VALUE },
};

function tooDeepMessages(): OtlpRecordError {
  return new OtlpRecordError('The record nests messages more than 100 levels deep.');
}

/**
 * Counts the KeyValue and AnyValue messages of the message `kind` in
 * raw[start, end) without decoding any, with a stack of its own: refuses
 * (OtlpRecordError) past MAX_OTLP_RECORD_VALUES or the decoder's nesting
 * limit, so that decoding it next builds a bounded number of objects.
 */
function countValues(raw: Uint8Array, start: number, end: number, kind: number): void {
  const reader = readerOf(raw, start, end);
  const stack = [{ end, kind }];
  let values = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (reader.pos >= top.end) {
      if (reader.pos > top.end) undecodable();
      stack.pop();
      continue;
    }
    const tag = reader.uint32();
    const child = CHILDREN[top.kind]![tag >>> 3];
    if (tag >>> 3 === 0) undecodable();
    if ((tag & 7) !== LENGTH_DELIMITED || child === undefined) {
      reader.skipType(tag & 7);
      continue;
    }
    const length = reader.uint32();
    if (reader.pos + length > top.end) undecodable();
    if ((child === KEY_VALUE || child === ANY_VALUE) && ++values > MAX_OTLP_RECORD_VALUES) throw tooManyValues();
    // The decoder counts the record itself as depth 0 and stops past ProtoReader.recursionLimit.
    if (stack.length > ProtoReader.recursionLimit) throw tooDeepMessages();
    stack.push({ end: reader.pos + length, kind: child });
  }
}

/** Epoch milliseconds of an unsigned fixed64 count of nanoseconds, exactly; null for 0. */
export function nanosToMillis(value: LongLike | number): number | null {
  if (typeof value === 'number') return value === 0 ? null : Math.floor(value / 1e6);
  const high = value.high >>> 0;
  const low = value.low >>> 0;
  if (high === 0 && low === 0) return null;
  // high·2^32 = high·4294·10^6 + high·967296: each part stays exact in a double.
  return high * 4294 + Math.floor((high * 967296 + low) / 1e6);
}

function int64Value(value: LongLike | number): number | string {
  if (typeof value === 'number') return value;
  // |high| < 2^21 ⇔ the value is a safe integer.
  return value.high >= -0x200000 && value.high < 0x200000 ? value.toNumber() : value.toString();
}

function hex(bytes: Uint8Array | undefined | null): string {
  return bytes && bytes.length > 0 ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex') : '';
}

// biome-ignore lint/suspicious/noExplicitAny: protobufjs decodes to untyped objects; each field is checked where it is read.
type Decoded = Record<string, any>;

function anyValue(value: Decoded | null | undefined, depth: number): JsonValue {
  if (value === null || value === undefined) return null;
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  switch (value.value as string | undefined) {
    case 'stringValue':
      return value.stringValue as string;
    case 'boolValue':
      return value.boolValue as boolean;
    case 'intValue':
      return int64Value(value.intValue);
    case 'doubleValue': {
      const n = value.doubleValue as number;
      return Number.isFinite(n) ? n : String(n);
    }
    case 'bytesValue':
      return Buffer.from(value.bytesValue as Uint8Array).toString('base64');
    case 'arrayValue':
      return ((value.arrayValue?.values ?? []) as Decoded[]).map((v) => anyValue(v, depth + 1));
    case 'kvlistValue': {
      const out = Object.create(null) as Record<string, JsonValue>;
      for (const kv of (value.kvlistValue?.values ?? []) as Decoded[]) out[kv.key as string] = anyValue(kv.value, depth + 1);
      return out;
    }
    default:
      return null;
  }
}

function attributes(list: Decoded[] | undefined): Attributes {
  if (!list || list.length === 0) return [];
  return list.map((kv) => [kv.key as string, anyValue(kv.value, 2)]);
}

/** Counts, then decodes, the message `kind` at raw[start, end). */
function decode<T>(
  type: { decode(reader: ReturnType<typeof readerOf>, length: number): unknown },
  raw: Uint8Array,
  start: number,
  end: number,
  kind: number,
): T {
  try {
    countValues(raw, start, end, kind);
    return type.decode(readerOf(raw, start, end), end - start) as T;
  } catch (err) {
    if (err instanceof OtlpRecordError || err instanceof LogServiceError) throw err;
    // The decoder stops at 100 nested messages, as protoc does (and skipping an old-style group can reach it): only this record (or group) is refused.
    if (err instanceof Error && err.message === 'max depth exceeded') throw tooDeepMessages();
    return undecodable();
  }
}

function recordOf(r: Decoded): OtlpRecordInput {
  return {
    timeMs: nanosToMillis(r.timeUnixNano),
    observedTimeMs: nanosToMillis(r.observedTimeUnixNano),
    severityNumber: r.severityNumber ?? 0,
    severityText: r.severityText ?? '',
    body: r.body ? anyValue(r.body, 2) : undefined,
    attributes: attributes(r.attributes),
    droppedAttributesCount: r.droppedAttributesCount ?? 0,
    flags: r.flags ?? 0,
    traceId: hex(r.traceId),
    spanId: hex(r.spanId),
    eventName: r.eventName ?? '',
  };
}

/**
 * The request's groups and the positions of its records; 400 when the
 * outer messages are not protobuf, or hold more groups or records than
 * allowed.
 */
export function readProtobufRequest(raw: Uint8Array): OtlpRequest {
  const counts = new OtlpCounts();
  const groups: OtlpGroup[] = [];
  // [start, end) pairs, -1 when absent: each ResourceLogs' resource, each group's scope, each record.
  const resources: number[] = [];
  const scopes: number[] = [];
  const records: number[] = [];
  try {
    eachField(raw, 0, raw.length, (field, start, end) => {
      if (field !== 1) return;
      counts.addGroup();
      const resourceLogs = resources.length / 2;
      resources.push(-1, -1);
      eachField(raw, start, end, (field, start, end) => {
        // A message field sent twice: the decoder keeps the last one, and so does this.
        if (field === 1) resources.splice(resourceLogs * 2, 2, start, end);
        if (field !== 2) return;
        counts.addGroup();
        const group: OtlpGroup = { resourceLogs, first: records.length / 2, count: 0 };
        const scopeAt = scopes.length;
        scopes.push(-1, -1);
        eachField(raw, start, end, (field, start, end) => {
          if (field === 1) scopes.splice(scopeAt, 2, start, end);
          else if (field === 2) {
            counts.addRecord();
            records.push(start, end);
            group.count++;
          }
        });
        groups.push(group);
      });
    });
  } catch (err) {
    if (err instanceof LogServiceError) throw err;
    undecodable();
  }
  return {
    bodyBytes: raw.length,
    groups,
    count: counts.records,
    resource(at) {
      const start = resources[at * 2]!;
      if (start < 0) return { attributes: [], droppedAttributesCount: 0 };
      const resource = decode<Decoded>(OTLP.Resource, raw, start, resources[at * 2 + 1]!, RESOURCE);
      return { attributes: attributes(resource.attributes), droppedAttributesCount: resource.droppedAttributesCount ?? 0 };
    },
    scope(at) {
      const start = scopes[at * 2]!;
      if (start < 0) return { name: '', version: '', attributes: [], droppedAttributesCount: 0 };
      const scope = decode<Decoded>(OTLP.InstrumentationScope, raw, start, scopes[at * 2 + 1]!, SCOPE);
      return {
        name: scope.name ?? '',
        version: scope.version ?? '',
        attributes: attributes(scope.attributes),
        droppedAttributesCount: scope.droppedAttributesCount ?? 0,
      };
    },
    record(index) {
      return recordOf(decode<Decoded>(OTLP.LogRecord, raw, records[index * 2]!, records[index * 2 + 1]!, RECORD));
    },
  };
}
