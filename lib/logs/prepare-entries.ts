/**
 * A submitted batch turned into what storage needs: each valid entry
 * serialised once (compact JSON, key order kept), sized (D23) and indexed
 * (search terms), each invalid one turned into its `validation_error`.
 */
import type { PreparedEntry } from '../storage/storage.js';
import { validateEntry } from './entry-validation.js';
import { entryTerms } from './search-terms.js';

/** One `rejected[]` item of an IngestionResponse. */
export interface Rejection {
  index: number;
  error: 'validation_error' | 'quota_exceeded';
  message: string;
}

export interface PreparedBatch {
  /** The valid entries, in submitted order. */
  entries: PreparedEntry[];
  /** `positions[i]` is the submitted index of `entries[i]`. */
  positions: number[];
  /** Validation rejections, by ascending index. */
  rejected: Rejection[];
}

/** Validates and prepares every element of a batch (D21). */
export function prepareBatch(values: readonly unknown[]): PreparedBatch {
  const entries: PreparedEntry[] = [];
  const positions: number[] = [];
  const rejected: Rejection[] = [];
  for (let index = 0; index < values.length; index++) {
    const checked = validateEntry(values[index]);
    if (!checked.ok) {
      rejected.push({ index, error: 'validation_error', message: checked.message });
      continue;
    }
    // The stored text is the parsed object's compact JSON (D21); its UTF-8
    // length is the entry's size for quotas (D23).
    const body = JSON.stringify(checked.entry);
    entries.push({
      body,
      bytes: Buffer.byteLength(body, 'utf8'),
      level: checked.level,
      timestamp: checked.timestamp,
      terms: entryTerms(checked.entry),
    });
    positions.push(index);
  }
  return { entries, positions, rejected };
}
