/**
 * `GET /v1/logs/histogram`: how many entries per time bucket and level, for
 * the scope and filters `GET /v1/logs` takes (read by the same code, in the
 * same order), minus paging, plus `buckets`.
 *
 * - Range: `from`/`to` as given (inclusive, on the entry's `timestamp`,
 *   as in the list); `to` absent is now, `from` absent is `to` minus 24 h.
 *   `to` before `from`, or a range over MAX_RANGE_MS, is 400.
 * - Grid: the smallest step among NICE_STEPS (then whole days) whose
 *   buckets, aligned on multiples of the step since the epoch (UTC), cover
 *   the range in at most `buckets` buckets. The answer's `from`/`to` are
 *   the grid's edges, so the first and last buckets may reach outside the
 *   range; only entries inside it are counted.
 * - Cost: see storage/log-index/histogram-plan.ts. Text filters over too many
 *   entries are refused (400 naming `from`) instead of running long.
 */
import { invalidRequest } from '../core/errors.js';
import { isoTimestamp } from '../core/timestamps.js';
import { LEVELS } from '../search/levels.js';
import { HISTOGRAM_MAX_CHECKED, emptyCounts } from '../storage/log-index/histogram-plan.js';
import type { HistogramCounts, HistogramGrid } from '../storage/types-logs.js';
import type { ReadOps } from '../storage/storage.js';
import { readLogFilter, type LogFilter, type LogScope } from './log-query-params.js';
import { selectionOf } from './log-reader.js';

export const DEFAULT_BUCKETS = 60;
export const MAX_BUCKETS = 500;
const SECOND = 1000;
const DAY = 86_400_000;
/** The range when `from` is absent: the day before `to`. */
export const DEFAULT_RANGE_MS = DAY;
/** The longest range: 100 years (36,525 days). */
export const MAX_RANGE_MS = 36_525 * DAY;
/** Bucket widths a chart reads easily, in seconds; past a day, whole days. */
const NICE_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400] as const;
/** Grid edges must print as four-digit years. */
const ISO_MIN = new Date('0000-01-01T00:00:00.000Z').getTime();
const ISO_MAX = new Date('9999-12-31T23:59:59.999Z').getTime();
const INTEGER = /^[0-9]{1,4}$/;

export interface HistogramQuery {
  filter: LogFilter & { from: number; to: number };
  grid: HistogramGrid;
}

/** `buckets`: an integer 1–500, DEFAULT_BUCKETS when absent. */
function readBuckets(query: URLSearchParams): number {
  const raw = query.get('buckets');
  if (raw === null) return DEFAULT_BUCKETS;
  const n = Number(raw);
  if (!INTEGER.test(raw) || n < 1 || n > MAX_BUCKETS) {
    throw invalidRequest(`buckets must be an integer from 1 to ${MAX_BUCKETS}.`, 'buckets', 'invalid');
  }
  return n;
}

/** The grid of one step over [from, to] (inclusive), or null when it needs more than `buckets` buckets. */
function gridOf(from: number, to: number, stepMs: number, buckets: number): HistogramGrid | null {
  const first = Math.floor(from / stepMs);
  const count = Math.floor(to / stepMs) - first + 1;
  return count <= buckets ? { origin: first * stepMs, stepMs, count } : null;
}

/**
 * The smallest nice step covering [from, to] in at most `buckets` buckets.
 * The search over whole days is bounded by a step known to fit: with two
 * buckets or more, any step of at least span / (buckets − 1); with one, a
 * step longer than both ends lie from the epoch. One bucket cannot hold a
 * range that holds the epoch itself (bucket edges fall on multiples of the
 * step since 1970-01-01), and is refused then.
 */
export function histogramGrid(from: number, to: number, buckets: number): HistogramGrid {
  for (const seconds of NICE_STEPS) {
    const grid = gridOf(from, to, seconds * SECOND, buckets);
    if (grid !== null) return grid;
  }
  const span = to - from + 1;
  const fewest = Math.max(2, Math.ceil(span / buckets / DAY));
  let most: number;
  if (buckets >= 2) most = Math.max(fewest, Math.ceil(span / (buckets - 1) / DAY));
  else if (from < 0 && to >= 0) throw oneBucketOverEpoch();
  else most = Math.max(fewest, Math.floor(Math.max(Math.abs(from), Math.abs(to)) / DAY) + 1);
  for (let days = fewest; days <= most; days++) {
    const grid = gridOf(from, to, days * DAY, buckets);
    if (grid !== null) return grid;
  }
  // Unreachable: the step `most` fits (see above).
  throw new Error(`no histogram grid of ${buckets} buckets for ${from}..${to}`);
}

function oneBucketOverEpoch() {
  return invalidRequest(
    'A range holding 1970-01-01T00:00:00.000Z needs at least 2 buckets: bucket edges fall on whole steps since that instant.',
    'buckets',
    'invalid',
  );
}

/**
 * After the scope checks: the filters (as `GET /v1/logs` reads them), then
 * `cursor` and `limit` (refused: a histogram has no pages), then
 * `buckets`, then the range.
 */
export function readHistogramQuery(query: URLSearchParams, now: number): HistogramQuery {
  const filter = readLogFilter(query);
  for (const field of ['cursor', 'limit'] as const) {
    if (query.has(field)) throw invalidRequest(`${field} is not accepted here: a histogram has no pages.`, field, 'unknown');
  }
  const buckets = readBuckets(query);
  const to = filter.to ?? now;
  const from = filter.from ?? to - DEFAULT_RANGE_MS;
  if (to < from) {
    const field = filter.to === null ? 'from' : 'to';
    throw invalidRequest(filter.to === null ? 'from must not be later than now (to when given).' : 'to must not be earlier than from.', field, 'invalid');
  }
  if (to - from > MAX_RANGE_MS) throw invalidRequest(`The range from from to to may span at most ${MAX_RANGE_MS / DAY} days.`, 'from', 'invalid');
  const grid = histogramGrid(from, to, buckets);
  if (grid.origin < ISO_MIN) throw invalidRequest('from is too early for a histogram.', 'from', 'invalid');
  if (grid.origin + grid.count * grid.stepMs > ISO_MAX) throw invalidRequest('to is too late for a histogram.', 'to', 'invalid');
  return { filter: { ...filter, from, to }, grid };
}

/** The counts of the scope's entries, exactly; a 400 when the filters would have too many entries checked one by one. */
export async function readHistogram(storage: ReadOps, scope: LogScope, { filter, grid }: HistogramQuery): Promise<HistogramCounts> {
  const selection = await selectionOf(storage, scope, filter);
  if (selection === null) return emptyCounts(grid);
  const counts = await storage.logHistogram({ ...selection, from: filter.from, to: filter.to }, grid);
  if (counts === null) {
    throw invalidRequest(
      `These filters would have more than ${HISTOGRAM_MAX_CHECKED} entries checked one by one in this range; narrow the time range or the filters.`,
      'from',
      'invalid',
    );
  }
  return counts;
}

/** The answer's JSON. */
export function histogramJson(grid: HistogramGrid, counts: HistogramCounts): Record<string, unknown> {
  return {
    from: isoTimestamp(grid.origin),
    to: isoTimestamp(grid.origin + grid.count * grid.stepMs),
    bucket_seconds: grid.stepMs / SECOND,
    buckets: counts.map((levels, i) => ({
      start: isoTimestamp(grid.origin + i * grid.stepMs),
      counts: Object.fromEntries(LEVELS.map((name, level) => [name, levels[level]!])),
    })),
  };
}
