/**
 * The log verbs of the SQLite backend: quota-checked batch ingestion and
 * index-served queries. `SqliteReadOps`/`SqliteWriteOps` delegate here.
 * Queries follow `log-plan.ts`; this file supplies its reads:
 * - terms: FTS5 drives, newest rowid first, with the project term inside
 *   the MATCH; level and time are checked on the joined row;
 * - a minimum level: one walk of (project_id, level, id) per level, merged;
 * - time ranges: counts, id windows and rows through (project_id, ts);
 * - otherwise (project_id, id) newest first.
 */
import type { LogEntryOutcome, LogFilter, LogIngestRequest, LogRow, LogSelection, Page } from '../storage.js';
import { outcomesOf, planIngest, projectIdsOf, type AdmittedEntry, type ProjectUsage } from '../log-quota.js';
import { MAX_PROJECT_TERMS, projectTerm } from '../log-terms.js';
import { mergeNewestFirst, planQuery, type LogPlanReads } from '../log-plan.js';
import type { SqlExecutor } from './connection.js';
import type { SqlRow } from './row-mappers.js';
import * as SQL from './log-sql.js';

/** Bounds bound when a filter is absent (SQLite integers are 64-bit). */
const MIN_TS = -Number.MAX_SAFE_INTEGER;
const MAX_TS = Number.MAX_SAFE_INTEGER;
const HIGHEST_LEVEL = 4;
/** Rows per INSERT statement. */
const INSERT_CHUNK = 500;

function ftsText(a: AdmittedEntry): string {
  return `${a.entry.terms} ${projectTerm(a.projectId)}`;
}

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toLogRow(r: SqlRow): LogRow {
  return { id: Number(r.id), projectId: Number(r.project_id), receivedAt: Number(r.received_at), body: r.body as string };
}

/** Quota-checked insert of several requests; the caller holds the write transaction. */
export async function ingestLogs(db: SqlExecutor, requests: readonly LogIngestRequest[]): Promise<LogEntryOutcome[][]> {
  const usageRows = await db.all(SQL.SELECT_PROJECT_USAGE, [JSON.stringify(projectIdsOf(requests))]);
  const usage = new Map<number, ProjectUsage>(
    usageRows.map((r) => [
      Number(r.id),
      { maxEntries: numOrNull(r.max_entries), maxBytes: numOrNull(r.max_bytes), entryCount: Number(r.entry_count), totalBytes: Number(r.total_bytes) },
    ]),
  );
  const plan = planIngest(requests, usage);
  if (plan.admitted.length === 0) return outcomesOf(plan, []);

  const sequence = await db.get(SQL.SELECT_LOG_SEQUENCE);
  const firstId = Number(sequence?.seq ?? 0) + 1;
  // Bounded statements: a 10 MiB request never becomes one 30 MB parameter.
  for (let from = 0; from < plan.admitted.length; from += INSERT_CHUNK) {
    const rows = JSON.stringify(
      plan.admitted
        .slice(from, from + INSERT_CHUNK)
        .map((a) => [a.projectId, a.receivedAt, a.entry.timestamp, a.entry.level, a.entry.bytes, a.entry.body, ftsText(a)]),
    );
    await db.run(SQL.INSERT_LOG_ENTRIES, [firstId + from, rows]);
    await db.run(SQL.INSERT_LOG_TERMS, [firstId + from, rows]);
  }
  const added = [...plan.added].filter(([, sum]) => sum.entries > 0).map(([id, sum]) => [id, sum.entries, sum.bytes]);
  await db.run(SQL.ADD_PROJECT_USAGE, [JSON.stringify(added)]);
  return outcomesOf(
    plan,
    plan.admitted.map((_, i) => firstId + i),
  );
}

export async function lastLogId(db: SqlExecutor): Promise<number> {
  const row = await db.get(SQL.SELECT_LAST_LOG_ID);
  return Number(row?.id ?? 0);
}

/** The FTS5 MATCH expression of the selection, or null when it has no term. */
export function matchExpression(selection: LogSelection): string | null {
  if (selection.terms.length === 0 && selection.prefixes.length === 0) return null;
  // Terms never contain `"` (see PreparedEntry.terms), so quoting is enough.
  const parts = [...selection.terms.map((t) => `"${t}"`), ...selection.prefixes.map((p) => `"${p}"*`)];
  if (selection.projectIds.length <= MAX_PROJECT_TERMS) {
    parts.push(`(${selection.projectIds.map((id) => `"${projectTerm(id)}"`).join(' OR ')})`);
  }
  return parts.join(' AND ');
}

function bounds(filter: LogFilter): { minLevel: number; from: number; to: number } {
  return { minLevel: filter.minLevel ?? 0, from: filter.from ?? MIN_TS, to: filter.to ?? MAX_TS };
}

/** The reads `planQuery` (log-plan.ts) combines, in SQLite. */
function planReads(db: SqlExecutor): LogPlanReads {
  const ftsQuery = async (projectIds: readonly number[], filter: LogFilter, match: string, lowestId: number, beforeId: number, limit: number) => {
    const { minLevel, from, to } = bounds(filter);
    const rows = await db.all(SQL.QUERY_LOGS_FTS_DESC, [match, lowestId, beforeId, JSON.stringify(projectIds), minLevel, from, to, limit]);
    return rows.map(toLogRow);
  };
  return {
    async countInRange(projectId, from, to, cap) {
      return Number((await db.get(SQL.COUNT_PROJECT_LOGS_IN_RANGE, [projectId, from, to, cap]))?.n ?? 0);
    },
    async newestIdInRange(projectId, from, to, beforeId) {
      return numOrNull((await db.get(SQL.PROJECT_LOG_IDS_IN_RANGE, [projectId, from, to, beforeId]))?.hi);
    },
    async inRange(projectId, filter, beforeId, limit) {
      const { minLevel, from, to } = bounds(filter);
      const match = matchExpression({ ...filter, projectIds: [projectId] });
      if (match === null) return (await db.all(SQL.QUERY_PROJECT_LOGS_IN_RANGE, [projectId, from, to, beforeId, minLevel, limit])).map(toLogRow);
      // Terms too: FTS5 walks only the id window of the range.
      const window = await db.get(SQL.PROJECT_LOG_IDS_IN_RANGE, [projectId, from, to, beforeId]);
      const lo = numOrNull(window?.lo);
      const hi = numOrNull(window?.hi);
      return lo === null || hi === null ? [] : ftsQuery([projectId], filter, match, lo, hi + 1, limit);
    },
    async walk(projectIds, filter, beforeId, limit) {
      const match = matchExpression({ ...filter, projectIds: [...projectIds] });
      if (match !== null) return ftsQuery(projectIds, filter, match, 0, beforeId, limit);
      const lists = await Promise.all(projectIds.map((projectId) => walkProject(db, projectId, filter, beforeId, limit)));
      return mergeNewestFirst(lists, limit);
    },
  };
}

/** One project, no terms: (project_id, id), or one (project_id, level, id) walk per level, merged. */
async function walkProject(db: SqlExecutor, projectId: number, filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]> {
  const { minLevel, from, to } = bounds(filter);
  if (minLevel > 0) {
    const levels = Array.from({ length: HIGHEST_LEVEL - minLevel + 1 }, (_, i) => minLevel + i);
    const lists = await Promise.all(
      levels.map(async (level) => (await db.all(SQL.QUERY_PROJECT_LEVEL_LOGS, [projectId, level, beforeId, from, to, limit])).map(toLogRow)),
    );
    return mergeNewestFirst(lists, limit);
  }
  return (await db.all(SQL.QUERY_PROJECT_LOGS, [projectId, beforeId, minLevel, from, to, limit])).map(toLogRow);
}

export function queryLogs(db: SqlExecutor, selection: LogSelection, page: Page): Promise<LogRow[]> {
  return planQuery(planReads(db), selection, page);
}

export async function logsAfter(db: SqlExecutor, selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> {
  const { minLevel, from, to } = bounds(selection);
  const match = matchExpression(selection);
  if (match !== null) {
    const rows = await db.all(SQL.QUERY_LOGS_FTS_ASC, [match, afterId, JSON.stringify(selection.projectIds), minLevel, from, to, limit]);
    return rows.map(toLogRow);
  }
  const lists = await Promise.all(
    selection.projectIds.map(async (projectId) => (await db.all(SQL.QUERY_PROJECT_LOGS_ASC, [projectId, afterId, minLevel, from, to, limit])).map(toLogRow)),
  );
  return lists
    .flat()
    .sort((a, b) => a.id - b.id)
    .slice(0, limit);
}
