/**
 * An OTLP logs request read from either encoding, and its turning into a
 * prepared batch: every record is mapped (otlp-mapping.ts) and then judged
 * exactly like an element of a `POST /v1/logs` batch, its index being its
 * position among all the request's records in order.
 *
 * What one request may cost is bounded by its own size: the readers count
 * records, groups and the values of each record before building them, and
 * the entries one export stores are held to a multiple of its decoded body.
 */
import { invalidRequest } from '../../core/errors.js';
import { MAX_ENTRY_DEPTH } from '../entry-validation.js';
import {
  OtlpRecordError,
  otlpEntry,
  otlpResourcePart,
  otlpShared,
  type OtlpRecordInput,
  type OtlpResourceInput,
  type OtlpResourcePart,
  type OtlpScopeInput,
  type OtlpShared,
} from './otlp-mapping.js';
import { BatchBuilder, entryFromValue, type BatchTarget, type PreparedBatch } from '../prepared-batch.js';
import { YieldPacer } from '../yield-pacer.js';

/**
 * The most log records one request may carry (400 beyond, nothing stored).
 * The body limit alone would allow millions of empty records, each costing
 * an object; real exporters send a few hundred to a few thousand.
 */
export const MAX_OTLP_RECORDS = 100_000;

/**
 * The most ResourceLogs and ScopeLogs, together, one request may carry
 * (400 beyond, counted before any is decoded). An empty one is two bytes
 * in protobuf, so the body limit alone would allow millions, each costing
 * a resource and a scope to convert. Real exports carry one per resource
 * and instrumentation scope: a handful, or one or two per record at the
 * very most.
 */
export const MAX_OTLP_GROUPS = MAX_OTLP_RECORDS;

/**
 * The most values one record, resource or scope may hold: JSON values in
 * OTLP/JSON, KeyValue and AnyValue messages in protobuf. Counted before the
 * record is decoded; past it only that record (or that group's records) is
 * refused. Decoding builds one object per value, and a 10 MiB body could
 * otherwise hold millions in one attribute list; SDKs keep 128 attributes
 * per record by default.
 */
export const MAX_OTLP_RECORD_VALUES = 100_000;

/**
 * The entries one export may store: this many bytes of entries per byte
 * of its decoded body, plus OTLP_STORED_BYTES_BASE. Resource and scope
 * attributes are sent once per group and copied into every entry of it,
 * so ordinary protobuf exports legitimately store several times their size
 * (docs/measurements.md, "OTLP"); without a bound, one megabyte of
 * resource attribute over a hundred empty records stored 100 MiB.
 */
export const OTLP_STORED_BYTES_PER_BODY_BYTE = 16;

/**
 * Stored bytes every export may use whatever its size: with it, an SDK's
 * default batch (512 records, each with its timestamps) under a resource
 * of up to 1 KiB always fits, whatever its records say.
 */
export const OTLP_STORED_BYTES_BASE = 512 * 1024;

/** The most bytes of entries an export whose decoded body is `bodyBytes` long may store. */
export function storedBytesBudget(bodyBytes: number): number {
  return OTLP_STORED_BYTES_PER_BODY_BYTE * bodyBytes + OTLP_STORED_BYTES_BASE;
}

/** The deepest an AnyValue is converted: an entry may nest 100 levels, so a deeper value can never be stored. */
export const MAX_VALUE_DEPTH = MAX_ENTRY_DEPTH;

function tooManyRecords() {
  return invalidRequest(`The request carries more than ${MAX_OTLP_RECORDS} log records.`);
}

function tooManyGroups() {
  return invalidRequest(`The request carries more than ${MAX_OTLP_GROUPS} ResourceLogs and ScopeLogs.`);
}

export function tooManyValues(): OtlpRecordError {
  return new OtlpRecordError(`The record holds more than ${MAX_OTLP_RECORD_VALUES} values.`);
}

/** Counts groups and records as a reader finds them, refusing the request (400) at once past either bound. */
export class OtlpCounts {
  groups = 0;
  records = 0;

  addGroup(): void {
    if (++this.groups > MAX_OTLP_GROUPS) throw tooManyGroups();
  }

  addRecord(): void {
    if (++this.records > MAX_OTLP_RECORDS) throw tooManyRecords();
  }
}

/** Records sharing one resource and one scope: the records `first` … `first + count − 1` of the request. */
export interface OtlpGroup {
  /** Its ResourceLogs, by position (the groups of one ResourceLogs follow each other). */
  resourceLogs: number;
  first: number;
  count: number;
}

/**
 * A request whose outer structure has been read and counted; its
 * resources, scopes and records are still encoded and are converted one at
 * a time. Each conversion throws OtlpRecordError to refuse only its record
 * (or its group's records), anything else to refuse the request.
 */
export interface OtlpRequest {
  /** The decoded body's size, which the stored bytes are bounded by. */
  bodyBytes: number;
  groups: OtlpGroup[];
  /** Records in all groups. */
  count: number;
  resource(resourceLogs: number): OtlpResourceInput;
  scope(group: number): OtlpScopeInput;
  record(index: number): OtlpRecordInput;
}

function convert<T>(conversion: () => T): T | OtlpRecordError {
  try {
    return conversion();
  } catch (err) {
    if (err instanceof OtlpRecordError) return err;
    throw err;
  }
}

function overBudget(request: OtlpRequest, budget: number): string {
  return (
    `The export would store more than ${budget} bytes of entries (${OTLP_STORED_BYTES_PER_BODY_BYTE} × its ${request.bodyBytes} bytes + ${OTLP_STORED_BYTES_BASE}): ` +
    'its resource and scope attributes are copied into every entry. Send fewer records per export, or smaller resource attributes.'
  );
}

/**
 * Maps and prepares every record, yielding to the event loop as
 * yield-pacer.ts says: a record or group costs anything from a microsecond
 * (an empty one) to tens of milliseconds (a megabyte of resource copied
 * into its entry), so the clock guards every slice. Records are taken in order against the
 * stored-bytes budget: the first whose entry would pass it, and every one
 * after it, are refused (as a quota cuts a batch).
 */
export async function batchFromOtlp(request: OtlpRequest, target: BatchTarget): Promise<PreparedBatch> {
  const builder = new BatchBuilder(target);
  const budget = storedBytesBudget(request.bodyBytes);
  let stored = 0;
  let spent: string | null = null;
  const pacer = new YieldPacer();
  let resourceAt = -1;
  let resource: OtlpResourcePart | OtlpRecordError = new OtlpRecordError('');
  for (let g = 0; g < request.groups.length; g++) {
    const group = request.groups[g]!;
    if (group.resourceLogs !== resourceAt) {
      resourceAt = group.resourceLogs;
      // Once per resource: its part of the entries is shared by all its scopes and records.
      resource = convert(() => otlpResourcePart(request.resource(resourceAt)));
    }
    // An empty group costs nothing more; a group past the budget is refused before its scope is read, so
    // thousands of scopes under one large resource cost nothing but their records' refusals.
    if (group.count === 0) {
      if (pacer.due(0)) await pacer.pause();
      continue;
    }
    if (!(resource instanceof OtlpRecordError) && spent === null && stored + resource.bytes > budget) spent = overBudget(request, budget);
    let shared: OtlpShared | OtlpRecordError | null = resource instanceof OtlpRecordError ? resource : null;
    if (shared === null && spent === null) {
      const scope = convert(() => request.scope(g));
      // A resource or scope that could not be converted refuses all the group's records.
      shared = scope instanceof OtlpRecordError ? scope : otlpShared(scope, resource as OtlpResourcePart);
    }
    for (let i = group.first; i < group.first + group.count; i++) {
      const storedBefore = stored;
      if (shared instanceof OtlpRecordError) builder.reject(shared.message);
      else if (spent !== null || shared === null || stored + shared.bytes > budget) builder.reject((spent ??= overBudget(request, budget)));
      else {
        const entry = convert(() => otlpEntry(request.record(i), shared, target.receivedAt));
        if (entry instanceof OtlpRecordError) builder.reject(entry.message);
        else {
          const prepared = entryFromValue(entry);
          if ('rejected' in prepared) {
            // Stores nothing, but building it cost its shared part: counted, so refused records cannot repeat a large resource for ever.
            stored += shared.bytes;
            builder.addPrepared(prepared);
          } else if (stored + prepared.bytes > budget) builder.reject((spent = overBudget(request, budget)));
          else {
            // Its stored text's size, as quotas count it.
            stored += prepared.bytes;
            builder.addPrepared(prepared);
          }
        }
      }
      // The record's work grows with the text it made (its resource copied in): counted as bytes too.
      if (pacer.due(stored - storedBefore)) await pacer.pause();
    }
    if (pacer.due(0)) await pacer.pause();
  }
  return builder.result();
}
