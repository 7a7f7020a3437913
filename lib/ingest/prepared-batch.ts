/**
 * A submitted batch turned into what storage needs: each valid entry
 * serialised once (compact JSON, key order kept), sized for quotas and
 * encoded for the write (storage/log-index/encoded-entries.ts), each
 * invalid one turned into its `validation_error`. Search terms are not
 * computed here: sealing builds the index on its own threads.
 */
import type { LogIngestRequest, PreparedEntry } from '../storage/types-logs.js';
import { RequestEncoder } from '../storage/log-index/encoded-entries.js';
import type { SealDictionary } from '../storage/log-index/sealed-block.js';
import { validateEntry } from './entry-validation.js';
import { isJsonText, SHORT_TEXT } from './json-syntax.js';

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
  /**
   * The project's newest dictionary: given (on the preparation thread
   * only), a large batch is also sealed into blocks there
   * (storage/log-index/presealed.ts).
   */
  dictionary?: SealDictionary | null;
  /** Encode the entries as PostgreSQL binary arrays too (storage/log-index/column-arrays.ts): for the server backend. */
  columnArrays?: boolean;
}

export interface PreparedBatch {
  /** The valid entries, in submitted order, encoded for storage. */
  request: LogIngestRequest;
  /** `positions[i]` is the submitted index of valid entry `i`. */
  positions: number[];
  /** The first MAX_LISTED_REJECTIONS validation rejections, by ascending index. */
  rejected: Rejection[];
  /** Every validation rejection, listed or not. */
  rejectedCount: number;
}

/**
 * The most rejections an ingestion answer lists: the first ones by index,
 * each in full (at most ~145 bytes of JSON); `rejected_count` gives them all. A
 * 10 MiB body holds millions of two-byte elements (`0,`): listing each
 * made a 465 MB answer. Far more than a client acts on one by one, and it
 * keeps every answer under ~150 KB.
 */
export const MAX_LISTED_REJECTIONS = 1000;

/**
 * The first MAX_LISTED_REJECTIONS of a batch's rejections plus their count:
 * only those are ever kept, however many elements are refused.
 */
export class RejectionList {
  readonly listed: Rejection[] = [];
  count = 0;

  /** Notes a rejection; they must come by ascending index. */
  add(index: number, error: Rejection['error'], message: string): void {
    this.count += 1;
    if (this.listed.length < MAX_LISTED_REJECTIONS) this.listed.push({ index, error, message });
  }
}

/** What one element's text becomes: an entry, its rejection message, or null for text that is not JSON. */
export type TextOutcome = PreparedEntry | { rejected: string } | null;

/** Validates and prepares one submitted element: the entry, or its rejection message. */
export function entryFromValue(value: unknown): PreparedEntry | { rejected: string } {
  const checked = validateEntry(value);
  if (!checked.ok) return { rejected: checked.message };
  // The stored text is the parsed object's compact JSON; its UTF-8
  // length is the entry's size for quotas.
  const body = JSON.stringify(checked.entry);
  const bytes = Buffer.byteLength(body, 'utf8');
  return { body, bytes, level: checked.level, timestamp: checked.timestamp };
}

/** Parses one element's JSON text and prepares it (`null`: the text is not JSON). */
export function entryFromText(text: string): TextOutcome {
  // A short text that is not JSON is told without a failing JSON.parse (json-syntax.ts).
  if (text.length <= SHORT_TEXT && !isJsonText(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return entryFromValue(value);
}

/**
 * Collects a batch's entries one element at a time, in order, encoding them
 * as they come. Of the rejections only the first MAX_LISTED_REJECTIONS and
 * their count are kept, so refusing millions of elements costs no memory.
 */
export class BatchBuilder {
  private readonly encoder: RequestEncoder;
  private readonly positions: number[] = [];
  private readonly rejected = new RejectionList();
  private index = 0;

  constructor(target: BatchTarget) {
    this.encoder = new RequestEncoder(target.projectId, target.receivedAt, target.dictionary ?? null, target.columnArrays ?? false);
  }

  add(value: unknown): void {
    this.addPrepared(entryFromValue(value));
  }

  /** Takes the next index for an element already prepared (by `entryFromValue`, here or on the worker). */
  addPrepared(entry: PreparedEntry | { rejected: string }): void {
    if ('rejected' in entry) {
      this.reject(entry.rejected);
      return;
    }
    this.encoder.add(entry);
    this.positions.push(this.index++);
  }

  /** Takes the next index for an element that could not even be read (an NDJSON line that is not JSON). */
  reject(message: string): void {
    this.rejected.add(this.index++, 'validation_error', message);
  }

  result(): PreparedBatch {
    return { request: this.encoder.finish(), positions: this.positions, rejected: this.rejected.listed, rejectedCount: this.rejected.count };
  }
}
