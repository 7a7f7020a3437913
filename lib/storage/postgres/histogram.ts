/**
 * The histogram reads (histogram-plan.ts) in PostgreSQL, both through
 * (project_id, ts) INCLUDE (id, level): a GROUP BY bucket and level (an
 * index-only scan), and pages of candidate entries along (ts, level, id). pg-promise formats the values into the text, so
 * absent text tests are simply left out.
 */
import type { LogFilter } from '../../search/log-filter.js';
import type { LogSelection } from '../types-logs.js';
import { asciiWordNeedles, exactNeedle, mayFoldFromNonAscii } from '../../search/entry-match.js';
import { planHistogram, type HistogramCounts, type HistogramGrid, type HistogramReads } from '../histogram-plan.js';
import type { Queryable } from './connection.js';

/** How many exact-match values and ASCII words of `q` the SQL tests (the longest: likeliest rare); entry-match decides the rest. */
const NEEDLE_SLOTS = 4;
const WORD_SLOTS = 3;

const COUNT_BUCKETS = `SELECT (ts - $(origin)) / $(step) AS bucket, level, count(*)::integer AS n
  FROM log_entries
  WHERE project_id = ANY($(projects)::bigint[]) AND ts >= $(from) AND ts <= $(to) AND level >= $(minLevel)
  GROUP BY 1, 2`;

/**
 * The text tests of a candidate page: each needle in the text; each ASCII
 * word in the text lower-cased under the "C" collation (ASCII only), or
 * any text holding U+212A or U+0130 when the word may come from them
 * (entry-match.ts `mayFoldFromNonAscii`).
 */
function textConditions(filter: LogFilter): { sql: string; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const parts: string[] = [];
  const needles = filter.exact.map((e) => exactNeedle(e.value)).sort((a, b) => b.length - a.length).slice(0, NEEDLE_SLOTS);
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

function histogramReads(db: Queryable): HistogramReads {
  return {
    countBuckets(projectIds, filter, grid) {
      return db.any(COUNT_BUCKETS, { origin: grid.origin, step: grid.stepMs, projects: projectIds, from: filter.from, to: filter.to, minLevel: filter.minLevel ?? 0 });
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
  };
}

export function logHistogram(db: Queryable, selection: LogSelection & { from: number; to: number }, grid: HistogramGrid): Promise<HistogramCounts | null> {
  return planHistogram(histogramReads(db), selection, grid);
}
