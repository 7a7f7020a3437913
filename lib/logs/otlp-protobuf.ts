/**
 * Reads an OTLP `ExportLogsServiceRequest` in protobuf. The outer messages
 * (ResourceLogs, ScopeLogs) are walked by hand so that log records are
 * counted before any is decoded (a request past the record limit costs no
 * decoding) and each record is decoded only when its turn comes, keeping
 * one record's objects alive at a time. Bytes that are not protobuf, or a
 * record that does not decode, refuse the whole request (400); a record
 * nesting more than 100 messages (the decoder's limit, as protoc's) or
 * values deeper than an entry may is refused alone.
 */
import { LogServiceError, invalidRequest } from '../core/errors.js';
import { OTLP, ProtoReader } from './otlp-schema.js';
import { OtlpRecordError, convertOrRefuse, type Attributes, type JsonValue, type OtlpRecordInput, type OtlpResourceInput, type OtlpScopeInput } from './otlp-mapping.js';
import type { OtlpGroup, OtlpRequest } from './otlp-request.js';
import { MAX_OTLP_RECORDS, MAX_VALUE_DEPTH, tooDeep, tooManyRecords } from './otlp-request.js';

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

/** The length-delimited fields `fields` of one message, by field number; other fields are skipped. */
function fieldsOf(bytes: Uint8Array, wanted: readonly number[]): Map<number, Uint8Array[]> {
  const out = new Map<number, Uint8Array[]>();
  const reader = ProtoReader.create(bytes);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    if (field === 0) undecodable();
    if ((tag & 7) === LENGTH_DELIMITED && wanted.includes(field)) {
      const list = out.get(field);
      const value = reader.bytes();
      if (list === undefined) out.set(field, [value]);
      else list.push(value);
    } else reader.skipType(tag & 7);
  }
  return out;
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

function decode<T>(type: { decode(bytes: Uint8Array): unknown }, bytes: Uint8Array): T {
  try {
    return type.decode(bytes) as T;
  } catch (err) {
    // The decoder stops at 100 nested messages, as protoc does: only this record (or group) is refused.
    if (err instanceof Error && err.message === 'max depth exceeded') throw tooDeepMessages();
    return undecodable();
  }
}

function tooDeepMessages(): OtlpRecordError {
  return new OtlpRecordError('The record nests messages more than 100 levels deep.');
}

function resourceOf(parts: Uint8Array[] | undefined): OtlpResourceInput | OtlpRecordError {
  if (!parts) return { attributes: [], droppedAttributesCount: 0 };
  return convertOrRefuse(() => {
    const resource = decode<Decoded>(OTLP.Resource, parts[parts.length - 1]!);
    return { attributes: attributes(resource.attributes), droppedAttributesCount: resource.droppedAttributesCount ?? 0 };
  });
}

function scopeOf(parts: Uint8Array[] | undefined): OtlpScopeInput | OtlpRecordError {
  if (!parts) return { name: '', version: '', attributes: [], droppedAttributesCount: 0 };
  return convertOrRefuse(() => {
    const scope = decode<Decoded>(OTLP.InstrumentationScope, parts[parts.length - 1]!);
    return { name: scope.name ?? '', version: scope.version ?? '', attributes: attributes(scope.attributes), droppedAttributesCount: scope.droppedAttributesCount ?? 0 };
  });
}

function recordOf(bytes: Uint8Array): OtlpRecordInput {
  const r = decode<Decoded>(OTLP.LogRecord, bytes);
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

/** The request's groups of records, still encoded; 400 when the outer messages are not protobuf or hold too many records. */
export function readProtobufRequest(raw: Uint8Array): OtlpRequest<Uint8Array> {
  const groups: OtlpGroup<Uint8Array>[] = [];
  let count = 0;
  try {
    for (const resourceLogs of fieldsOf(raw, [1]).get(1) ?? []) {
      const parts = fieldsOf(resourceLogs, [1, 2]);
      const resource = resourceOf(parts.get(1));
      for (const scopeLogs of parts.get(2) ?? []) {
        const scopeParts = fieldsOf(scopeLogs, [1, 2]);
        const records = scopeParts.get(2) ?? [];
        count += records.length;
        if (count > MAX_OTLP_RECORDS) throw tooManyRecords();
        groups.push({ resource, scope: scopeOf(scopeParts.get(1)), records });
      }
    }
  } catch (err) {
    if (err instanceof LogServiceError) throw err;
    undecodable();
  }
  return { groups, count, decodeRecord: recordOf };
}
