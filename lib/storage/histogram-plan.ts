/**
 * How a log histogram (entries per time bucket and level) is counted, the
 * same way on both backends (each supplies the two reads below as SQL of
 * its own):
 * - no text conditions (only scope, time range and level): one GROUP BY
 *   bucket and level in the database, over (project_id, ts); nothing but
 *   the counts comes back;
 * - text conditions (`q`, exact-match filters): the database returns the
 *   entries of the range that pass level, time and cheap necessary tests
 *   of the text (each exact value's escaped text is in the entry's text,
 *   each ASCII word of `q` in its lower-cased text), in pages along
 *   (ts, id); each is then decided by the very test the list uses
 *   (search/entry-match.ts), so the counts equal what `GET /v1/logs`
 *   returns. The entries read this way are bounded by HISTOGRAM_MAX_CHECKED:
 *   past it the plan gives up and says so.
 */
import { entryMatcher } from '../search/entry-match.js';
import type { LogFilter } from '../search/log-filter.js';
import type { LogSelection } from './types-logs.js';

/** Levels 0 (debug) … 4 (critical). */
export const LEVEL_COUNT = 5;

/**
 * The most entries a histogram with text conditions reads and checks one
 * by one (over all its projects). A filter whose cheap tests let more than
 * this through in the range is refused: narrowing the range or the filter
 * brings it under.
 */
export const HISTOGRAM_MAX_CHECKED = 200_000;

/** Entries per page of candidates. */
const CANDIDATE_PAGE = 2000;

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

/** One row of a GROUP BY: bucket index, level, entries. */
export interface BucketCount {
  bucket: number;
  level: number;
  n: number;
}

/** An entry read to be checked: its time, level and stored text. */
export interface HistogramCandidate {
  id: number;
  ts: number;
  level: number;
  body: string;
}

/** Where a page of candidates continues: strictly after (ts, level, id), the order of the (project_id, ts, level) index. */
export interface CandidatePosition {
  ts: number;
  level: number;
  id: number;
}

export interface HistogramReads {
  /**
   * Entries of these projects with from ≤ ts ≤ to and level ≥ minLevel,
   * counted per bucket of the grid and level (buckets and levels with no
   * entry may be left out).
   */
  countBuckets(projectIds: readonly number[], filter: LogFilter & { from: number; to: number }, grid: HistogramGrid): Promise<BucketCount[]>;
  /**
   * At most `limit` entries of the project in the range, level at least
   * the minimum, ordered by (ts, id), strictly after `after` (null: from
   * the start of the range). A backend drops entries failing a necessary
   * condition of the text filters (entry-match.ts `exactNeedle`,
   * `asciiWordNeedles`), and may return others that fail them.
   */
  candidates(projectId: number, filter: LogFilter & { from: number; to: number }, after: CandidatePosition | null, limit: number): Promise<HistogramCandidate[]>;
}

/** An empty counts table for the grid. */
export function emptyCounts(grid: HistogramGrid): HistogramCounts {
  return Array.from({ length: grid.count }, () => new Array<number>(LEVEL_COUNT).fill(0));
}

/** The bucket of an instant inside the grid. */
function bucketOf(grid: HistogramGrid, ts: number): number {
  return Math.floor((ts - grid.origin) / grid.stepMs);
}

/**
 * The histogram of a selection whose from/to are set, or null when it has
 * text conditions and more than HISTOGRAM_MAX_CHECKED entries would have to
 * be checked one by one.
 */
export async function planHistogram(reads: HistogramReads, selection: LogSelection & { from: number; to: number }, grid: HistogramGrid): Promise<HistogramCounts | null> {
  const counts = emptyCounts(grid);
  if (selection.from > selection.to) return counts;
  const test = entryMatcher(selection);
  if (test === null) {
    for (const { bucket, level, n } of await reads.countBuckets(selection.projectIds, selection, grid)) counts[bucket]![level]! += n;
    return counts;
  }
  let checked = 0;
  for (const projectId of selection.projectIds) {
    let after: CandidatePosition | null = null;
    for (;;) {
      const rows = await reads.candidates(projectId, selection, after, CANDIDATE_PAGE);
      checked += rows.length;
      if (checked > HISTOGRAM_MAX_CHECKED) return null;
      for (const row of rows) if (test(row.body)) counts[bucketOf(grid, row.ts)]![row.level]! += 1;
      if (rows.length < CANDIDATE_PAGE) break;
      const last = rows[rows.length - 1]!;
      after = { ts: last.ts, level: last.level, id: last.id };
    }
  }
  return counts;
}
