/**
 * The log verbs of the PostgreSQL backend: quota-checked batch ingestion
 * (with its search-index blocks, log-blocks.ts) under project row locks,
 * and queries planned by query-plan.ts, whose candidate blocks come from the
 * GIN index on `log_blocks.terms`. `PostgresReads`/`PostgresWrites`
 * delegate here.
 */
import type { LogEntryOutcome, LogIngestRequest, LogRow, LogSelection } from '../types-logs.js';
import type { LogFilter } from '../../search/log-filter.js';
import type { Page } from '../types-org.js';
import { outcomesOf, planIngest, projectIdsOf, type ProjectUsage } from '../log-index/log-quota.js';
import { batchRollupCounts, blockLayout, rowParts } from '../log-index/ingest-layout.js';
import { projectTerm, type BlockMatch } from '../../search/log-terms.js';
import { BlockLookahead, planLogsAfter, planQuery, type LogBlockRef, type QueryPlanReads, type WalkDirection } from '../log-index/query-plan.js';
import { asciiWordNeedles, exactNeedle, mayFoldFromNonAscii } from '../../search/entry-match.js';
import type { SqlExecutor } from './connection.js';
import type { IngestReport } from '../storage.js';
import * as logSql from './log-sql.js';
import type { OpenIngestion } from './ingesting.js';
import { NO_EARLIEST_TS, NO_LATEST_TS, NO_UPPER_ID } from '../types-logs.js';

/** Blocks per INSERT statement. */
const BLOCK_CHUNK = 16;
/**
 * A step of at least this many blocks is read as two halves at once, on two
 * pooled connections: reading the blocks' entries is PostgreSQL's work,
 * so two backends on two cores halve it. Blocks an
 * earlier lookup found are read by id, in either direction. A newest-first
 * step that needs a lookup looks up each half (one more lookup; OFFSET
 * picks the second): the halves come from two snapshots; a block committed
 * in between is newer than both (ids only grow), and one purged in between
 * is among the oldest, so the second half can only skip blocks past
 * retention. An oldest-first step that needs a lookup reads in one
 * statement: there a purged block would shift the second half past a live one.
 */
const SPLIT_STEP_BLOCKS = 16;
/** Longest pause between two checks while a settle waits for ingestion in flight. */
const SETTLE_POLL_MAX_MS = 16;

/** Quotes one lexeme for tsquery input (terms never need it; escaping keeps it safe anyway). */
function lexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The tsquery text of a block query. */
export function tsqueryOf(match: BlockMatch): string {
  const parts = [...match.all.map(lexeme), ...match.prefixes.map((p) => `${lexeme(p)}:*`)];
  for (const alternatives of match.anyOf) parts.push(`(${alternatives.map(lexeme).join(' | ')})`);
  return parts.join(' & ');
}

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

/** The longest ASCII word of `q` for BLOCK_STEP ('' when none). */
function wordNeedle(filter: LogFilter): { word: string; fold: boolean } {
  const [needle] = asciiWordNeedles(filter, 1);
  return needle === undefined ? { word: '', fold: false } : { word: needle.text, fold: mayFoldFromNonAscii(needle) };
}

/**
 * UTF-8 JSON bytes as text. The ingestion statements send it as a bound
 * parameter ({text, values}: the extended protocol) rather than formatted
 * into the SQL: pg-promise would escape a ~300 kB literal and PostgreSQL
 * lex it back (docs/measurements.md, "PostgreSQL ingestion").
 */
const text = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/** Quota-checked insert of several requests inside the caller's transaction. */
export async function ingestLogs(
  db: SqlExecutor,
  requests: readonly LogIngestRequest[],
  marked?: (pid: number) => void,
  report?: IngestReport,
): Promise<LogEntryOutcome[][]> {
  const rows = await db.any<{ id: number } & ProjectUsage>(logSql.LOCK_PROJECT_USAGE, [projectIdsOf(requests)]);
  // Before any id is drawn: live streams settling on these projects see us (see lastLogId).
  // Its snapshot is taken after the locks above were granted, so the projects' last ids it reads are final.
  const mark = await db.one<{ pid: number; lastIds: Record<string, string | number> }>(logSql.MARK_INGESTING, [
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
  for (const part of rowParts(requests, plan)) {
    const inserted = await db.any<{ id: number }>({ text: logSql.INSERT_LOG_ENTRIES, values: [text(part.json)] });
    ids.push(...inserted.map((r) => Number(r.id)).sort((a, b) => a - b));
  }
  const blocks = blockLayout(requests, plan);
  for (const c of blocks.chunks) {
    await db.none({ text: logSql.INSERT_CHUNK_BLOCKS, values: [ids.slice(c.firstRank, c.firstRank + c.count), c.projectId, projectTerm(c.projectId), text(c.json)] });
  }
  for (let from = 0; from < blocks.ranked.length; from += BLOCK_CHUNK) {
    const batch = JSON.stringify(blocks.ranked.slice(from, from + BLOCK_CHUNK).map((b) => ({ p: b.projectId, f: ids[b.firstRank], l: ids[b.lastRank], terms: b.terms })));
    await db.none({ text: logSql.INSERT_LOG_BLOCKS, values: [batch] });
  }
  const added = [...plan.added].filter(([, sum]) => sum.entries > 0);
  const outcomes = outcomesOf(plan, ids);
  const firstIds = new Map<number, number>();
  outcomes.forEach((request, i) => {
    const projectId = requests[i]!.projectId;
    for (const outcome of request) if ('id' in outcome) firstIds.set(projectId, Math.min(firstIds.get(projectId) ?? Infinity, outcome.id));
  });
  await db.none(logSql.ADD_PROJECT_USAGE, [
    added.map(([id]) => id),
    added.map(([, s]) => s.entries),
    added.map(([, s]) => s.bytes),
    added.map(([id]) => firstIds.get(id)!),
  ]);
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

/** A row of BLOCK_STEP: its block, and one of the block's entries or none (nulls). */
type StepRow = { blockLastId: number; blockProjectId: number; blockFirstId: number } & ({ [K in keyof LogRow]: LogRow[K] } | { [K in keyof LogRow]: null });

/** The distinct blocks of some BLOCK_STEP rows, in walk order (a block's key is the column its order follows). */
function blocksOfStep(direction: WalkDirection, rows: readonly StepRow[]): LogBlockRef[] {
  const blocks = new Map<number, LogBlockRef>();
  for (const r of rows) {
    if (blocks.has(r.blockLastId)) continue;
    const key = direction === 'newest' ? r.blockLastId : r.blockFirstId;
    blocks.set(r.blockLastId, { projectId: r.blockProjectId, firstId: r.blockFirstId, lastId: r.blockLastId, key });
  }
  return [...blocks.values()].sort(direction === 'newest' ? (a, b) => b.key - a.key : (a, b) => a.key - b.key);
}

/** The entries of some BLOCK_STEP rows (a block without one gave a row of nulls). */
function entriesOfStep(rows: readonly StepRow[]): LogRow[] {
  const entries: LogRow[] = [];
  for (const r of rows) if (r.id !== null) entries.push({ id: r.id, projectId: r.projectId, receivedAt: r.receivedAt, body: r.body });
  return entries;
}

/** The last result of a multi-statement query (the SELECT after its SET LOCAL). */
const lastResult = (results: StepRow[][]): StepRow[] => results[results.length - 1]!;

/**
 * Blocks a lookup asks the index for, beyond what its step reads: the GIN
 * bitmap finds every candidate block and sorts them anyway, so the later
 * steps of a walk read their blocks' entries by id (BLOCK_ENTRIES) without
 * a lookup of their own, which costs several times a step's reads.
 */
const LOOKAHEAD_BLOCKS = 128;

/** The reads `planQuery` (query-plan.ts) combines, in PostgreSQL. One per query: it keeps its walks' lookaheads. */
function planReads(db: SqlExecutor): QueryPlanReads {
  // By walk (a query's walks over single projects may run at once).
  const lookahead = new BlockLookahead();
  return {
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
    async blockStep(direction, projectIds, match, filter, position, after, limit) {
      const conditions = { ...bounds(filter), ...needles(filter), ...wordNeedle(filter), position };
      const tsquery = tsqueryOf(match);
      const walk = `${direction} ${position} ${projectIds.join(',')} ${tsquery}`;
      const taken = lookahead.take(walk, after, limit);
      if (taken !== null) {
        const { blocks, more } = taken;
        const entriesOf = async (part: LogBlockRef[]) => {
          if (part.length === 0) return [];
          const arrays = { blockProjects: part.map((b) => b.projectId), blockFirsts: part.map((b) => b.firstId), blockLasts: part.map((b) => b.lastId) };
          return lastResult(await db.multi<StepRow>(logSql.BLOCK_ENTRIES[direction], { ...conditions, ...arrays }));
        };
        // Blocks named by id read the same in any snapshot: both directions split.
        const half = Math.ceil(blocks.length / 2);
        const rows = blocks.length >= SPLIT_STEP_BLOCKS ? (await Promise.all([entriesOf(blocks.slice(0, half)), entriesOf(blocks.slice(half))])).flat() : await entriesOf(blocks);
        return { blocks, rows: entriesOfStep(rows), more };
      }
      const params = { ...conditions, tsquery, projects: projectIds, after: after ?? (direction === 'newest' ? NO_UPPER_ID : 0) };
      const read = async (offset: number, count: number, entriesOfFirst: number) =>
        lastResult(await db.multi<StepRow>(logSql.BLOCK_STEP[direction], { ...params, offset, limit: count, read: entriesOfFirst }));
      if (direction === 'newest' && limit >= SPLIT_STEP_BLOCKS) {
        const half = Math.ceil(limit / 2);
        const [newer, older] = await Promise.all([read(0, half, half), read(half, limit - half, limit - half)]);
        // Exhausted only if the older part came back short: a block committed
        // between the two snapshots makes the parts overlap by one, not end.
        const rows = [...newer, ...older];
        return { blocks: blocksOfStep(direction, rows), rows: entriesOfStep(rows), more: blocksOfStep(direction, older).length === limit - half };
      }
      const want = Math.max(limit, LOOKAHEAD_BLOCKS);
      const rows = await read(0, want, limit);
      return { ...lookahead.keep(walk, after, blocksOfStep(direction, rows), limit, want), rows: entriesOfStep(rows) };
    },
  };
}

export function queryLogs(db: SqlExecutor, selection: LogSelection, page: Page): Promise<LogRow[]> {
  return planQuery(planReads(db), selection, page);
}

/**
 * Entries above `afterId`, oldest first. Over several projects this may
 * return an entry while one with a smaller id is still uncommitted (see
 * `lastLogId`); live streams keep only what lies below a settled position.
 */
export function logsAfter(db: SqlExecutor, selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> {
  return planLogsAfter(planReads(db), selection, afterId, limit);
}
