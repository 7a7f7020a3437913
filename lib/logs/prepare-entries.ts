/**
 * A submitted batch turned into what storage needs: each valid entry
 * serialised once (compact JSON, key order kept), sized for quotas, indexed
 * (search terms) and encoded for the write (storage/encoded-entries.ts),
 * each invalid one turned into its `validation_error`.
 */
import type { LogIngestRequest, PreparedEntry } from '../storage/types-logs.js';
import { RequestEncoder } from '../storage/encoded-entries.js';
import { validateEntry } from './entry-validation.js';
import { entryTerms } from '../search/search-terms.js';

/** One `rejected[]` item of an IngestionResponse. */
export interface Rejection {
  index: number;
  error: 'validation_error' | 'quota_exceeded';
  message: string;
}

/** Where a batch's entries go, and when it arrived: part of what is encoded. */
export interface BatchTarget {
  projectId: number;
  receivedAt: number;
}

export interface PreparedBatch {
  /** The valid entries, in submitted order, encoded for storage. */
  request: LogIngestRequest;
  /** `positions[i]` is the submitted index of valid entry `i`. */
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

/** Validates (entry rules, then the term budget) and prepares one submitted element: the entry, or its rejection message. */
export function prepareEntry(value: unknown): PreparedEntry | { rejected: string } {
  const checked = validateEntry(value);
  if (!checked.ok) return { rejected: checked.message };
  // The stored text is the parsed object's compact JSON; its UTF-8
  // length is the entry's size for quotas.
  const body = JSON.stringify(checked.entry);
  const bytes = Buffer.byteLength(body, 'utf8');
  const terms = entryTerms(checked.entry).join(' ');
  // Each leaf adds at most a 26-byte exact term plus its words, so a body
  // under an eighth of the budget cannot exceed it: skip the count then.
  if (bytes > MAX_TERM_BYTES / 8 && Buffer.byteLength(terms, 'utf8') > MAX_TERM_BYTES) {
    return { rejected: `The entry has too many distinct words to index (over ${MAX_TERM_BYTES} bytes of search terms).` };
  }
  return { body, bytes, level: checked.level, timestamp: checked.timestamp, terms };
}

/** Collects a batch's entries one element at a time, in order, encoding them as they come. */
export class BatchPreparer {
  private readonly encoder: RequestEncoder;
  private readonly positions: number[] = [];
  private readonly rejected: Rejection[] = [];
  private index = 0;

  constructor(target: BatchTarget) {
    this.encoder = new RequestEncoder(target.projectId, target.receivedAt);
  }

  add(value: unknown): void {
    const index = this.index++;
    const entry = prepareEntry(value);
    if ('rejected' in entry) {
      this.rejected.push({ index, error: 'validation_error', message: entry.rejected });
      return;
    }
    this.encoder.add(entry);
    this.positions.push(index);
  }

  /** Takes the next index for an element that could not even be read (an NDJSON line that is not JSON). */
  reject(message: string): void {
    this.rejected.push({ index: this.index++, error: 'validation_error', message });
  }

  result(): PreparedBatch {
    return { request: this.encoder.finish(), positions: this.positions, rejected: this.rejected };
  }
}

/** Validates, prepares and encodes every element of a batch. */
export function prepareBatch(values: readonly unknown[], target: BatchTarget): PreparedBatch {
  const preparer = new BatchPreparer(target);
  for (const value of values) preparer.add(value);
  return preparer.result();
}

/** Validates and prepares every element, without encoding (tests, and requests made by hand with `encodeRequest`). */
export function prepareEntries(values: readonly unknown[]): { entries: PreparedEntry[]; positions: number[]; rejected: Rejection[] } {
  const out = { entries: [] as PreparedEntry[], positions: [] as number[], rejected: [] as Rejection[] };
  values.forEach((value, index) => {
    const entry = prepareEntry(value);
    if ('rejected' in entry) out.rejected.push({ index, error: 'validation_error', message: entry.rejected });
    else {
      out.entries.push(entry);
      out.positions.push(index);
    }
  });
  return out;
}
