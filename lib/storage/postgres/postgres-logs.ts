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
 * order, and the largest id overall may belong to another project. Settling
 * therefore takes FOR KEY SHARE on the projects (in id order, like
 * ingestion, so never a deadlock): it waits for the ingestion in flight into
 * them and holds new ingestion off while the largest id is read. No entry of
 * these projects can commit at or below the answer afterwards.
 */
export async function lastLogId(db: Queryable, settledProjects?: readonly number[]): Promise<number> {
  if (!settledProjects?.length) return Number((await db.one<{ id: number }>(sql.SELECT_LAST_LOG_ID)).id);
  return db.tx(async (t) => {
    await t.any(sql.SHARE_LOCK_PROJECTS, [settledProjects]);
    return Number((await t.one<{ id: number }>(sql.SELECT_LAST_LOG_ID)).id);
  });
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
     * One statement: a term query stays one even over several projects (the
     * GIN index finds the few matches of a rare term across all of them at
     * once); without a term each project walks its own (project_id, id)
     * index (LATERAL) and the pages are merged.
     */
    walk(projectIds, filter, beforeId, limit) {
      const { conditions, values } = conditionsOf(filter, projectIds, true);
      const params = { ...values, beforeId, limit, projects: projectIds, project: projectIds[0] };
      const all = beforeId < Number.MAX_SAFE_INTEGER ? [C.beforeId, ...conditions] : conditions;
      if (projectIds.length === 1) return db.any<LogRow>(sql.selectLogsNewestFirst([C.project, ...all]), params);
      if (values.tsquery !== null) return db.any<LogRow>(sql.selectLogsNewestFirst([C.projects, ...all]), params);
      return db.any<LogRow>(sql.selectLogsPerProjectNewestFirst([C.eachProject, ...all]), params);
    },
  };
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
