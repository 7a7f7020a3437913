/**
 * The histogram reads (histogram-plan.ts) in SQLite: counts per bucket and
 * level from the rollup (log-rollup.ts) and the (project_id, ts, level) index
 * alone, and pages of candidate entries along (ts, level, rowid), the
 * order that index keeps them in.
 */
import type { LogFilter } from '../../search/log-filter.js';
import type { HistogramCounts, HistogramGrid, LogSelection } from '../types-logs.js';
import { asciiWordNeedles, type AsciiNeedle } from '../../search/entry-match.js';
import { exactFilterNeedle, planHistogram, type BucketCount, type HistogramCandidate, type HistogramReads } from '../log-index/histogram-plan.js';
import type { SqlRow } from './row-mappers.js';
import { sqliteSealedReads } from './sealing.js';
import { DictionaryCache } from '../log-index/sealed-reads.js';
import type { SqlExecutor } from './connection.js';

/** How many exact-match values and ASCII words of `q` the SQL tests (the longest: likeliest rare); entry-match decides the rest. */
const NEEDLE_SLOTS = 4;
const WORD_SLOTS = 3;

/**
 * One row per range: its counts per level as a JSON array. Entry ranges
 * are read from the (project_id, ts, level) index alone (a GROUP BY over
 * the range sorts every entry through a temporary B-tree, several times
 * slower); rollup ranges from the rollup's key, one range per
 * project. One statement, so one snapshot for both. Params: JSON
 * `[[bucket, first, last], …]` of entry ranges, JSON `[[bucket, span,
 * first, last], …]` of rollup ranges, JSON project ids, minLevel.
 */
const COUNT_BUCKETS = `SELECT r.value ->> 0 AS bucket, (
    SELECT json_array(sum(level = 0), sum(level = 1), sum(level = 2), sum(level = 3), sum(level = 4))
    FROM log_entries INDEXED BY log_entries_project_ts
    WHERE project_id IN (SELECT value FROM json_each(?3)) AND ts >= r.value ->> 1 AND ts <= r.value ->> 2 AND level >= ?4) AS counts
  FROM json_each(?1) AS r
  UNION ALL
  SELECT r.value ->> 0 AS bucket, (
    SELECT json_array(sum(iif(level = 0, n, 0)), sum(iif(level = 1, n, 0)), sum(iif(level = 2, n, 0)), sum(iif(level = 3, n, 0)), sum(iif(level = 4, n, 0)))
    FROM log_rollup
    WHERE project_id IN (SELECT value FROM json_each(?3)) AND span = r.value ->> 1 AND start >= r.value ->> 2 AND start <= r.value ->> 3 AND level >= ?4) AS counts
  FROM json_each(?2) AS r`;

/** COUNT_BUCKETS, and in the same statement (one snapshot) each project's smallest tail id as a row of bucket −1 − project. */
const COUNT_TAIL_BUCKETS = `${COUNT_BUCKETS}
  UNION ALL
  SELECT -1 - p.value AS bucket, json_array((SELECT MIN(id) FROM log_entries INDEXED BY log_entries_project WHERE project_id = p.value)) AS counts
  FROM json_each(?3) AS p`;

const slot = (n: number, test: (p: string) => string): string => `(${p(n)} = '' OR ${test(p(n))})`;
const p = (n: number): string => `?${n}`;

/**
 * Params: project, after ts (or from), after level (-1: none), after id,
 * to, minLevel, limit, then NEEDLE_SLOTS needles and WORD_SLOTS LIKE
 * patterns ('' when absent: the test is skipped).
 */
const CANDIDATES = `SELECT id, ts, level, body FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?5 AND level >= ?6
    AND (ts > ?2 OR level > ?3 OR (level = ?3 AND id > ?4))
    AND ${Array.from({ length: NEEDLE_SLOTS }, (_, i) => slot(8 + i, (x) => `instr(body, ${x}) > 0`)).join(' AND ')}
    AND ${Array.from({ length: WORD_SLOTS }, (_, i) => slot(8 + NEEDLE_SLOTS + i, (x) => `body LIKE ${x}`)).join(' AND ')}
  ORDER BY ts, level, id LIMIT ?7`;

/** Params: project, from, to. Index only. */
const ANY_IN_RANGE = `SELECT 1 FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?3 LIMIT 1`;

/**
 * A LIKE pattern an entry holding the ASCII word must match. LIKE folds
 * ASCII case only, so each character that U+212A or U+0130 lower-cases to
 * (entry-match.ts) becomes `_`, one character of any kind.
 */
function likePattern(needle: AsciiNeedle): string {
  let text = needle.text.replaceAll('k', '_');
  if (needle.prefix && text.endsWith('i')) text = `${text.slice(0, -1)}_`;
  return `%${text}%`;
}

const toCandidate = (r: SqlRow): HistogramCandidate => ({ id: Number(r.id), ts: Number(r.ts), level: Number(r.level), body: r.body as string });

function padded(values: string[], slots: number): string[] {
  const out = values.slice(0, slots);
  while (out.length < slots) out.push('');
  return out;
}

function textParams(filter: LogFilter): string[] {
  const needles = filter.exact.map(exactFilterNeedle).sort((a, b) => b.length - a.length);
  const words = asciiWordNeedles(filter, WORD_SLOTS).map(likePattern);
  return [...padded(needles, NEEDLE_SLOTS), ...padded(words, WORD_SLOTS)];
}

function histogramReads(db: SqlExecutor, cache: DictionaryCache): HistogramReads {
  return {
    sealed: {
      reads: sqliteSealedReads(db),
      cache,
      async countTail(projectIds, minLevel, sources) {
        const entries = JSON.stringify(sources.entries.map((r) => [r.bucket, r.first, r.last]));
        const rollup = JSON.stringify(sources.rollup.map((r) => [r.bucket, r.span, r.first, r.last]));
        const rows = await db.all(COUNT_TAIL_BUCKETS, [entries, rollup, JSON.stringify(projectIds), minLevel]);
        const tailFloors = new Map<number, number>();
        const counts: BucketCount[] = [];
        for (const r of rows) {
          const bucket = Number(r.bucket);
          const values = JSON.parse(r.counts as string) as (number | null)[];
          if (bucket < 0) {
            if (values[0] !== null && values[0] !== undefined) tailFloors.set(-1 - bucket, values[0]);
          } else {
            values.forEach((n, level) => {
              counts.push({ bucket, level, n: n ?? 0 });
            });
          }
        }
        return { counts, tailFloors };
      },
    },
    async candidates(projectId, filter, after, limit) {
      const params = [projectId, after?.ts ?? filter.from, after?.level ?? -1, after?.id ?? -1, filter.to, filter.minLevel ?? 0, limit, ...textParams(filter)];
      return (await db.all(CANDIDATES, params)).map(toCandidate);
    },
    async anyInRange(projectId, from, to) {
      return (await db.get(ANY_IN_RANGE, [projectId, from, to])) !== undefined;
    },
  };
}

export function logHistogram(
  db: SqlExecutor,
  selection: LogSelection & { from: number; to: number },
  grid: HistogramGrid,
  cache: DictionaryCache = new DictionaryCache(),
): Promise<HistogramCounts | null> {
  return planHistogram(histogramReads(db, cache), selection, grid);
}
