/**
 * An OTLP logs request read from either encoding, and its turning into a
 * prepared batch: every record is mapped (otlp-mapping.ts) and then judged
 * exactly like an element of a `POST /v1/logs` batch, its index being its
 * position among all the request's records in order.
 */
import { invalidRequest } from '../core/errors.js';
import { MAX_ENTRY_DEPTH } from './entry-validation.js';
import { OtlpRecordError, otlpEntry, type OtlpRecordInput, type OtlpResourceInput, type OtlpScopeInput } from './otlp-mapping.js';
import { BatchPreparer, type BatchTarget, type PreparedBatch } from './prepare-entries.js';

/**
 * The most log records one request may carry (400 beyond, nothing stored).
 * The body limit alone would allow millions of empty records, each costing
 * an object; real exporters send a few hundred to a few thousand.
 */
export const MAX_OTLP_RECORDS = 100_000;

/**
 * The deepest an AnyValue is converted: an entry may nest 100 levels, so a
 * value deeper than that can never be stored, and the record is refused
 * without walking the rest of it.
 */
export const MAX_VALUE_DEPTH = MAX_ENTRY_DEPTH;

export function tooDeep(): OtlpRecordError {
  return new OtlpRecordError(`The entry nests objects and arrays more than ${MAX_ENTRY_DEPTH} levels deep.`);
}

export function tooManyRecords() {
  return invalidRequest(`The request carries more than ${MAX_OTLP_RECORDS} log records.`);
}

/** Records sharing one resource and one scope; a resource or scope that could not be converted refuses all of them. */
export interface OtlpGroup<R> {
  resource: OtlpResourceInput | OtlpRecordError;
  scope: OtlpScopeInput | OtlpRecordError;
  records: R[];
}

export interface OtlpRequest<R> {
  groups: OtlpGroup<R>[];
  /** Records in all groups. */
  count: number;
  /** One record in the plain shape (throws OtlpRecordError to refuse only it, anything else to refuse the request). */
  decodeRecord(record: R): OtlpRecordInput;
}

const YIELD_EVERY = 256;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Maps and prepares every record, yielding to the event loop every few hundred. */
export async function prepareOtlpRequest<R>(request: OtlpRequest<R>, target: BatchTarget): Promise<PreparedBatch> {
  const preparer = new BatchPreparer(target);
  let done = 0;
  for (const group of request.groups) {
    for (const record of group.records) {
      if (group.resource instanceof OtlpRecordError) preparer.reject(group.resource.message);
      else if (group.scope instanceof OtlpRecordError) preparer.reject(group.scope.message);
      else {
        let entry: Record<string, unknown> | null = null;
        try {
          entry = otlpEntry(request.decodeRecord(record), group.scope, group.resource, target.receivedAt);
        } catch (err) {
          if (!(err instanceof OtlpRecordError)) throw err;
          preparer.reject(err.message);
        }
        if (entry !== null) preparer.add(entry);
      }
      if (++done % YIELD_EVERY === 0) await yieldToLoop();
    }
  }
  return preparer.result();
}
