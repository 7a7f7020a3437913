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

/**
 * The most bytes an entry's distinct terms may add up to. PostgreSQL refuses
 * a tsvector whose lexemes exceed 1 MiB (and would fail the whole commit),
 * so both backends refuse such an entry the same way: it takes far more
 * than a megabyte of distinct words to get there.
 */
export const MAX_TERM_BYTES = 1_000_000;

/** Collects a batch's entries one element at a time, in order. */
export class BatchPreparer {
  private readonly batch: PreparedBatch = { entries: [], positions: [], rejected: [] };
  private index = 0;

  /** Validates (D21, then the term budget) and prepares the next element. */
  add(value: unknown): void {
    const index = this.index++;
    const checked = validateEntry(value);
    if (!checked.ok) {
      this.batch.rejected.push({ index, error: 'validation_error', message: checked.message });
      return;
    }
    // The stored text is the parsed object's compact JSON (D21); its UTF-8
    // length is the entry's size for quotas (D23).
    const body = JSON.stringify(checked.entry);
    const bytes = Buffer.byteLength(body, 'utf8');
    const terms = entryTerms(checked.entry).join(' ');
    // Each leaf adds at most a 26-byte exact term plus its words, so a body
    // under an eighth of the budget cannot exceed it: skip the count then.
    if (bytes > MAX_TERM_BYTES / 8 && Buffer.byteLength(terms, 'utf8') > MAX_TERM_BYTES) {
      this.batch.rejected.push({ index, error: 'validation_error', message: `The entry has too many distinct words to index (over ${MAX_TERM_BYTES} bytes of search terms).` });
      return;
    }
    this.batch.entries.push({ body, bytes, level: checked.level, timestamp: checked.timestamp, terms });
    this.batch.positions.push(index);
  }

  result(): PreparedBatch {
    return this.batch;
  }
}

/** Validates and prepares every element of a batch. */
export function prepareBatch(values: readonly unknown[]): PreparedBatch {
  const preparer = new BatchPreparer();
  for (const value of values) preparer.add(value);
  return preparer.result();
}
