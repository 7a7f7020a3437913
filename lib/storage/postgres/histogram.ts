/**
 * The histogram reads (histogram-plan.ts) in PostgreSQL: counts per
 * bucket and level (the rollup, log-rollup.ts, and index-only scans of
 * (project_id, ts) INCLUDE (id, level) for the partial minutes), and pages
 * of candidate entries along (ts, level, id) through the same index. pg-promise formats the values into the text, so
 * absent text tests are simply left out.
 */
import type { LogFilter } from '../../search/log-filter.js';
import type { HistogramCounts, HistogramGrid, LogSelection } from '../types-logs.js';
import { asciiWordNeedles, mayFoldFromNonAscii } from '../../search/entry-match.js';
import { exactFilterNeedle, planHistogram, type BucketCount, type BucketSources, type HistogramReads } from '../log-index/histogram-plan.js';
import type { SqlExecutor } from './connection.js';
import { sealedReadsOf } from './log-entries.js';
import type { DictionaryCache } from '../log-index/sealed-reads.js';

/** How many exact-match values and ASCII words of `q` the SQL tests (the longest: likeliest rare); entry-match decides the rest. */
const NEEDLE_SLOTS = 4;
const WORD_SLOTS = 3;

/**
 * One row per range, counted per level: an entry range by an index-only
 * scan of (project_id, ts) INCLUDE (id, level) (no hash or sort of the
 * range's entries), a rollup range from the rollup's key. One statement,
 * so one snapshot for both. Params: the entry ranges' buckets, first and
 * last instants (parallel arrays), the rollup ranges' buckets, spans,
 * first and last starts, projects, minLevel.
 */
const COUNT_BUCKETS = `SELECT r.bucket, c.l0, c.l1, c.l2, c.l3, c.l4
  FROM unnest($(entryBuckets)::integer[], $(entryFirsts)::bigint[], $(entryLasts)::bigint[]) AS r(bucket, first_ts, last_ts)
  CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE level = 0)::integer AS l0, count(*) FILTER (WHERE level = 1)::integer AS l1,
      count(*) FILTER (WHERE level = 2)::integer AS l2, count(*) FILTER (WHERE level = 3)::integer AS l3,
      count(*) FILTER (WHERE level = 4)::integer AS l4
    FROM log_entries
    WHERE project_id = ANY($(projects)::bigint[]) AND ts >= r.first_ts AND ts <= r.last_ts AND level >= $(minLevel)) AS c
  UNION ALL
  SELECT r.bucket, c.l0, c.l1, c.l2, c.l3, c.l4
  FROM unnest($(rollupBuckets)::integer[], $(rollupSpans)::integer[], $(rollupFirsts)::bigint[], $(rollupLasts)::bigint[]) AS r(bucket, span, first_start, last_start)
  CROSS JOIN LATERAL (
    SELECT COALESCE(sum(n) FILTER (WHERE level = 0), 0)::integer AS l0, COALESCE(sum(n) FILTER (WHERE level = 1), 0)::integer AS l1,
      COALESCE(sum(n) FILTER (WHERE level = 2), 0)::integer AS l2, COALESCE(sum(n) FILTER (WHERE level = 3), 0)::integer AS l3,
      COALESCE(sum(n) FILTER (WHERE level = 4), 0)::integer AS l4
    FROM log_rollup
    WHERE project_id = ANY($(projects)::bigint[]) AND span = r.span AND start >= r.first_start AND start <= r.last_start AND level >= $(minLevel)) AS c`;

/**
 * COUNT_BUCKETS over the tail, and in the same statement (one snapshot)
 * each project's smallest tail id, as a row of bucket −1 − project whose
 * l0 is the id (null: an empty tail). Params as COUNT_BUCKETS.
 */
const COUNT_TAIL_BUCKETS = `${COUNT_BUCKETS}
  UNION ALL
  SELECT -1 - p.id, (SELECT MIN(id) FROM log_entries WHERE project_id = p.id), NULL, NULL, NULL, NULL
  FROM unnest($(projects)::bigint[]) AS p(id)`;

/**
 * The text tests of a candidate page: each needle in the text; each ASCII
 * word in the text lower-cased under the "C" collation (ASCII only), or
 * any text holding U+212A or U+0130 when the word may come from them
 * (entry-match.ts `mayFoldFromNonAscii`).
 */
function textConditions(filter: LogFilter): { sql: string; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const parts: string[] = [];
  const needles = filter.exact
    .map(exactFilterNeedle)
    .sort((a, b) => b.length - a.length)
    .slice(0, NEEDLE_SLOTS);
  needles.forEach((needle, i) => {
    values[`needle${i}`] = needle;
    parts.push(`strpos(body, $(needle${i})) > 0`);
  });
  asciiWordNeedles(filter, WORD_SLOTS).forEach((word, i) => {
    values[`word${i}`] = word.text;
    const folded = `strpos(lower(body COLLATE "C"), $(word${i})) > 0`;
    parts.push(mayFoldFromNonAscii(word) ? `(${folded} OR strpos(body, '\u212a') > 0 OR strpos(body, '\u0130') > 0)` : folded);
  });
  return { sql: parts.map((c) => ` AND ${c}`).join(''), values };
}

function candidatesSql(textSql: string): string {
  return `SELECT id, ts, level, body FROM log_entries
  WHERE project_id = $(project) AND ts >= $(afterTs) AND ts <= $(to) AND level >= $(minLevel)
    AND (ts > $(afterTs) OR level > $(afterLevel) OR (level = $(afterLevel) AND id > $(afterId)))${textSql}
  ORDER BY ts, level, id LIMIT $(limit)`;
}

/** Index only, on (project_id, ts). */
const ANY_IN_RANGE = `SELECT EXISTS (SELECT 1 FROM log_entries WHERE project_id = $(project) AND ts >= $(from) AND ts <= $(to)) AS found`;

/** COUNT_BUCKETS' range parameters. */
function bucketParams(sources: BucketSources) {
  return {
    entryBuckets: sources.entries.map((r) => r.bucket),
    entryFirsts: sources.entries.map((r) => r.first),
    entryLasts: sources.entries.map((r) => r.last),
    rollupBuckets: sources.rollup.map((r) => r.bucket),
    rollupSpans: sources.rollup.map((r) => r.span),
    rollupFirsts: sources.rollup.map((r) => r.first),
    rollupLasts: sources.rollup.map((r) => r.last),
  };
}

function histogramReads(db: SqlExecutor, cache: DictionaryCache): HistogramReads {
  return {
    sealed: {
      ...sealedReadsOf(db, cache),
      async countTail(projectIds, minLevel, sources) {
        const rows = await db.any<{ bucket: number; l0: number | null; l1: number | null; l2: number | null; l3: number | null; l4: number | null }>(
          COUNT_TAIL_BUCKETS,
          {
            ...bucketParams(sources),
            projects: projectIds,
            minLevel,
          },
        );
        const tailFloors = new Map<number, number>();
        const counts: BucketCount[] = [];
        for (const r of rows) {
          const bucket = Number(r.bucket);
          if (bucket < 0) {
            if (r.l0 !== null) tailFloors.set(-1 - bucket, Number(r.l0));
          } else {
            [r.l0, r.l1, r.l2, r.l3, r.l4].forEach((n, level) => {
              counts.push({ bucket, level, n: Number(n ?? 0) });
            });
          }
        }
        return { counts, tailFloors };
      },
    },
    candidates(projectId, filter, after, limit) {
      const text = textConditions(filter);
      return db.any(candidatesSql(text.sql), {
        ...text.values,
        project: projectId,
        afterTs: after?.ts ?? filter.from,
        afterLevel: after?.level ?? -1,
        afterId: after?.id ?? -1,
        to: filter.to,
        minLevel: filter.minLevel ?? 0,
        limit,
      });
    },
    async anyInRange(projectId, from, to) {
      return (await db.one<{ found: boolean }>(ANY_IN_RANGE, { project: projectId, from, to })).found;
    },
  };
}

export function logHistogram(
  db: SqlExecutor,
  selection: LogSelection & { from: number; to: number },
  grid: HistogramGrid,
  cache: DictionaryCache,
): Promise<HistogramCounts | null> {
  return planHistogram(histogramReads(db, cache), selection, grid);
}
