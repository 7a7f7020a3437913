/**
 * Prepared entries and batches made from values in memory, for tests that
 * write to storage directly or need a reference batch. Built on what
 * ingestion itself uses (`entryFromValue`, `BatchBuilder`), so a test's
 * entries are exactly the ones a request would store.
 */
import { BatchBuilder, entryFromValue, type BatchTarget, type PreparedBatch, type Rejection } from '../../lib/ingest/prepared-batch.js';
import type { PreparedEntry } from '../../lib/storage/types-logs.js';

/** Validates, prepares and encodes every value, as a request's body would be. */
export function batchFromValues(values: readonly unknown[], target: BatchTarget): PreparedBatch {
  const builder = new BatchBuilder(target);
  for (const value of values) builder.add(value);
  return builder.result();
}

/** Validates and prepares every value, without encoding (for requests made by hand with `encodeRequest`). */
export function entriesFromValues(values: readonly unknown[]): { entries: PreparedEntry[]; positions: number[]; rejected: Rejection[] } {
  const out = { entries: [] as PreparedEntry[], positions: [] as number[], rejected: [] as Rejection[] };
  values.forEach((value, index) => {
    const entry = entryFromValue(value);
    if ('rejected' in entry) out.rejected.push({ index, error: 'validation_error', message: entry.rejected });
    else {
      out.entries.push(entry);
      out.positions.push(index);
    }
  });
  return out;
}
