/**
 * The log verbs of the PostgreSQL backend: quota-checked batch ingestion
 * into the tail under project row locks, and queries planned by
 * query-plan.ts over the tail and the sealed blocks (sealing.ts).
 * `PostgresReads`/`PostgresWrites` delegate here.
 */
import type { LogEntryOutcome, LogIngestRequest, LogRow, LogSelection } from '../types-logs.js';
import type { LogFilter } from '../../search/log-filter.js';
import type { Page } from '../types-org.js';
import { outcomesOf, planIngest, projectIdsOf, type ProjectUsage } from '../log-index/log-quota.js';
import { batchRollupCounts, ingestParts, partColumns } from '../log-index/ingest-layout.js';
import { columnArrays } from '../log-index/column-arrays.js';
import { withIds } from '../log-index/presealed.js';
import { planLogsAfter, planQuery, type QueryPlanReads } from '../log-index/query-plan.js';
import { exactNeedle } from '../../search/entry-match.js';
import type { SqlExecutor } from './connection.js';
import type { IngestReport } from '../storage.js';
import * as logSql from './log-sql.js';
import type { OpenIngestion } from './ingesting.js';
import { postgresSealedReads } from './sealing.js';
import { DRAW_LOG_IDS, insertPresealed } from './presealed-blocks.js';
import { DictionaryCache, type SealedReads } from '../log-index/sealed-reads.js';
import { SEAL_MAX_ENTRIES } from '../log-index/sealed-block.js';
import type { TailPiece as RememberedPiece } from '../log-index/tail-memory.js';
import { NO_EARLIEST_TS, NO_LATEST_TS } from '../types-logs.js';

/** Longest pause between two checks while a settle waits for ingestion in flight. */
const SETTLE_POLL_MAX_MS = 16;

function bounds(filter: LogFilter): { minLevel: number; from: number; to: number } {
  return { minLevel: filter.minLevel ?? 0, from: filter.from ?? NO_EARLIEST_TS, to: filter.to ?? NO_LATEST_TS };
}

/** The WALK_CONDITIONS of the filters actually given. */
function walkConditions(filter: LogFilter): string[] {
  const C = logSql.WALK_CONDITIONS;
  const conditions: string[] = [];
  if (filter.minLevel !== null && filter.minLevel > 0) conditions.push(C.minLevel);
  if (filter.from !== null) conditions.push(C.from);
  if (filter.to !== null) conditions.push(C.to);
  return conditions;
}

/** Up to two exact-match needles for strpos ('' always matches). */
function needles(filter: LogFilter): { needle1: string; needle2: string } {
  const [a, b] = filter.exact.map((e) => exactNeedle(e.value));
  return { needle1: a ?? '', needle2: b ?? '' };
}

/** A project's tail rows written by one transaction (chunks' rows with their ids), and the entries its tail then held. */
export interface TailWrite {
  projectId: number;
  pieces: TailPiece[];
  tailEntries: number;
}

/** What an ingestion tells its caller about the tails, to tell the sealer once it commits. */
export interface TailListener {
  /** A project's tail holds a full run to seal after this batch. */
  tailFull?: () => void;
  /** The tail rows written to a project. */
  tailWritten?: (write: TailWrite) => void;
}

type TailPiece = Omit<RememberedPiece, 'skip'>;

/** Quota-checked insert of several requests inside the caller's transaction. */
export async function ingestLogs(
  db: SqlExecutor,
  requests: readonly LogIngestRequest[],
  marked?: (pid: number) => void,
  report?: IngestReport,
  tails: TailListener = {},
): Promise<LogEntryOutcome[][]> {
  const rows = await db.any<{ id: number } & ProjectUsage>(logSql.LOCK_PROJECT_USAGE, [projectIdsOf(requests)]);
  // Before any id is drawn: live streams settling on these projects see us (see lastLogId).
  // Its snapshot is taken after the locks above were granted, so the projects' last ids it reads are final.
  const mark = await db.one<{ pid: number; lastIds: Record<string, string | number>; emptyTails: Record<string, number> | null }>(logSql.MARK_INGESTING, [
    logSql.INGEST_MARK_CLASS,
    projectIdsOf(requests),
    logSql.INGEST_FLOOR_TAG,
  ]);
  marked?.(mark.pid);
  if (report) report.lastIdsBefore = new Map(Object.entries(mark.lastIds).map(([id, last]) => [Number(id), Number(last)]));
  const plan = planIngest(requests, new Map(rows.map((r) => [Number(r.id), { ...r }])));
  if (plan.admitted === 0) return outcomesOf(plan, []);

  // ids[rank]. Ids ascend across the parts too (one session, one statement after another).
  const ids: number[] = [];
  const emptyTails = new Map(Object.entries(mark.emptyTails ?? {}).map(([id, dictionaryId]) => [Number(id), Number(dictionaryId)]));
  const presealedRequests = new Set<number>();
  const presealed = new Map<number, number>();
  const tailPieces = new Map<number, TailPiece[]>();
  for (const part of ingestParts(requests, plan, { emptyTails })) {
    if (part.kind === 'rows') {
      const inserted = await db.any<{ id: number }>({ text: logSql.INSERT_LOG_ENTRIES, values: columnArrays(partColumns(part)) });
      const partIds = inserted.map((r) => Number(r.id)).sort((a, b) => a - b);
      ids.push(...partIds);
      let at = 0;
      for (const piece of part.pieces) {
        const pieces = tailPieces.get(piece.projectId) ?? [];
        pieces.push({ rows: piece.rows, ids: partIds.slice(at, at + piece.count), bytes: piece.bytes });
        tailPieces.set(piece.projectId, pieces);
        at += piece.count;
      }
      continue;
    }
    const drawn = (await db.any<{ id: string }>(DRAW_LOG_IDS, [part.count])).map((r) => Number(r.id)).sort((a, b) => a - b);
    let at = 0;
    for (const block of part.blocks) {
      await insertPresealed(db, part.projectId, withIds(block, drawn.slice(at, at + block.count)), emptyTails.get(part.projectId)!);
      at += block.count;
    }
    ids.push(...drawn);
    presealedRequests.add(part.request);
    presealed.set(part.projectId, (presealed.get(part.projectId) ?? 0) + part.count);
  }
  const added = [...plan.added].filter(([, sum]) => sum.entries > 0);
  const outcomes = outcomesOf(plan, ids);
  // Each project's first id in the tail: what its tail's oldest arrival is read from.
  const firstIds = new Map<number, number>();
  outcomes.forEach((request, i) => {
    if (presealedRequests.has(i)) return;
    const projectId = requests[i]!.projectId;
    for (const outcome of request) if ('id' in outcome) firstIds.set(projectId, Math.min(firstIds.get(projectId) ?? Infinity, outcome.id));
  });
  const tailCounts = await db.any<{ projectId: string | number; entries: string | number }>(logSql.ADD_PROJECT_USAGE, [
    added.map(([id]) => id),
    added.map(([, s]) => s.entries),
    added.map(([, s]) => s.bytes),
    added.map(([id]) => firstIds.get(id) ?? null),
    added.map(([id, s]) => s.entries - (presealed.get(id) ?? 0)),
  ]);
  if (tailCounts.some((t) => Number(t.entries) >= SEAL_MAX_ENTRIES)) tails.tailFull?.();
  for (const t of tailCounts) {
    const pieces = tailPieces.get(Number(t.projectId));
    if (pieces !== undefined) tails.tailWritten?.({ projectId: Number(t.projectId), pieces, tailEntries: Number(t.entries) });
  }
  // After the project rows are locked (above): the purge takes the same order, so the two never deadlock over a rollup row.
  const rollup = batchRollupCounts(requests, plan);
  const column = <K extends keyof (typeof rollup)[number]>(k: K) => rollup.map((c) => c[k]);
  await db.none(logSql.ADD_LOG_ROLLUP, [column('projectId'), column('span'), column('start'), column('level'), column('n')]);
  return outcomes;
}

/**
 * Live streams read forward by id, so they must never pass an entry that
 * commits later with a smaller id (streams must have no gap). Ingestion locks its
 * projects' rows before drawing ids, so within one project ids commit in
 * order, but two transactions on different projects may commit out of id
 * order, and the largest id overall may belong to another project.
 *
 * Settling: every ingestion transaction holds, before it draws ids, a
 * shared advisory lock per project (its "mark") and one whose key holds
 * its floor (the identity sequence's last value then: every id it draws is
 * above). One statement reads the largest visible id M and the transactions
 * marked on these projects right now with their floors. A transaction
 * marked later draws ids above M; one that ended before the scan is
 * visible to any later read; one seen in flight draws ids above its floor.
 * So min(M, the floors seen) is settled at once: no entry of these
 * projects can commit at or below it any more. A transaction whose floor
 * is M or more holds nothing back.
 *
 * `above`: the caller has already read up to that position. When the
 * answer would not pass it, this waits for the transactions holding it
 * back (floor at or below `above`, or none known) to end, and answers
 * min(M, the other floors seen). This never waits for ingestion that
 * started after the scan, nor for ingestion that only draws ids above
 * what the caller has. Waiting for a transaction of this storage's pool
 * takes its end from `open` (no polling); any other is polled in pg_locks.
 */
export async function lastLogId(db: SqlExecutor, settledProjects?: readonly number[], above = Number.POSITIVE_INFINITY, open?: OpenIngestion): Promise<number> {
  if (!settledProjects?.length) return Number((await db.one<{ id: number }>(logSql.SELECT_LAST_LOG_ID)).id);
  const settle = await db.one<{ horizon: number; ingesting: { vxid: string; pid: number | null; floor: number | null }[] }>(logSql.SETTLE_POSITION, [
    logSql.INGEST_MARK_CLASS,
    settledProjects,
    logSql.INGEST_FLOOR_TAG,
  ]);
  const horizon = Number(settle.horizon);
  // A transaction without a floor (a process running older code) may hold anything back.
  const floorOf = (t: { floor: number | null }) => (t.floor === null ? Number.NEGATIVE_INFINITY : Number(t.floor));
  const holding = settle.ingesting.filter((t) => floorOf(t) < horizon);
  const settledAt = (ts: typeof holding) => Math.min(horizon, ...ts.map(floorOf));
  if (settledAt(holding) > above) return settledAt(holding);
  const blocking = holding.filter((t) => floorOf(t) <= above);
  const local: Promise<void>[] = [];
  const foreign: string[] = [];
  for (const t of blocking) {
    const ended = t.pid === null ? null : (open?.ended(t.pid) ?? null);
    if (ended) local.push(ended);
    else foreign.push(t.vxid);
  }
  await Promise.all([...local, waitForEnd(db, foreign, open)]);
  return settledAt(holding.filter((t) => !blocking.includes(t)));
}

/** Polls pg_locks (backing off; `open` may cut a pause short) until none of these transactions holds its mark. */
async function waitForEnd(db: SqlExecutor, transactions: string[], open?: OpenIngestion): Promise<void> {
  let waiting = transactions;
  for (let delayMs = 1; waiting.length > 0; delayMs = Math.min(delayMs * 2, SETTLE_POLL_MAX_MS)) {
    await (open ? open.pause(delayMs) : new Promise((resolve) => setTimeout(resolve, delayMs)));
    waiting = (await db.one<{ waiting: string[] }>(logSql.STILL_INGESTING, [logSql.INGEST_MARK_CLASS, waiting])).waiting;
  }
}

/**
 * The largest id of these projects' entries visible now. Within one project
 * ids commit in order (ingestion locks the project's row before it draws
 * any), so no entry of a single project can commit at or below it later;
 * over several projects one with a smaller id still may (see `lastLogId`).
 */
export async function lastLogIdOf(db: SqlExecutor, projectIds: readonly number[]): Promise<number> {
  return Number((await db.one<{ id: number }>(logSql.SELECT_LAST_LOG_ID_OF_PROJECTS, [projectIds])).id);
}

/**
 * The sealed reads of a query (sealing.ts). No horizon of their own: on
 * PostgreSQL `logsAfter` answers every committed entry above the cursor,
 * and live streams keep only what lies at or below the position they
 * settled before reading (see `lastLogId`). Tail and blocks read in two
 * snapshots stay gapless for one project: its ids commit in order and its
 * tail is sealed oldest run first, so an entry sealed by the second read
 * has every older entry of its project in the first read or sealed too.
 */
export function sealedReadsOf(db: SqlExecutor, cache: DictionaryCache): { reads: SealedReads; cache: DictionaryCache } {
  return { reads: postgresSealedReads(db, () => Promise.resolve(Number.MAX_SAFE_INTEGER)), cache };
}

/**
 * The reads `planQuery` (query-plan.ts) combines, in PostgreSQL: those
 * below see the tail; the sealed blocks are read through `sealed`.
 */
function planReads(db: SqlExecutor, cache: DictionaryCache): QueryPlanReads {
  return {
    sealed: sealedReadsOf(db, cache),
    async countInRange(projectId, from, to, cap) {
      return (await db.one<{ n: number }>(logSql.COUNT_PROJECT_LOGS_IN_RANGE, [projectId, from, to, cap])).n;
    },
    async newestEntryTime(projectId, beforeId) {
      const row = await db.oneOrNone<{ id: string; ts: string }>(logSql.NEWEST_PROJECT_LOG_TIME, [projectId, beforeId]);
      return row === null ? null : { id: Number(row.id), ts: Number(row.ts) };
    },
    async newestIdInRange(projectId, from, to, beforeId) {
      const row = await db.one<{ id: number | null }>(logSql.NEWEST_PROJECT_LOG_ID_IN_RANGE, [projectId, from, to, beforeId]);
      return row.id === null ? null : Number(row.id);
    },
    inRange(projectId, filter, beforeId, limit) {
      return db.any<LogRow>(logSql.QUERY_PROJECT_LOGS_IN_RANGE, { ...bounds(filter), ...needles(filter), project: projectId, beforeId, limit });
    },
    newest(projectIds, filter, beforeId, limit) {
      return db.any<LogRow>(logSql.selectProjectsLogs('newest', walkConditions(filter)), { ...filter, projects: projectIds, beforeId, limit });
    },
    oldest(projectIds, filter, afterId, limit) {
      return db.any<LogRow>(logSql.selectProjectsLogs('oldest', walkConditions(filter)), { ...filter, projects: projectIds, afterId, limit });
    },
  };
}

export function queryLogs(db: SqlExecutor, selection: LogSelection, page: Page, cache: DictionaryCache = new DictionaryCache()): Promise<LogRow[]> {
  return planQuery(planReads(db, cache), selection, page);
}

/**
 * Entries above `afterId`, oldest first. Over several projects this may
 * return an entry while one with a smaller id is still uncommitted (see
 * `lastLogId`); live streams keep only what lies below a settled position.
 */
export function logsAfter(
  db: SqlExecutor,
  selection: LogSelection,
  afterId: number,
  limit: number,
  cache: DictionaryCache = new DictionaryCache(),
): Promise<LogRow[]> {
  return planLogsAfter(planReads(db, cache), selection, afterId, limit);
}
