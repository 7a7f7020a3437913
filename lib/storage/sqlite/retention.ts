/**
 * Retention in SQLite: the statements and verbs the purge job
 * runs. Each delete verb removes one bounded chunk inside the caller's write
 * transaction, so the writer lock is held briefly and ingestion queued
 * behind it gets its turn between chunks. Freed pages go back to the
 * operating system through incremental vacuum (the file is created with
 * auto_vacuum = INCREMENTAL, see connection.ts).
 */
import type { AuditPurgeChunk, ExpiredLogScope, PurgedLogChunk } from '../types-retention.js';
import type { SqlExecutor } from './connection.js';
import { RollupTally, minuteOf } from '../log-index/log-rollup.js';

const DAY_MS = 86_400_000;

/**
 * Params: now, ms per day. One probe per project on (project_id,
 * received_at); retention_days ≤ 36500 keeps the arithmetic exact.
 */
export const EXPIRED_LOG_SCOPES = `SELECT p.id AS project_id, ?1 - p.retention_days * ?2 AS received_before
  FROM projects AS p
  WHERE EXISTS (SELECT 1 FROM log_entries AS e INDEXED BY log_entries_received
                WHERE e.project_id = p.id AND e.received_at < ?1 - p.retention_days * ?2)
  ORDER BY p.id`;

/** Params: project, received before, limit. The oldest expired entries of one project. */
export const SELECT_EXPIRED_LOG_CHUNK = `SELECT id, bytes, ts, level FROM log_entries INDEXED BY log_entries_received
  WHERE project_id = ?1 AND received_at < ?2
  ORDER BY received_at LIMIT ?3`;

/**
 * Params: project, JSON array of deleted entry ids. The blocks holding
 * those entries (a project's blocks are disjoint: the first one ending at
 * or after an id holds it) that no longer hold any entry.
 */
export const SELECT_EMPTIED_BLOCKS = `SELECT b.last_id FROM log_blocks AS b
  WHERE b.last_id IN (SELECT (SELECT MIN(x.last_id) FROM log_blocks AS x INDEXED BY log_blocks_project
                              WHERE x.project_id = ?1 AND x.last_id >= d.value)
                      FROM json_each(?2) AS d)
    AND NOT EXISTS (SELECT 1 FROM log_entries AS e WHERE e.id >= b.first_id AND e.id <= b.last_id)`;

/** Params: JSON array of block ids. The contentless_delete FTS5 table deletes by rowid. */
export const DELETE_BLOCK_TERMS = `DELETE FROM log_block_terms WHERE rowid IN (SELECT value FROM json_each(?1))`;

/** Params: JSON array of block ids. */
export const DELETE_BLOCKS = `DELETE FROM log_blocks WHERE last_id IN (SELECT value FROM json_each(?1))`;

/** Params: JSON array of entry ids. */
export const DELETE_LOG_ENTRIES = `DELETE FROM log_entries WHERE id IN (SELECT value FROM json_each(?1))`;

/**
 * Takes deleted entries off the rollup (log-rollup.ts), then drops the
 * rows left at zero. Params: project, JSON array of `[span, start, level,
 * n]`.
 */
export const SUBTRACT_LOG_ROLLUP = `UPDATE log_rollup SET n = n - (d.value ->> 3)
  FROM json_each(?2) AS d
  WHERE project_id = ?1 AND span = d.value ->> 0 AND start = d.value ->> 1 AND level = d.value ->> 2`;
export const DELETE_EMPTY_LOG_ROLLUP = `DELETE FROM log_rollup
  WHERE project_id = ?1 AND n <= 0 AND (span, start) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))`;

/** Params: project, entries, bytes. */
export const SUBTRACT_PROJECT_USAGE = `UPDATE projects SET entry_count = entry_count - ?2, total_bytes = total_bytes - ?3 WHERE id = ?1`;

/**
 * Params: JSON array of actions, created before, limit. No ORDER BY: any
 * expired rows will do, and the (action, created_at) index serves each
 * action's range without sorting the whole backlog.
 */
export const DELETE_AUDIT_CHUNK = `DELETE FROM audit_log WHERE id IN (
  SELECT id FROM audit_log INDEXED BY audit_log_action_created
  WHERE action IN (SELECT value FROM json_each(?1)) AND created_at < ?2
  LIMIT ?3)`;

/** Params: now, limit. A token is live while expires_at > now, so these can never be used again. */
export const DELETE_EXPIRED_REFRESH_TOKENS = `DELETE FROM refresh_tokens WHERE id IN (
  SELECT id FROM refresh_tokens WHERE expires_at <= ?1 LIMIT ?2)`;

export const FREELIST_COUNT = `PRAGMA freelist_count`;

/** Largest incremental_vacuum step one call runs (4 KiB pages: 32 MiB). */
const MAX_VACUUM_PAGES = 8192;

export async function expiredLogScopes(db: SqlExecutor, now: number): Promise<ExpiredLogScope[]> {
  const rows = await db.all(EXPIRED_LOG_SCOPES, [now, DAY_MS]);
  return rows.map((r) => ({ projectId: Number(r.project_id), receivedBefore: Number(r.received_before) }));
}

export async function purgeLogEntries(db: SqlExecutor, projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk> {
  const rows = await db.all(SELECT_EXPIRED_LOG_CHUNK, [projectId, receivedBefore, limit]);
  if (rows.length === 0) return { entries: 0, bytes: 0 };
  const ids = JSON.stringify(rows.map((r) => r.id));
  const bytes = rows.reduce((sum, r) => sum + Number(r.bytes), 0);
  const { changes } = await db.run(DELETE_LOG_ENTRIES, [ids]);
  // The rows were read in this transaction under the writer lock, so all of them go.
  if (changes !== rows.length) throw new Error(`retention deleted ${changes} of ${rows.length} selected log entries`);
  // A block partly purged keeps its index row (it may name words no entry
  // holds any more; queries check entries anyway); an emptied one goes.
  const emptied = JSON.stringify((await db.all(SELECT_EMPTIED_BLOCKS, [projectId, ids])).map((r) => Number(r.last_id)));
  await db.run(DELETE_BLOCK_TERMS, [emptied]);
  await db.run(DELETE_BLOCKS, [emptied]);
  await db.run(SUBTRACT_PROJECT_USAGE, [projectId, rows.length, bytes]);
  const tally = new RollupTally();
  for (const r of rows) tally.add(projectId, minuteOf(Number(r.ts)), Number(r.level), 1);
  const rollup = JSON.stringify(tally.all().map((c) => [c.span, c.start, c.level, c.n]));
  await db.run(SUBTRACT_LOG_ROLLUP, [projectId, rollup]);
  await db.run(DELETE_EMPTY_LOG_ROLLUP, [projectId, rollup]);
  return { entries: rows.length, bytes };
}

export async function purgeAuditRows(db: SqlExecutor, chunk: AuditPurgeChunk): Promise<number> {
  if (chunk.actions.length === 0) return 0;
  return (await db.run(DELETE_AUDIT_CHUNK, [JSON.stringify(chunk.actions), chunk.createdBefore, chunk.limit])).changes;
}

export async function purgeExpiredRefreshTokens(db: SqlExecutor, now: number, limit: number): Promise<number> {
  return (await db.run(DELETE_EXPIRED_REFRESH_TOKENS, [now, limit])).changes;
}

/**
 * Runs one bounded incremental vacuum and returns the free pages left.
 * A PRAGMA takes no bound parameters, so the page count is spliced, after
 * being forced to a small positive integer. It runs through `all`, which
 * steps the statement to the end: a single step frees only one page.
 */
export async function reclaimFreePages(db: SqlExecutor, maxPages: number): Promise<number> {
  const pages = Math.min(MAX_VACUUM_PAGES, Math.max(1, Math.floor(Number(maxPages) || 1)));
  await db.all(`PRAGMA incremental_vacuum(${pages})`);
  const row = await db.get(FREELIST_COUNT);
  return Number(row?.freelist_count ?? 0);
}
