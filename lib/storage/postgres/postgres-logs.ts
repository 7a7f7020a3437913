/**
 * The log verbs of the PostgreSQL backend: quota-checked batch ingestion
 * under project row locks, and queries whose terms are matched by the GIN
 * index on `terms`. `PostgresReads`/`PostgresWrites` delegate here.
 */
import type { LogEntryOutcome, LogFilter, LogIngestRequest, LogRow, LogSelection, Page } from '../storage.js';
import { outcomesOf, planIngest, projectIdsOf, type ProjectUsage } from '../log-quota.js';
import type { Queryable } from './postgres-reads.js';
import * as sql from './log-sql.js';

const NO_UPPER_ID = Number.MAX_SAFE_INTEGER;
const MIN_TS = -Number.MAX_SAFE_INTEGER;
const MAX_TS = Number.MAX_SAFE_INTEGER;
/** Rows per INSERT statement. */
const INSERT_CHUNK = 500;

/** Quotes one lexeme for tsquery input (terms never need it; escaping keeps it safe anyway). */
function lexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The tsquery text of the selection's terms and prefixes (ANDed), or null when it has none. */
export function tsqueryOf(filter: LogFilter): string | null {
  if (filter.terms.length === 0 && filter.prefixes.length === 0) return null;
  return [...filter.terms.map(lexeme), ...filter.prefixes.map((p) => `${lexeme(p)}:*`)].join(' & ');
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
        terms: a.entry.terms,
      })),
    );
    const inserted = await db.any<{ id: number }>(sql.INSERT_LOG_ENTRIES, [batch]);
    ids.push(...inserted.map((r) => Number(r.id)).sort((a, b) => a - b));
  }
  const added = [...plan.added].filter(([, sum]) => sum.entries > 0);
  await db.none(sql.ADD_PROJECT_USAGE, [added.map(([id]) => id), added.map(([, s]) => s.entries), added.map(([, s]) => s.bytes)]);
  return outcomesOf(plan, ids);
}

export async function lastLogId(db: Queryable): Promise<number> {
  return Number((await db.one<{ id: number }>(sql.SELECT_LAST_LOG_ID)).id);
}

export function queryLogs(db: Queryable, selection: LogSelection, page: Page): Promise<LogRow[]> {
  const params = { ...filterParams(selection), beforeId: page.beforeId ?? NO_UPPER_ID, limit: page.limit };
  if (selection.projectIds.length === 1) {
    return db.any<LogRow>(sql.QUERY_PROJECT_LOGS, { ...params, project: selection.projectIds[0] });
  }
  return db.any<LogRow>(sql.QUERY_PROJECTS_LOGS, { ...params, projects: selection.projectIds });
}

/**
 * Live streams read forward by id, so this read must never miss an entry
 * that commits later with a smaller id (D29: no gap). Ingestion locks its
 * projects' rows before drawing ids, so within one project ids commit in
 * order; two transactions on different projects may commit out of id order.
 * A read over several projects therefore first takes FOR KEY SHARE on them
 * (in id order, like ingestion, so never a deadlock): it waits for the
 * ingestion in flight into them to commit and holds new ingestion off until
 * it is done, so it sees a gapless prefix.
 */
export function logsAfter(db: Queryable, selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> {
  const params = { ...filterParams(selection), afterId, limit, projects: selection.projectIds };
  if (selection.projectIds.length === 1) return db.any<LogRow>(sql.QUERY_PROJECTS_LOGS_ASC, params);
  return db.tx(async (t) => {
    await t.any(sql.SHARE_LOCK_PROJECTS, [selection.projectIds]);
    return t.any<LogRow>(sql.QUERY_PROJECTS_LOGS_ASC, params);
  });
}
