/**
 * The histogram reads (histogram-plan.ts) in SQLite, both through
 * (project_id, ts): a GROUP BY bucket and level, and pages of candidate
 * entries along (ts, rowid), the order that index keeps them in.
 */
import type { LogFilter } from '../../search/log-filter.js';
import type { LogSelection } from '../types-logs.js';
import { asciiWordNeedles, exactNeedle } from '../../search/entry-match.js';
import { planHistogram, type HistogramCounts, type HistogramGrid, type HistogramReads } from '../histogram-plan.js';
import { likePattern } from './logs.js';
import type { SqlExecutor } from './connection.js';

/** How many exact-match values and ASCII words of `q` the SQL tests (the longest: likeliest rare); entry-match decides the rest. */
const NEEDLE_SLOTS = 4;
const WORD_SLOTS = 3;

/** Params: origin, step, JSON project ids, from, to, minLevel. The driver may bind numbers as REAL: the CASTs keep the division integral. */
const COUNT_BUCKETS = `SELECT (ts - CAST(?1 AS INTEGER)) / CAST(?2 AS INTEGER) AS bucket, level, COUNT(*) AS n
  FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id IN (SELECT value FROM json_each(?3)) AND ts >= ?4 AND ts <= ?5 AND level >= ?6
  GROUP BY bucket, level`;

const slot = (n: number, test: (p: string) => string): string => `(${p(n)} = '' OR ${test(p(n))})`;
const p = (n: number): string => `?${n}`;

/**
 * Params: project, after ts (or from), after id (-1: none), to, minLevel,
 * limit, then NEEDLE_SLOTS needles and WORD_SLOTS LIKE patterns ('' when
 * absent: the test is skipped).
 */
const CANDIDATES = `SELECT id, ts, level, body FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?4 AND (ts > ?2 OR id > ?3) AND +level >= ?5
    AND ${Array.from({ length: NEEDLE_SLOTS }, (_, i) => slot(7 + i, (x) => `instr(body, ${x}) > 0`)).join(' AND ')}
    AND ${Array.from({ length: WORD_SLOTS }, (_, i) => slot(7 + NEEDLE_SLOTS + i, (x) => `body LIKE ${x}`)).join(' AND ')}
  ORDER BY ts, id LIMIT ?6`;

function padded(values: string[], slots: number): string[] {
  const out = values.slice(0, slots);
  while (out.length < slots) out.push('');
  return out;
}

function textParams(filter: LogFilter): string[] {
  const needles = filter.exact.map((e) => exactNeedle(e.value)).sort((a, b) => b.length - a.length);
  const words = asciiWordNeedles(filter, WORD_SLOTS).map(likePattern);
  return [...padded(needles, NEEDLE_SLOTS), ...padded(words, WORD_SLOTS)];
}

function histogramReads(db: SqlExecutor): HistogramReads {
  return {
    async countBuckets(projectIds, filter, grid) {
      const rows = await db.all(COUNT_BUCKETS, [grid.origin, grid.stepMs, JSON.stringify(projectIds), filter.from, filter.to, filter.minLevel ?? 0]);
      return rows.map((r) => ({ bucket: Number(r.bucket), level: Number(r.level), n: Number(r.n) }));
    },
    async candidates(projectId, filter, after, limit) {
      const params = [projectId, after?.ts ?? filter.from, after?.id ?? -1, filter.to, filter.minLevel ?? 0, limit, ...textParams(filter)];
      const rows = await db.all(CANDIDATES, params);
      return rows.map((r) => ({ id: Number(r.id), ts: Number(r.ts), level: Number(r.level), body: r.body as string }));
    },
  };
}

export function logHistogram(db: SqlExecutor, selection: LogSelection & { from: number; to: number }, grid: HistogramGrid): Promise<HistogramCounts | null> {
  return planHistogram(histogramReads(db), selection, grid);
}
