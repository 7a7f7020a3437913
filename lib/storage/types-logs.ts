/**
 * Log entries as the storage contract (`storage.ts`) stores and returns them:
 * prepared and encoded ingestion batches, their outcomes, and the selection
 * a query reads.
 */
import type { LogFilter } from '../search/log-filter.js';
import type { SealedRun } from './log-index/seal-run.js';

/**
 * A log entry as stored: the submitted object's compact JSON text (key order
 * kept) plus the server-assigned fields.
 */
export interface LogRow {
  id: number;
  projectId: number;
  receivedAt: number;
  body: string;
}

/**
 * An entry ready to encode: validated, serialised, sized and indexed by
 * `logs/` (so both backends index identically).
 */
export interface PreparedEntry {
  /** Compact JSON text of the submitted object. */
  body: string;
  /** UTF-8 byte length of `body`. */
  bytes: number;
  /** 0 debug … 4 critical. */
  level: number;
  /** The entry's `timestamp`, as epoch milliseconds. */
  timestamp: number;
}

/**
 * One ingestion request's valid entries, all for one project, encoded
 * once where the batch is prepared (storage/log-index/encoded-entries.ts), so a write
 * transaction mostly hands bytes to the database instead of serialising
 * entry by entry while the writer waits.
 */
export interface LogIngestRequest {
  projectId: number;
  /** Each entry's size in bytes, in submitted order: what quotas need. */
  sizes: number[];
  /** The entries in order, in runs of at most CHUNK_ENTRIES. */
  chunks: EncodedChunk[];
  /**
   * The same entries sealed into blocks with placeholder ids, when the
   * request was large enough and prepared with its project's dictionary
   * (log-index/presealed.ts): the transaction writes these instead of tail
   * rows while the project's tail is empty.
   */
  blocks?: SealedRun[];
}

import type { ChunkColumns } from './log-index/column-arrays.js';

/**
 * Consecutive entries of one request as UTF-8 JSON. Each chunk owns its
 * whole ArrayBuffers, so a worker can transfer them.
 */
export interface EncodedChunk {
  count: number;
  /**
   * The same entries as PostgreSQL binary arrays (log-index/column-arrays.ts),
   * when the batch was prepared for the server backend; derived from `rows`
   * where absent.
   */
  columns?: ChunkColumns;
  /** `[[project_id, received_at, ts, level, bytes, body], …]`, one row per entry (the only place the request's arrival time is kept). */
  rows: Uint8Array;
  /** The chunk's entries counted per minute and level, flat `[minute, level, n, …]` (log-rollup.ts). */
  minutes: number[];
}

/**
 * What both backends bind where a filter is absent, so one statement
 * serves with and without it: an instant before and after every entry's
 * timestamp, and an id above every id. Safe integers, held exactly by
 * SQLite's and PostgreSQL's 64-bit integers.
 */
export const NO_EARLIEST_TS = -Number.MAX_SAFE_INTEGER;
export const NO_LATEST_TS = Number.MAX_SAFE_INTEGER;
export const NO_UPPER_ID = Number.MAX_SAFE_INTEGER;

/** What became of one entry: stored under `id`, or refused by a quota. */
export type LogEntryOutcome = { id: number } | { quota: 'max_entries' | 'max_bytes' };

/** A log filter over a set of projects (one, or a group's unblocked ones). */
export interface LogSelection extends LogFilter {
  /** Non-empty. */
  projectIds: number[];
}

/**
 * Buckets of `stepMs` from `origin`: bucket i holds the entries with
 * origin + i·stepMs ≤ ts < origin + (i+1)·stepMs. Only entries inside the
 * selection's own (inclusive) from/to are counted.
 */
export interface HistogramGrid {
  origin: number;
  stepMs: number;
  count: number;
}

/** counts[bucket][level]. */
export type HistogramCounts = number[][];
