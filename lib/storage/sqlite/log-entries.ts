/**
 * The log verbs of the SQLite backend: quota-checked batch ingestion into
 * the tail, and queries planned by query-plan.ts over the tail and the
 * sealed blocks (sealing.ts). `SqliteReads`/`SqliteWrites` delegate here.
 * The tail's reads: time ranges (counts, newest id and rows) through
 * (project_id, ts), otherwise (project_id, id).
 */
import type { LogEntryOutcome, LogIngestRequest, LogRow, LogSelection } from '../types-logs.js';
import type { LogFilter } from '../../search/log-filter.js';
import type { Page } from '../types-org.js';
import { outcomesOf, planIngest, projectIdsOf, type ProjectUsage } from '../log-index/log-quota.js';
import { batchRollupCounts, ingestParts, partJson } from '../log-index/ingest-layout.js';
import { withIds } from '../log-index/presealed.js';
import { mergeNewestFirst, planLogsAfter, planQuery, type QueryPlanReads } from '../log-index/query-plan.js';
import { exactNeedle } from '../../search/entry-match.js';
import type { SqlExecutor } from './connection.js';
import type { SqlRow } from './row-mappers.js';
import * as logSql from './log-sql.js';
import { blockStatements, sqliteSealedReads } from './sealing.js';
import { DictionaryCache } from '../log-index/sealed-reads.js';
import { NO_EARLIEST_TS, NO_LATEST_TS, NO_UPPER_ID } from '../types-logs.js';

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toLogRow(r: SqlRow): LogRow {
  return { id: Number(r.id), projectId: Number(r.project_id), receivedAt: Number(r.received_at), body: r.body as string };
}

/** A view of bytes as a Buffer (no copy), which sqlite3 binds as a blob. */
const blob = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Quota-checked insert of several requests; the caller holds the write transaction. */
export async function ingestLogs(db: SqlExecutor, requests: readonly LogIngestRequest[]): Promise<LogEntryOutcome[][]> {
  const usageRows = await db.all(logSql.SELECT_PROJECT_USAGE, [JSON.stringify(projectIdsOf(requests))]);
  const usage = new Map<number, ProjectUsage>(
    usageRows.map((r) => [
      Number(r.id),
      { maxEntries: numOrNull(r.max_entries), maxBytes: numOrNull(r.max_bytes), entryCount: Number(r.entry_count), totalBytes: Number(r.total_bytes) },
    ]),
  );
  const plan = planIngest(requests, usage);
  if (plan.admitted === 0) return outcomesOf(plan, []);

  // Rank r gets id firstId + r: the transaction holds the only write lock.
  const firstId = Number(usageRows[0]?.seq ?? 0) + 1;
  // Statements are issued ahead of their turn (at most PIPELINE_DEPTH
  // waiting), so the writer connection always has the next one. Nothing
  // here depends on an earlier statement's result (ids are explicit), and
  // the caller commits only after all of them settle. The bound keeps a
  // 10 MiB batch from holding all its joined parts (and their native
  // copies) at once.
  const inFlight: Promise<unknown>[] = [];
  let failure: { reason: unknown } | null = null;
  const issue = async (statement: Promise<unknown>) => {
    inFlight.push(statement.catch((reason) => (failure ??= { reason })));
    if (inFlight.length > PIPELINE_DEPTH) await inFlight.shift();
  };
  // Presealed blocks go in for projects whose tail is empty (log-index/presealed.ts).
  const emptyTails = new Map(
    usageRows.filter((r) => Number(r.tail_entries) === 0 && r.dictionary_id !== null).map((r) => [Number(r.id), Number(r.dictionary_id)]),
  );
  const presealed = new Map<number, number>();
  for (const part of ingestParts(requests, plan, { emptyTails })) {
    if (part.kind === 'rows') {
      await issue(db.run(logSql.INSERT_LOG_ENTRIES, [firstId + part.firstRank, blob(partJson(part))]));
      continue;
    }
    let rank = part.firstRank;
    for (const block of part.blocks) {
      const first = firstId + rank;
      const run = withIds(
        block,
        Array.from({ length: block.count }, (_, i) => first + i),
      );
      for (const [statement, params] of blockStatements(part.projectId, run)) await issue(db.run(statement, params));
      rank += block.count;
    }
    presealed.set(part.projectId, (presealed.get(part.projectId) ?? 0) + part.count);
  }
  if (presealed.size > 0) {
    const lastId = firstId + plan.admitted - 1;
    await issue(db.run(logSql.START_LOG_SEQUENCE, [lastId]));
    await issue(db.run(logSql.ADVANCE_LOG_SEQUENCE, [lastId]));
  }
  const added = [...plan.added].filter(([, sum]) => sum.entries > 0).map(([id, sum]) => [id, sum.entries, sum.bytes]);
  await issue(db.run(logSql.ADD_PROJECT_USAGE, [JSON.stringify(added)]));
  const rollup = batchRollupCounts(requests, plan).map((c) => [c.projectId, c.span, c.start, c.level, c.n]);
  await issue(db.run(logSql.ADD_LOG_ROLLUP, [JSON.stringify(rollup)]));
  // The projects' tail counts (sealing.ts), after the rows they count.
  const tailed = added.map(([id, entries]) => [id, entries! - (presealed.get(id!) ?? 0)]).filter(([, n]) => n! > 0);
  if (tailed.length > 0) await issue(db.run(logSql.ADD_LOG_TAILS, [JSON.stringify(tailed)]));
  await Promise.all(inFlight);
  if (failure) throw (failure as { reason: unknown }).reason;
  return outcomesOf(
    plan,
    Array.from({ length: plan.admitted }, (_, rank) => firstId + rank),
  );
}

/** Statements issued and not yet finished, at most. */
const PIPELINE_DEPTH = 2;

export async function lastLogId(db: SqlExecutor): Promise<number> {
  const row = await db.get(logSql.SELECT_LAST_LOG_ID);
  return Number(row?.id ?? 0);
}

export async function lastLogIdOf(db: SqlExecutor, projectIds: readonly number[]): Promise<number> {
  const row = await db.get(logSql.SELECT_LAST_LOG_ID_OF_PROJECTS, [JSON.stringify(projectIds)]);
  return Number(row?.id ?? 0);
}

function bounds(filter: LogFilter): { minLevel: number; from: number; to: number } {
  return { minLevel: filter.minLevel ?? 0, from: filter.from ?? NO_EARLIEST_TS, to: filter.to ?? NO_LATEST_TS };
}

/** Up to two exact-match needles for instr ('' when absent). */
function needles(filter: LogFilter): [string, string] {
  const [a, b] = filter.exact.map((e) => exactNeedle(e.value));
  return [a ?? '', b ?? ''];
}

/** The reads `planQuery` (query-plan.ts) combines, in SQLite. */
function planReads(db: SqlExecutor, cache: DictionaryCache): QueryPlanReads {
  return {
    async countInRange(projectId, from, to, cap) {
      return Number((await db.get(logSql.COUNT_PROJECT_LOGS_IN_RANGE, [projectId, from, to, cap]))?.n ?? 0);
    },
    async newestEntryTime(projectId, beforeId) {
      const row = await db.get(logSql.NEWEST_PROJECT_LOG_TIME, [projectId, beforeId]);
      return row === undefined ? null : { id: Number(row.id), ts: Number(row.ts) };
    },
    async newestIdInRange(projectId, from, to, beforeId) {
      return numOrNull((await db.get(logSql.NEWEST_PROJECT_LOG_ID_IN_RANGE, [projectId, from, to, beforeId]))?.hi);
    },
    async inRange(projectId, filter, beforeId, limit) {
      const { minLevel, from, to } = bounds(filter);
      return (await db.all(logSql.QUERY_PROJECT_LOGS_IN_RANGE, [projectId, from, to, beforeId, minLevel, ...needles(filter), limit ?? -1])).map(toLogRow);
    },
    async newest(projectIds, filter, beforeId, limit) {
      const { minLevel, from, to } = bounds(filter);
      const lists = await Promise.all(
        projectIds.map(async (projectId) => (await db.all(logSql.QUERY_PROJECT_LOGS, [projectId, beforeId, minLevel, from, to, limit])).map(toLogRow)),
      );
      return mergeNewestFirst(lists, limit);
    },
    async oldest(projectIds, filter, afterId, limit) {
      const { minLevel, from, to } = bounds(filter);
      const lists = await Promise.all(projectIds.map((projectId) => db.all(logSql.QUERY_PROJECT_LOGS_ASC, [projectId, afterId, minLevel, from, to, limit])));
      // Each project is read in a snapshot of its own (perhaps on its own
      // reader connection): a later one could hold an entry committed past
      // one of another project that an earlier one missed. Every snapshot
      // holds every id up to the smallest last id any of them saw (ids
      // follow commit order here), so the answer stops there and stays a
      // gapless run from afterId: a stream never steps past an entry.
      const seen = Math.min(...lists.map((rows) => Number(rows[0]!.seq)));
      return lists
        .flatMap((rows) => rows.filter((r) => r.id !== null && Number(r.id) <= seen).map(toLogRow))
        .sort((a, b) => a.id - b.id)
        .slice(0, limit);
    },
    sealed: { reads: sqliteSealedReads(db), cache },
  };
}

/**
 * Over several projects, each project's statement may run on its own
 * reader connection, in a snapshot of its own: a later one could see an
 * entry committed after an earlier one's snapshot was taken, above an
 * entry of another project that the earlier one missed. Every id up to the
 * last one committed before the reads start is in every read's snapshot
 * (ids follow commit order here), so a page over several projects starts
 * there: it never skips an entry that a later read would find below it.
 * (Oldest-first reads bound themselves, see `oldest`.)
 */
export async function queryLogs(db: SqlExecutor, selection: LogSelection, page: Page, cache: DictionaryCache = new DictionaryCache()): Promise<LogRow[]> {
  const bound = selection.projectIds.length > 1 ? await lastLogId(db) : NO_UPPER_ID;
  const beforeId = Math.min(page.beforeId ?? NO_UPPER_ID, bound + 1);
  return planQuery(planReads(db, cache), selection, { ...page, beforeId });
}

export function logsAfter(
  db: SqlExecutor,
  selection: LogSelection,
  afterId: number,
  limit: number,
  cache: DictionaryCache = new DictionaryCache(),
): Promise<LogRow[]> {
  return planLogsAfter(planReads(db, cache), selection, afterId, limit);
}
