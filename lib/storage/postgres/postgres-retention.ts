/**
 * Retention in PostgreSQL (D15, D28): the statements and verbs the purge
 * job runs, each deleting one bounded chunk inside the caller's
 * transaction. Space is reused and returned by autovacuum.
 */
import type { AuditPurgeChunk, ExpiredLogScope, PurgedLogChunk } from '../storage.js';
import type { Queryable } from './postgres-reads.js';

const DAY_MS = 86_400_000;

/**
 * Params: now, ms per day. One probe per project on (project_id,
 * received_at); retention_days ≤ 36500 keeps the arithmetic in range.
 */
export const EXPIRED_LOG_SCOPES = `SELECT p.id AS "projectId", $1::bigint - p.retention_days * $2::bigint AS "receivedBefore"
  FROM projects AS p
  WHERE EXISTS (SELECT 1 FROM log_entries AS e
                WHERE e.project_id = p.id AND e.received_at < $1::bigint - p.retention_days * $2::bigint)
  ORDER BY p.id`;

/**
 * Params: project, received before, limit. Deletes the chunk (the GIN
 * terms go with the row) and takes it off the project's counters in one
 * statement, so counters and rows change together. Ingestion only ever
 * adds rows, so it never waits on these row locks: the project row lock
 * taken last cannot close a cycle with an ingest holding it.
 */
export const PURGE_LOG_CHUNK = `WITH doomed AS (
    SELECT id FROM log_entries
    WHERE project_id = $1 AND received_at < $2
    ORDER BY received_at LIMIT $3
  ), gone AS (
    DELETE FROM log_entries WHERE id IN (SELECT id FROM doomed) RETURNING bytes
  ), removed AS (
    SELECT count(*) AS entries, COALESCE(sum(bytes), 0)::bigint AS bytes FROM gone
  ), usage AS (
    UPDATE projects SET entry_count = entry_count - removed.entries, total_bytes = total_bytes - removed.bytes
    FROM removed WHERE projects.id = $1 AND removed.entries > 0
    RETURNING 1
  )
  SELECT entries, bytes FROM removed`;

/** Params: actions, created before, limit. Served by (action, created_at); any expired rows will do. */
export const PURGE_AUDIT_CHUNK = `DELETE FROM audit_log WHERE id IN (
  SELECT id FROM audit_log WHERE action = ANY($1::text[]) AND created_at < $2 LIMIT $3)`;

/** Params: now, limit. A token is live while expires_at > now, so these can never be used again. */
export const PURGE_EXPIRED_REFRESH_TOKENS = `DELETE FROM refresh_tokens WHERE id IN (
  SELECT id FROM refresh_tokens WHERE expires_at <= $1 LIMIT $2)`;

/** An arbitrary constant that only logkeep's maintenance pass uses (the migrations use another). */
export const MAINTENANCE_LOCK_KEY = '7813586357102193';
export const TRY_MAINTENANCE_LOCK = `SELECT pg_try_advisory_lock($1::bigint) AS locked`;
export const RELEASE_MAINTENANCE_LOCK = `SELECT pg_advisory_unlock($1::bigint) AS released`;

export function expiredLogScopes(db: Queryable, now: number): Promise<ExpiredLogScope[]> {
  return db.any<ExpiredLogScope>(EXPIRED_LOG_SCOPES, [now, DAY_MS]);
}

export async function purgeLogEntries(db: Queryable, projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk> {
  return db.one<PurgedLogChunk>(PURGE_LOG_CHUNK, [projectId, receivedBefore, limit]);
}

export function purgeAuditRows(db: Queryable, chunk: AuditPurgeChunk): Promise<number> {
  if (chunk.actions.length === 0) return Promise.resolve(0);
  return db.result(PURGE_AUDIT_CHUNK, [chunk.actions, chunk.createdBefore, chunk.limit], (r) => r.rowCount);
}

export function purgeExpiredRefreshTokens(db: Queryable, now: number, limit: number): Promise<number> {
  return db.result(PURGE_EXPIRED_REFRESH_TOKENS, [now, limit], (r) => r.rowCount);
}
