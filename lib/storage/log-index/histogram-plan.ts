/**
 * How a log histogram (entries per time bucket and level) is counted, the
 * same way on both backends (each supplies the reads below as SQL of
 * its own):
 * - no text conditions (only scope, time range and level): each bucket's
 *   whole hours counted from the rollup's hour rows (log-rollup.ts), the
 *   whole minutes left at its ends from its minute rows, and only the rest
 *   (partial minutes at the ends, or all of a bucket narrower than a
 *   minute) from the index on (project_id, ts) that also holds the level,
 *   without reading an entry; nothing but the counts comes back. So a long
 *   range costs its hours, not its entries;
 * - text conditions (`q`, exact-match filters): the database returns the
 *   entries of the range that pass level, time and cheap necessary tests
 *   of the text (each exact value's escaped text is in the entry's text,
 *   each ASCII word of `q` in its lower-cased text), in pages along
 *   (ts, level, id); each is then decided by the very test the list uses
 *   (search/entry-match.ts), so the counts equal what `GET /v1/logs`
 *   returns. The entries read are bounded by HISTOGRAM_MAX_CHECKED: past
 *   it the plan gives up and says so.
 * Both read the tail as above and the sealed blocks through their own reads
 * (sealed-histogram.ts).
 */
import { entryMatcher, exactNeedle, type EntryTest } from '../../search/entry-match.js';
import type { ExactFilter, LogFilter } from '../../search/log-filter.js';
import type { HistogramCounts, HistogramGrid, LogSelection } from '../types-logs.js';
import { ROLLUP_SPANS, spanStart } from './log-rollup.js';
import type { DictionaryCache, SealedReads } from './sealed-reads.js';
import { countSealedRanges, visitSealedMatches } from './sealed-histogram.js';

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

/** How many entries of one level one bucket holds. */
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

/** Instants `first` … `last` (inclusive) counted toward one bucket. */
export interface BucketRange {
  bucket: number;
  first: number;
  last: number;
}

/** Rollup rows of one span (log-rollup.ts) starting at first … last, counted toward one bucket. */
export interface RollupRange extends BucketRange {
  span: number;
}

/** Where each bucket's counts come from: ranges of entries, and ranges of whole spans of the rollup. */
export interface BucketSources {
  entries: BucketRange[];
  rollup: RollupRange[];
}

export interface HistogramReads {
  /**
   * At most `limit` entries of the project in the range, level at least
   * the minimum, ordered by (ts, id), strictly after `after` (null: from
   * the start of the range). A backend drops entries failing a necessary
   * condition of the text filters (entry-match.ts `exactNeedle`,
   * `asciiWordNeedles`), and may return others that fail them.
   */
  candidates(
    projectId: number,
    filter: LogFilter & { from: number; to: number },
    after: CandidatePosition | null,
    limit: number,
  ): Promise<HistogramCandidate[]>;
  /** Whether the project has an entry with from ≤ ts ≤ to. */
  anyInRange(projectId: number, from: number, to: number): Promise<boolean>;
  /**
   * The sealed blocks (query-plan.ts `QueryPlanReads.sealed`): the reads
   * above see the tail only, and the blocks are counted through these:
   * entry ranges from the blocks' headers, text conditions from their
   * candidates.
   */
  readonly sealed: {
    reads: SealedReads;
    cache: DictionaryCache;
    /**
     * In one statement (one snapshot), per level: the tail's entries of
     * these projects with level ≥ minLevel in each entry range (first ≤ ts
     * ≤ last), and the rollup's counts of the same in each rollup range
     * (its rows of that span starting at first … last). Ranges and levels
     * with no entry may be left out; a bucket may come back more than
     * once. With them, in the same snapshot, each project's smallest tail
     * id (absent: an empty tail). Sealing moves a
     * project's oldest tail run, so its blocks then hold only ids below
     * that floor, and entries sealed after this read only ids at or above
     * it: counting blocks below the floor counts no entry twice.
     */
    countTail(
      projectIds: readonly number[],
      minLevel: number,
      sources: BucketSources,
    ): Promise<{ counts: BucketCount[]; tailFloors: ReadonlyMap<number, number> }>;
  };
}

/**
 * Text a stored entry matching the exact-match filter must contain. Stored
 * text is compact JSON (JSON.stringify's), so a string value sits right
 * after its key: `"plan":"pro"`, far rarer than `pro` alone. A value that
 * is also some number's or a boolean's JSON text may match those, written
 * without quotes: then only the value's own text is certain.
 */
export function exactFilterNeedle(filter: ExactFilter): string {
  const n = Number(filter.value);
  const maybeNumber = filter.value !== '' && Number.isFinite(n) && JSON.stringify(n) === filter.value;
  if (maybeNumber || filter.value === 'true' || filter.value === 'false') return exactNeedle(filter.value);
  return `${JSON.stringify(filter.path[filter.path.length - 1]!)}:${JSON.stringify(filter.value)}`;
}

/** An empty counts table for the grid. */
export function emptyCounts(grid: HistogramGrid): HistogramCounts {
  return Array.from({ length: grid.count }, () => new Array<number>(LEVEL_COUNT).fill(0));
}

/**
 * Each bucket's part of [from, to] split by where it is counted: its whole
 * hours from the rollup's hour rows, the whole minutes left at either end
 * from its minute rows, and the rest from the entries (the partial minute
 * at either end, or all of a part holding no whole minute: a bucket under
 * a minute wide, or a range edge inside a minute).
 */
export function splitBuckets(grid: HistogramGrid, from: number, to: number): BucketSources {
  const sources: BucketSources = { entries: [], rollup: [] };
  for (let bucket = 0; bucket < grid.count; bucket++) {
    const first = Math.max(grid.origin + bucket * grid.stepMs, from);
    const last = Math.min(grid.origin + (bucket + 1) * grid.stepMs - 1, to);
    if (first <= last) splitRange(sources, bucket, first, last, ROLLUP_SPANS);
  }
  return sources;
}

/** Whole spans of the coarsest unit from the rollup, the parts before and after them by the finer units (the finest leaves: entries). */
function splitRange(sources: BucketSources, bucket: number, first: number, last: number, spans: readonly number[]): void {
  const [span, ...finer] = spans;
  if (span === undefined) {
    sources.entries.push({ bucket, first, last });
    return;
  }
  const wholeFrom = spanStart(first + span - 1, span);
  // The end (exclusive) of the last whole span inside the range.
  const wholeTo = spanStart(last + 1, span);
  if (wholeFrom >= wholeTo) {
    splitRange(sources, bucket, first, last, finer);
    return;
  }
  sources.rollup.push({ bucket, span, first: wholeFrom, last: wholeTo - span });
  if (first < wholeFrom) splitRange(sources, bucket, first, wholeFrom - 1, finer);
  if (wholeTo <= last) splitRange(sources, bucket, wholeTo, last, finer);
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
export async function planHistogram(
  reads: HistogramReads,
  selection: LogSelection & { from: number; to: number },
  grid: HistogramGrid,
): Promise<HistogramCounts | null> {
  const counts = emptyCounts(grid);
  if (selection.from > selection.to) return counts;
  const test = entryMatcher(selection);
  if (test === null) {
    const sources = splitBuckets(grid, selection.from, selection.to);
    const { sealed } = reads;
    const tail = await sealed.countTail(selection.projectIds, selection.minLevel ?? 0, sources);
    for (const { bucket, level, n } of tail.counts) counts[bucket]![level]! += n;
    const ranges = [...sources.entries].sort((a, b) => a.first - b.first);
    for (const projectId of selection.projectIds) {
      const floor = tail.tailFloors.get(projectId) ?? Number.MAX_SAFE_INTEGER;
      await countSealedRanges(sealed.reads, projectId, selection.minLevel ?? 0, ranges, floor, (r, level) => {
        counts[ranges[r]!.bucket]![level]! += 1;
      });
    }
    return counts;
  }
  const tally: Tally = { grid, counts, test, checked: 0, seen: new Set() };
  for (const projectId of selection.projectIds) {
    if (!(await reads.anyInRange(projectId, selection.from, selection.to))) continue;
    if (!(await fromRange(reads, projectId, selection, tally))) return null;
  }
  const { sealed } = reads;
  for (const projectId of selection.projectIds) {
    const done = await visitSealedMatches(sealed.reads, sealed.cache, projectId, selection, (entries) => {
      tally.checked += entries.length;
      if (tally.checked > HISTOGRAM_MAX_CHECKED) return false;
      for (const e of entries) if (!tally.seen.has(e.id)) counts[bucketOf(grid, e.ts)]![e.level]! += 1;
      return true;
    });
    if (!done) return null;
  }
  return counts;
}

interface Tally {
  grid: HistogramGrid;
  counts: HistogramCounts;
  test: EntryTest;
  checked: number;
  /** The ids counted from the tail (an entry sealed since is then not counted again from its block). */
  seen: Set<number>;
}

/** Counts the rows passing the test; false once too many were read. */
function count(tally: Tally, rows: readonly HistogramCandidate[]): boolean {
  tally.checked += rows.length;
  if (tally.checked > HISTOGRAM_MAX_CHECKED) return false;
  for (const row of rows) {
    if (tally.seen.has(row.id)) continue;
    tally.seen.add(row.id);
    if (tally.test(row.body)) tally.counts[bucketOf(tally.grid, row.ts)]![row.level]! += 1;
  }
  return true;
}

/**
 * Counts the pages `read` gives (read(i) for i = 0, 1, … until it answers
 * null) with one read ahead: the database reads page i + 1 while this
 * thread checks page i, so the two take turns less (histograms with text
 * conditions spend about as long checking as reading).
 */
async function countPages(
  tally: Tally,
  read: (i: number, previous: readonly HistogramCandidate[] | null) => Promise<HistogramCandidate[]> | null,
): Promise<boolean> {
  let next = read(0, null);
  for (let i = 1; next !== null; i++) {
    const rows = await next;
    next = read(i, rows);
    if (!count(tally, rows)) {
      // Given up: the read ahead is not wanted, nor its failure.
      next?.catch(() => {});
      return false;
    }
  }
  return true;
}

/** Every candidate of the project's range, in pages along (ts, level, id). */
function fromRange(reads: HistogramReads, projectId: number, filter: LogFilter & { from: number; to: number }, tally: Tally): Promise<boolean> {
  return countPages(tally, (_, previous) => {
    if (previous === null) return reads.candidates(projectId, filter, null, CANDIDATE_PAGE);
    if (previous.length < CANDIDATE_PAGE) return null;
    const last = previous[previous.length - 1]!;
    return reads.candidates(projectId, filter, { ts: last.ts, level: last.level, id: last.id }, CANDIDATE_PAGE);
  });
}
