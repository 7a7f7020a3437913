/**
 * The log verbs of the PostgreSQL backend: quota-checked batch ingestion
 * under project row locks, and queries whose terms are matched by the GIN
 * index on `terms`. `PostgresReads`/`PostgresWrites` delegate here.
 */
import type { LogEntryOutcome, LogFilter, LogIngestRequest, LogRow, LogSelection, Page } from '../storage.js';
import { outcomesOf, planIngest, projectIdsOf, type ProjectUsage } from '../log-quota.js';
import { MAX_PROJECT_TERMS, projectTerm } from '../log-terms.js';
import { planQuery, type LogPlanReads } from '../log-plan.js';
import type { Queryable } from './postgres-reads.js';
import * as sql from './log-sql.js';

const MIN_TS = -Number.MAX_SAFE_INTEGER;
const MAX_TS = Number.MAX_SAFE_INTEGER;
/** Rows per INSERT statement. */
const INSERT_CHUNK = 500;
/** Longest pause between two checks while a settle waits for ingestion in flight. */
const SETTLE_POLL_MAX_MS = 16;

/** Quotes one lexeme for tsquery input (terms never need it; escaping keeps it safe anyway). */
function lexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * The tsquery text of the selection's terms and prefixes (ANDed), with its
 * projects' terms ORed in when there are few, or null when it has no term.
 */
export function tsqueryOf(filter: LogFilter, projectIds: readonly number[] = []): string | null {
  if (filter.terms.length === 0 && filter.prefixes.length === 0) return null;
  const parts = [...filter.terms.map(lexeme), ...filter.prefixes.map((p) => `${lexeme(p)}:*`)];
  if (projectIds.length > 0 && projectIds.length <= MAX_PROJECT_TERMS) parts.push(`(${projectIds.map((id) => lexeme(projectTerm(id))).join(' | ')})`);
  return parts.join(' & ');
}

function filterParams(filter: LogFilter): { minLevel: number; from: number; to: number; tsquery: string | null } {
  return { minLevel: filter.minLevel ?? 0, from: filter.from ?? MIN_TS, to: filter.to ?? MAX_TS, tsquery: tsqueryOf(filter) };
}

/** Quota-checked insert of several requests inside the caller's transaction. */
export async function ingestLogs(db: Queryable, requests: readonly LogIngestRequest[]): Promise<LogEntryOutcome[][]> {
  const rows = await db.any<{ id: number } & ProjectUsage>(sql.LOCK_PROJECT_USAGE, [projectIdsOf(requests)]);
  // Before any id is drawn: live streams settling on these projects wait for us (see lastLogId).
  await db.any(sql.MARK_INGESTING, [sql.INGEST_MARK_CLASS, projectIdsOf(requests)]);
  const plan = planIngest(requests, new Map(rows.map((r) => [Number(r.id), { ...r }])));
  if (plan.admitted.length === 0) return outcomesOf(plan, []);

  const ids: number[] = [];
  // Bounded statements: a 10 MiB request never becomes one 30 MB parameter.
  // Ids ascend across the chunks too (one session, one statement after another).
  for (let from = 0; from < plan.admitted.length; from += INSERT_CHUNK) {
    const batch = JSON.stringify(
      plan.admitted.slice(from, from + INSERT_CHUNK).map((a) => ({
        p: a.projectId,
        r: a.receivedAt,
        t: a.entry.timestamp,
        l: a.entry.level,
        b: a.entry.bytes,
        body: a.entry.body,
        terms: `${a.entry.terms} ${projectTerm(a.projectId)}`,
      })),
    );
    const inserted = await db.any<{ id: number }>(sql.INSERT_LOG_ENTRIES, [batch]);
    ids.push(...inserted.map((r) => Number(r.id)).sort((a, b) => a - b));
  }
  const added = [...plan.added].filter(([, sum]) => sum.entries > 0);
  await db.none(sql.ADD_PROJECT_USAGE, [added.map(([id]) => id), added.map(([, s]) => s.entries), added.map(([, s]) => s.bytes)]);
  return outcomesOf(plan, ids);
}

/**
 * Live streams read forward by id, so they must never pass an entry that
 * commits later with a smaller id (D29: no gap). Ingestion locks its
 * projects' rows before drawing ids, so within one project ids commit in
 * order, but two transactions on different projects may commit out of id
 * order, and the largest id overall may belong to another project.
 *
 * Settling: every ingestion transaction holds a shared advisory lock per
 * project (its "mark", taken before it draws ids, never contended). One
 * statement reads the largest visible id and the transactions marked on
 * these projects right now; then this waits (polling pg_locks) until those
 * transactions have ended. A transaction marked later draws ids above the
 * answer; one that ended before the scan is visible to any later read. So
 * no entry of these projects can commit at or below the answer afterwards.
 * Unlike a row lock, this never queues behind ingestion that starts after
 * the settle, so it waits at most for the transactions in flight.
 */
export async function lastLogId(db: Queryable, settledProjects?: readonly number[]): Promise<number> {
  if (!settledProjects?.length) return Number((await db.one<{ id: number }>(sql.SELECT_LAST_LOG_ID)).id);
  const settle = await db.one<{ horizon: number; waiting: string[] }>(sql.SETTLE_POSITION, [sql.INGEST_MARK_CLASS, settledProjects]);
  let waiting = settle.waiting;
  for (let delayMs = 1; waiting.length > 0; delayMs = Math.min(delayMs * 2, SETTLE_POLL_MAX_MS)) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    waiting = (await db.one<{ waiting: string[] }>(sql.STILL_INGESTING, [sql.INGEST_MARK_CLASS, waiting])).waiting;
  }
  return Number(settle.horizon);
}

/** The reads `planQuery` (log-plan.ts) combines, in PostgreSQL. */
function planReads(db: Queryable): LogPlanReads {
  const C = sql.LOG_CONDITIONS;
  /** Conditions for the filters actually given (see LOG_CONDITIONS), and their values. */
  const conditionsOf = (filter: LogFilter, projectIds: readonly number[], withTime: boolean) => {
    const tsquery = tsqueryOf(filter, projectIds);
    const conditions: string[] = [];
    if (filter.minLevel !== null && filter.minLevel > 0) conditions.push(C.minLevel);
    if (withTime && filter.from !== null) conditions.push(C.from);
    if (withTime && filter.to !== null) conditions.push(C.to);
    if (tsquery !== null) conditions.push(C.tsquery);
    return { conditions, values: { minLevel: filter.minLevel, from: filter.from, to: filter.to, tsquery } };
  };
  return {
    async countInRange(projectId, from, to, cap) {
      return (await db.one<{ n: number }>(sql.COUNT_PROJECT_LOGS_IN_RANGE, [projectId, from, to, cap])).n;
    },
    async newestIdInRange(projectId, from, to, beforeId) {
      const row = await db.one<{ id: number | null }>(sql.NEWEST_PROJECT_LOG_ID_IN_RANGE, [projectId, from, to, beforeId]);
      return row.id === null ? null : Number(row.id);
    },
    inRange(projectId, filter, beforeId, limit) {
      const { conditions, values } = conditionsOf(filter, [projectId], false);
      return db.any<LogRow>(sql.selectLogsInRange(conditions), {
        ...values,
        from: filter.from ?? MIN_TS,
        to: filter.to ?? MAX_TS,
        project: projectId,
        beforeId,
        limit,
      });
    },
    /**
     * Without a term each project walks its own (project_id, id) index
     * (LATERAL) and the pages are merged; with terms, see `termWalk`.
     */
    walk(projectIds, filter, beforeId, limit) {
      const { conditions, values } = conditionsOf(filter, projectIds, true);
      if (values.tsquery !== null) return termWalk(db, projectIds, filter, beforeId, limit);
      const params = { ...values, beforeId, limit, projects: projectIds, project: projectIds[0] };
      const all = beforeId < Number.MAX_SAFE_INTEGER ? [C.beforeId, ...conditions] : conditions;
      if (projectIds.length === 1) return db.any<LogRow>(sql.selectLogsNewestFirst([C.project, ...all]), params);
      return db.any<LogRow>(sql.selectLogsPerProjectNewestFirst([C.eachProject, ...all]), params);
    },
  };
}

/**
 * Rows of each project a term query first examines one by one: 1000 for one
 * project, fewer each for a group (about 1000 in all, at least 100 each).
 */
function firstWindow(projects: number): number {
  return Math.max(100, Math.ceil(1000 / projects));
}

/** A second window is read only when the first one's hit rate says it fills the page within this many rows in all. */
const MAX_SECOND_WINDOW = 20_000;

/**
 * Terms on PostgreSQL, in steps that stay fast whatever the planner's
 * statistics say (measured over 1M rows: left to itself it intersected a
 * 100k-row project bitmap with the GIN bitmap, 230–370 ms for a common
 * term). One round trip each:
 * 1. each project's newest rows (its (project_id, id) index) are checked
 *    against the filter; if the hit rate says a larger window would fill
 *    the page (a fairly common term or prefix), one more window is read;
 * 2a. once a page of matches is known, T is its oldest match: the projects
 *    whose window stopped above T are read down to T (index ranges), after
 *    which every match at or above T is known;
 * 2b. otherwise (a rare term), the matches below the windows come from the
 *    GIN index alone: a rare term's few matches, found at once whatever
 *    their age.
 * Rows seen twice are kept once; the result is merged newest first.
 */
async function termWalk(db: Queryable, projectIds: readonly number[], filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]> {
  const C = sql.LOG_CONDITIONS;
  const filters: string[] = [];
  if (filter.minLevel !== null && filter.minLevel > 0) filters.push(C.minLevel);
  if (filter.from !== null) filters.push(C.from);
  if (filter.to !== null) filters.push(C.to);
  const values = { minLevel: filter.minLevel, from: filter.from, to: filter.to, limit, tsquery: tsqueryOf(filter) };

  /** Per project: the id its reading stopped at (everything from there up is known) and whether rows remain below. */
  const projects = new Map(projectIds.map((id) => [id, { before: beforeId, open: true }]));
  const rows: LogRow[] = [];
  let examined = 0;
  const readWindows = async (size: number) => {
    const open = [...projects].filter(([, p]) => p.open);
    const scanned = await db.any<{ windowProject: number; id: number; hit: boolean; receivedAt: number | null; body: string | null }>(
      sql.selectTermWindows([C.tsquery, ...filters]),
      { ...values, projects: open.map(([id]) => id), befores: open.map(([, p]) => p.before), windows: open.map(() => size) },
    );
    const counts = new Map<number, number>();
    for (const r of scanned) {
      const id = Number(r.id);
      const p = projects.get(Number(r.windowProject))!;
      p.before = Math.min(p.before, id);
      counts.set(Number(r.windowProject), (counts.get(Number(r.windowProject)) ?? 0) + 1);
      if (r.hit) rows.push({ id, projectId: Number(r.windowProject), receivedAt: Number(r.receivedAt), body: r.body! });
    }
    for (const [id, p] of open) if ((counts.get(id) ?? 0) < size) p.open = false;
    examined += scanned.length;
  };

  await readWindows(firstWindow(projectIds.length));
  const openCount = () => [...projects.values()].filter((p) => p.open).length;
  if (openCount() > 0 && rows.length > 0 && rows.length < limit) {
    const needed = ((limit - rows.length) * examined) / rows.length;
    if (examined + 2 * needed <= MAX_SECOND_WINDOW) await readWindows(Math.ceil((2 * needed) / openCount()));
  }
  const open = [...projects].filter(([, p]) => p.open);
  if (open.length > 0 && rows.length >= limit) {
    rows.sort((a, b) => b.id - a.id);
    const lowestId = rows[limit - 1]!.id;
    const short = open.filter(([, p]) => p.before > lowestId);
    if (short.length > 0) {
      rows.push(
        ...(await db.any<LogRow>(sql.selectLogsInIdRanges([C.tsquery, ...filters]), {
          ...values,
          projects: short.map(([id]) => id),
          floors: short.map(([, p]) => p.before),
          lowestId,
        })),
      );
    }
  } else if (open.length > 0) {
    const openIds = open.map(([id]) => id);
    const found = await db.multi(`${sql.TERM_SEARCH_SETTINGS}; ${sql.selectLogsNewestFirst([C.anyProjectUnindexed, C.beforeIdUnindexed, C.tsquery, ...filters])}`, {
      ...values,
      projects: openIds,
      beforeId: Math.max(...open.map(([, p]) => p.before)),
      // One project's term narrows the GIN search cheaply; ORing several
      // would make GIN union their (large) posting lists: rows are filtered
      // by project instead.
      tsquery: tsqueryOf(filter, openIds.length === 1 ? openIds : []),
    });
    rows.push(...(found[found.length - 1] as LogRow[]));
  }
  const seen = new Set<number>();
  return rows
    .filter((r) => (seen.has(r.id) ? false : (seen.add(r.id), true)))
    .sort((a, b) => b.id - a.id)
    .slice(0, limit);
}

export function queryLogs(db: Queryable, selection: LogSelection, page: Page): Promise<LogRow[]> {
  return planQuery(planReads(db), selection, page);
}

/**
 * Entries above `afterId`, oldest first. Over several projects this may
 * return an entry while one with a smaller id is still uncommitted (see
 * `lastLogId`); live streams keep only what lies below a settled position.
 */
export function logsAfter(db: Queryable, selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> {
  return db.any<LogRow>(sql.QUERY_PROJECTS_LOGS_ASC, { ...filterParams(selection), afterId, limit, projects: selection.projectIds });
}
