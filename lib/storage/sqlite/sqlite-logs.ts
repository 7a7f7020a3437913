/**
 * The log verbs of the SQLite backend: quota-checked batch ingestion and
 * index-served queries. `SqliteReadOps`/`SqliteWriteOps` delegate here.
 *
 * Query plans (each a bounded walk of one index, never a project scan):
 * - any term or prefix: FTS5 drives, newest rowid first, with the project
 *   term inside the MATCH; level and time are checked on the joined row;
 * - a minimum level: one walk of (project_id, level, id) per level, merged;
 * - a time range holding few entries (< RANGE_CAP): those ids from
 *   (project_id, ts), then rows newest first; a range holding many starts
 *   the newest-first walk at the newest id inside the range;
 * - otherwise (project_id, id) newest first.
 * A group query runs the per-project plan for each project and merges.
 */
import type { LogEntryOutcome, LogFilter, LogIngestRequest, LogRow, LogSelection, Page } from '../storage.js';
import { outcomesOf, planIngest, projectIdsOf, type AdmittedEntry, type ProjectUsage } from '../log-quota.js';
import { MAX_PROJECT_TERMS, projectTerm } from '../log-terms.js';
import type { SqlExecutor } from './connection.js';
import type { SqlRow } from './row-mappers.js';
import * as SQL from './log-sql.js';

/** Bounds bound when a filter is absent (SQLite integers are 64-bit). */
const NO_UPPER_ID = Number.MAX_SAFE_INTEGER;
const MIN_TS = -Number.MAX_SAFE_INTEGER;
const MAX_TS = Number.MAX_SAFE_INTEGER;
const HIGHEST_LEVEL = 4;
/** A time range with fewer entries than this is read through (project_id, ts) and sorted. */
const RANGE_CAP = 4000;
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

/** Newest-first rows of several lists, merged and cut to `limit`. */
function mergeNewestFirst(lists: LogRow[][], limit: number): LogRow[] {
  if (lists.length === 1) return lists[0]!.slice(0, limit);
  return lists
    .flat()
    .sort((a, b) => b.id - a.id)
    .slice(0, limit);
}

export async function queryLogs(db: SqlExecutor, selection: LogSelection, page: Page): Promise<LogRow[]> {
  const beforeId = page.beforeId ?? NO_UPPER_ID;
  const { minLevel, from, to } = bounds(selection);
  const match = matchExpression(selection);
  if (match !== null) {
    const rows = await db.all(SQL.QUERY_LOGS_FTS_DESC, [match, beforeId, JSON.stringify(selection.projectIds), minLevel, from, to, page.limit]);
    return rows.map(toLogRow);
  }
  const lists = await Promise.all(selection.projectIds.map((projectId) => queryProject(db, projectId, selection, beforeId, page.limit)));
  return mergeNewestFirst(lists, page.limit);
}

/** One project, no terms: the cheapest index walk for its level and time filters. */
async function queryProject(db: SqlExecutor, projectId: number, filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]> {
  const { minLevel, from, to } = bounds(filter);
  let upper = beforeId;
  if (filter.from !== null || filter.to !== null) {
    const counted = await db.get(SQL.COUNT_PROJECT_LOGS_IN_RANGE, [projectId, from, to, RANGE_CAP]);
    if (Number(counted?.n ?? 0) < RANGE_CAP) {
      return (await db.all(SQL.QUERY_PROJECT_LOGS_IN_RANGE, [projectId, from, to, beforeId, minLevel, limit])).map(toLogRow);
    }
    if (filter.to !== null) {
      // Many entries in range: start the newest-first walk at the newest of
      // them rather than walking down through everything newer.
      const newest = numOrNull((await db.get(SQL.MAX_PROJECT_LOG_ID_IN_RANGE, [projectId, from, to, beforeId]))?.id);
      if (newest === null) return [];
      upper = newest + 1;
    }
  }
  if (minLevel > 0) {
    const levels = Array.from({ length: HIGHEST_LEVEL - minLevel + 1 }, (_, i) => minLevel + i);
    const lists = await Promise.all(
      levels.map(async (level) => (await db.all(SQL.QUERY_PROJECT_LEVEL_LOGS, [projectId, level, upper, from, to, limit])).map(toLogRow)),
    );
    return mergeNewestFirst(lists, limit);
  }
  return (await db.all(SQL.QUERY_PROJECT_LOGS, [projectId, upper, minLevel, from, to, limit])).map(toLogRow);
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
