/**
 * Retention in PostgreSQL: the statements and verbs the purge
 * job runs, each deleting one bounded chunk inside the caller's
 * transaction. Space is reused and returned by autovacuum.
 */
import type { AuditPurgeChunk, ExpiredLogScope, PurgedLogChunk } from '../types-retention.js';
import type { SqlExecutor } from './connection.js';
import { SEAL_LOCK, SEAL_LOCK_CLASS, sealInProcess, TAKE_FROM_TAIL } from './sealing.js';
import { insertBlock } from './block-insert.js';
import { decodeSealedBlock, readSealedHeader, type SealDictionary, type SealedEntry } from '../log-index/sealed-block.js';
import { countMinutes, RollupTally } from '../log-index/log-rollup.js';

const DAY_MS = 86_400_000;

/**
 * Params: now, ms per day. One probe per project on (project_id,
 * received_at); retention_days ≤ 36500 keeps the arithmetic in range.
 */
export const EXPIRED_LOG_SCOPES = `SELECT p.id AS "projectId", $1::bigint - p.retention_days * $2::bigint AS "receivedBefore"
  FROM projects AS p
  WHERE EXISTS (SELECT 1 FROM log_entries AS e
                WHERE e.project_id = p.id AND e.received_at < $1::bigint - p.retention_days * $2::bigint)
     OR (SELECT s.min_received_at FROM log_sealed AS s WHERE s.project_id = p.id ORDER BY s.last_id LIMIT 1)
          < $1::bigint - p.retention_days * $2::bigint
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
    DELETE FROM log_entries WHERE project_id = $1 AND id IN (SELECT id FROM doomed) RETURNING id, bytes, ts, level
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

/** $1: project. The project's oldest block, whole. */
const OLDEST_BLOCK = `SELECT last_id AS "lastId", entries, bytes, min_received_at AS "minReceivedAt", max_received_at AS "maxReceivedAt",
    dictionary_id AS "dictionaryId", block
  FROM log_sealed WHERE project_id = $1 ORDER BY last_id LIMIT 1`;

/** $1: project, $2: dictionary id. */
const SELECT_DICTIONARY = `SELECT bytes FROM log_dictionaries WHERE project_id = $1 AND id = $2`;

/** $1: project, $2: block's last id. The block's row and its filter shards. */
const DELETE_BLOCK = `WITH shards AS (DELETE FROM log_filter_shards WHERE project_id = $1 AND block_last_id = $2 RETURNING 1)
  DELETE FROM log_sealed WHERE project_id = $1 AND last_id = $2`;

/** $1: project, $2: entries, $3: bytes. Takes purged entries off the project's usage. */
const SUBTRACT_USAGE = `UPDATE projects SET entry_count = entry_count - $2, total_bytes = total_bytes - $3 WHERE id = $1`;

/**
 * $1: project. Dictionaries older than the one the project's oldest block
 * names (dictionary ids rise with the blocks sealed), the newest always
 * kept: no block names them any more.
 */
const DELETE_UNUSED_DICTIONARIES = `DELETE FROM log_dictionaries WHERE project_id = $1
  AND id < COALESCE((SELECT dictionary_id FROM log_sealed WHERE project_id = $1 ORDER BY last_id LIMIT 1),
                    (SELECT max(id) FROM log_dictionaries WHERE project_id = $1))`;

/**
 * Expired entries of a project's sealed blocks, oldest block first, until
 * at least `limit` are gone or the oldest block left holds none: a block
 * whose entries are all expired is dropped (row and shards); one at the
 * cutoff is rewritten with its unexpired entries only (sealed again with
 * its dictionary; the row and shards replaced), and ends the walk. Usage
 * and the rollup lose exactly the entries removed, in the caller's
 * transaction.
 */
async function purgeSealedBlocks(db: SqlExecutor, projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk> {
  type Block = { lastId: number; entries: number; bytes: number; minReceivedAt: number; maxReceivedAt: number; dictionaryId: number; block: Buffer };
  const removed = { entries: 0, bytes: 0 };
  const rollup = new RollupTally();
  let dropped = false;
  while (removed.entries < limit) {
    const b = await db.oneOrNone<Block>(OLDEST_BLOCK, [projectId]);
    if (b === null || b.minReceivedAt >= receivedBefore) break;
    // A whole block: its header says every entry's time and level; nothing is inflated.
    const whole = b.maxReceivedAt < receivedBefore;
    const entries: (WeighedEntry | (SealedEntry & WeighedEntry))[] = whole
      ? headerEntries(b.block)
      : decodeSealedBlock(b.block, await dictionaryOf(db, projectId, b.dictionaryId)).map((e) => ({ ...e, bytes: Buffer.byteLength(e.body, 'utf8') }));
    const gone = entries.filter((e) => e.receivedAt < receivedBefore);
    const kept = entries.filter((e): e is SealedEntry & WeighedEntry => e.receivedAt >= receivedBefore);
    await db.none(DELETE_BLOCK, [projectId, b.lastId]);
    dropped = true;
    const goneBytes = kept.length === 0 ? b.bytes : gone.reduce((n, e) => n + e.bytes, 0);
    if (kept.length > 0) {
      const dictionary = await dictionaryOf(db, projectId, b.dictionaryId);
      const run = await sealInProcess(
        kept.map(({ bytes: _bytes, ...e }) => e),
        dictionary,
      );
      await insertBlock(db, projectId, run, b.dictionaryId, b.bytes - goneBytes);
    }
    removed.entries += gone.length;
    removed.bytes += goneBytes;
    rollup.addFlat(projectId, countMinutes(gone.map((e) => ({ timestamp: e.ts, level: e.level }))));
    if (kept.length > 0) break;
  }
  if (removed.entries > 0) {
    await db.none(SUBTRACT_USAGE, [projectId, removed.entries, removed.bytes]);
    const counts = rollup.all();
    const column = <K extends keyof (typeof counts)[number]>(k: K) => counts.map((c) => c[k]);
    await db.none(SUBTRACT_LOG_ROLLUP, [projectId, column('span'), column('start'), column('level'), column('n')]);
  }
  if (dropped) await db.none(DELETE_UNUSED_DICTIONARIES, [projectId]);
  return removed;
}

/** A block's dictionary (id 0, or missing: none; a block naming a missing one then fails to decode, never misread). */
async function dictionaryOf(db: SqlExecutor, projectId: number, id: number): Promise<SealDictionary | null> {
  if (id === 0) return null;
  const row = await db.oneOrNone<{ bytes: Buffer }>(SELECT_DICTIONARY, [projectId, id]);
  return row === null ? null : { id, bytes: new Uint8Array(row.bytes) };
}

/** An entry as retention weighs it: its stored length beside what decoding gives (the body only when decoded). */
type WeighedEntry = { receivedAt: number; ts: number; level: number; bytes: number };

/** Every entry of a block from its header alone. */
function headerEntries(block: Uint8Array): WeighedEntry[] {
  const h = readSealedHeader(block);
  return h.ids.map((_id, i) => ({ receivedAt: h.receivedAt[i]!, ts: h.ts[i]!, level: h.levels[i]!, bytes: h.lengths[i]! }));
}

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

/**
 * One chunk of a project's expired entries, at least `limit` of them
 * unless fewer are left: sealed blocks first (oldest first, whole blocks
 * dropped and the one at the cutoff rewritten; see sealed-retention.ts),
 * then tail rows. Under the project's seal lock, so a seal of the project
 * never interleaves with it.
 */
export async function purgeLogEntries(db: SqlExecutor, projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk> {
  await db.one(SEAL_LOCK, [SEAL_LOCK_CLASS, projectId]);
  const sealed = await purgeSealedBlocks(db, projectId, receivedBefore, limit);
  if (sealed.entries >= limit) return sealed;
  type Chunk = {
    entries: string | number;
    bytes: string | number;
    ids: (string | number)[];
    spans: number[];
    starts: number[];
    levels: number[];
    counts: number[];
  };
  const chunk = await db.one<Chunk>(PURGE_LOG_CHUNK, [projectId, receivedBefore, limit - sealed.entries]);
  if (Number(chunk.entries) > 0) {
    // Separate statements: within the one above, the deleted rows are still visible.
    await db.none(SUBTRACT_LOG_ROLLUP, [projectId, chunk.spans, chunk.starts, chunk.levels, chunk.counts]);
    await db.oneOrNone(TAKE_FROM_TAIL, [projectId, Number(chunk.entries)]);
  }
  return { entries: sealed.entries + Number(chunk.entries), bytes: sealed.bytes + Number(chunk.bytes) };
}

export function purgeAuditRows(db: SqlExecutor, chunk: AuditPurgeChunk): Promise<number> {
  if (chunk.actions.length === 0) return Promise.resolve(0);
  return db.result(DELETE_AUDIT_CHUNK, [chunk.actions, chunk.createdBefore, chunk.limit], (r) => r.rowCount);
}

export function purgeExpiredRefreshTokens(db: SqlExecutor, now: number, limit: number): Promise<number> {
  return db.result(DELETE_EXPIRED_REFRESH_TOKENS, [now, limit], (r) => r.rowCount);
}
