/**
 * Retention in PostgreSQL: the statements and verbs the purge
 * job runs, each deleting one bounded chunk inside the caller's
 * transaction. Space is reused and returned by autovacuum.
 */
import type { AuditPurgeChunk, ExpiredLogScope, PurgedLogChunk } from '../types-retention.js';
import type { SqlExecutor } from './connection.js';

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
 * Params: project, received before, limit. Deletes the chunk and takes it
 * off the project's counters in one
 * statement, so counters and rows change together. Ingestion only ever
 * adds rows, so it never waits on these row locks: the project row lock
 * taken last cannot close a cycle with an ingest holding it.
 */
export const PURGE_LOG_CHUNK = `WITH doomed AS (
    SELECT id FROM log_entries
    WHERE project_id = $1 AND received_at < $2
    ORDER BY received_at LIMIT $3
  ), gone AS (
    DELETE FROM log_entries WHERE id IN (SELECT id FROM doomed) RETURNING id, bytes, ts, level
  ), removed AS (
    SELECT count(*) AS entries, COALESCE(sum(bytes), 0)::bigint AS bytes, COALESCE(array_agg(id), '{}') AS ids FROM gone
  ), per_span AS (
    SELECT s.span, ts - (((ts % s.span) + s.span) % s.span) AS start, level, count(*) AS n
    FROM gone CROSS JOIN (VALUES (60000), (3600000)) AS s(span) GROUP BY 1, 2, 3
  ), rollup AS (
    SELECT COALESCE(array_agg(span), '{}') AS spans, COALESCE(array_agg(start), '{}') AS starts,
      COALESCE(array_agg(level), '{}') AS levels, COALESCE(array_agg(n), '{}') AS counts FROM per_span
  ), usage AS (
    UPDATE projects SET entry_count = entry_count - removed.entries, total_bytes = total_bytes - removed.bytes
    FROM removed WHERE projects.id = $1 AND removed.entries > 0
    RETURNING 1
  )
  SELECT entries, bytes, ids, spans, starts, levels, counts FROM removed, rollup`;

/**
 * Takes a purged chunk off the rollup (log-rollup.ts), dropping the rows
 * it empties. Run after PURGE_LOG_CHUNK, which holds the project's row
 * lock by then: ingestion locks that row before the same rollup rows, so
 * the two never wait on each other in a circle. Params: project, spans,
 * starts, levels, counts (parallel arrays).
 */
export const SUBTRACT_LOG_ROLLUP = `WITH d AS (
    SELECT * FROM unnest($2::integer[], $3::bigint[], $4::smallint[], $5::bigint[]) AS d(span, start, level, n)
  ), emptied AS (
    DELETE FROM log_rollup AS r USING d
    WHERE r.project_id = $1 AND r.span = d.span AND r.start = d.start AND r.level = d.level AND r.n <= d.n
    RETURNING 1
  )
  UPDATE log_rollup AS r SET n = r.n - d.n FROM d
  WHERE r.project_id = $1 AND r.span = d.span AND r.start = d.start AND r.level = d.level AND r.n > d.n`;

/**
 * Params: project, deleted entry ids. The blocks holding those entries (a
 * project's blocks are disjoint: the first one ending at or after an id
 * holds it) that no longer hold any entry; a block partly purged keeps its
 * index row (queries check entries anyway).
 */
export const DELETE_EMPTIED_BLOCKS = `DELETE FROM log_blocks AS b
  WHERE b.project_id = $1
    AND b.last_id IN (SELECT (SELECT MIN(x.last_id) FROM log_blocks AS x WHERE x.project_id = $1 AND x.last_id >= d.id)
                      FROM unnest($2::bigint[]) AS d(id))
    AND NOT EXISTS (SELECT 1 FROM log_entries AS e WHERE e.project_id = $1 AND e.id >= b.first_id AND e.id <= b.last_id)`;

/** Params: actions, created before, limit. Served by (action, created_at); any expired rows will do. */
export const DELETE_AUDIT_CHUNK = `DELETE FROM audit_log WHERE id IN (
  SELECT id FROM audit_log WHERE action = ANY($1::text[]) AND created_at < $2 LIMIT $3)`;

/** Params: now, limit. A token is live while expires_at > now, so these can never be used again. */
export const DELETE_EXPIRED_REFRESH_TOKENS = `DELETE FROM refresh_tokens WHERE id IN (
  SELECT id FROM refresh_tokens WHERE expires_at <= $1 LIMIT $2)`;

/** An arbitrary constant that only logkeep's maintenance pass uses (the migrations use another). */
export const MAINTENANCE_LOCK_KEY = '7813586357102193';
export const TRY_MAINTENANCE_LOCK = `SELECT pg_try_advisory_lock($1::bigint) AS locked`;
export const RELEASE_MAINTENANCE_LOCK = `SELECT pg_advisory_unlock($1::bigint) AS released`;

export function expiredLogScopes(db: SqlExecutor, now: number): Promise<ExpiredLogScope[]> {
  return db.any<ExpiredLogScope>(EXPIRED_LOG_SCOPES, [now, DAY_MS]);
}

export async function purgeLogEntries(db: SqlExecutor, projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk> {
  type Chunk = { entries: string | number; bytes: string | number; ids: (string | number)[]; spans: number[]; starts: number[]; levels: number[]; counts: number[] };
  const chunk = await db.one<Chunk>(PURGE_LOG_CHUNK, [projectId, receivedBefore, limit]);
  if (Number(chunk.entries) > 0) {
    // Separate statements: within the one above, the deleted rows are still visible.
    await db.none(DELETE_EMPTIED_BLOCKS, [projectId, chunk.ids]);
    await db.none(SUBTRACT_LOG_ROLLUP, [projectId, chunk.spans, chunk.starts, chunk.levels, chunk.counts]);
  }
  return { entries: Number(chunk.entries), bytes: Number(chunk.bytes) };
}

export function purgeAuditRows(db: SqlExecutor, chunk: AuditPurgeChunk): Promise<number> {
  if (chunk.actions.length === 0) return Promise.resolve(0);
  return db.result(DELETE_AUDIT_CHUNK, [chunk.actions, chunk.createdBefore, chunk.limit], (r) => r.rowCount);
}

export function purgeExpiredRefreshTokens(db: SqlExecutor, now: number, limit: number): Promise<number> {
  return db.result(DELETE_EXPIRED_REFRESH_TOKENS, [now, limit], (r) => r.rowCount);
}
