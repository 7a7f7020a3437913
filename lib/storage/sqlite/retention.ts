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
import { decodeSealedBlock, readSealedHeader } from '../log-index/sealed-block.js';
import { sealRun } from '../log-index/seal-run.js';
import { LOWER_TAIL, runSummaryParams } from './sealing.js';

const DAY_MS = 86_400_000;

/**
 * Params: now, ms per day. One probe per project on (project_id,
 * received_at); retention_days ≤ 36500 keeps the arithmetic exact.
 */
export const EXPIRED_LOG_SCOPES = `SELECT p.id AS project_id, ?1 - p.retention_days * ?2 AS received_before
  FROM projects AS p
  WHERE EXISTS (SELECT 1 FROM log_entries AS e INDEXED BY log_entries_received
                WHERE e.project_id = p.id AND e.received_at < ?1 - p.retention_days * ?2)
     OR (SELECT s.min_received_at FROM log_sealed AS s INDEXED BY log_sealed_project
         WHERE s.project_id = p.id ORDER BY s.last_id LIMIT 1) < ?1 - p.retention_days * ?2
  ORDER BY p.id`;

/** Params: project, received before, limit. The oldest expired entries of one project. */
export const SELECT_EXPIRED_LOG_CHUNK = `SELECT id, bytes, ts, level FROM log_entries INDEXED BY log_entries_received
  WHERE project_id = ?1 AND received_at < ?2
  ORDER BY received_at LIMIT ?3`;

/**
 * The project's oldest sealed block, if it holds an entry received before
 * ?2 (received_at rises with ids, so only the oldest blocks can). Params:
 * project, received before.
 */
export const SELECT_EXPIRED_BLOCK = `SELECT last_id, first_id, entries, bytes, max_received_at, dictionary_id, block FROM log_sealed INDEXED BY log_sealed_project
  WHERE project_id = ?1 ORDER BY last_id LIMIT 1`;
/** Params: project, block last id. */
export const DELETE_SEALED = `DELETE FROM log_sealed WHERE project_id = ?1 AND last_id = ?2`;
export const DELETE_SHARDS = `DELETE FROM log_filter_shards WHERE project_id = ?1 AND shard >= 0 AND shard < 64 AND block_last_id = ?2`;
/** A rewritten block's row keeps its key. Params: project, last id, first id, entries, bytes, min/max ts, min/max received_at, levels, frames, block. */
export const REWRITE_SEALED = `UPDATE log_sealed SET first_id = ?3, entries = ?4, bytes = ?5, min_ts = ?6, max_ts = ?7, min_received_at = ?8, max_received_at = ?9,
    levels = ?10, frames = ?11, block = ?12
  WHERE project_id = ?1 AND last_id = ?2`;
/** Params: project, block last id, JSON array of the shards' bytes in hex. */
export const INSERT_SHARDS = `INSERT INTO log_filter_shards (project_id, shard, block_last_id, bits) SELECT ?1, key, ?2, unhex(value) FROM json_each(?3)`;
/** Dictionaries no block names, except the project's newest. Params: project. */
export const DELETE_UNUSED_DICTIONARIES = `DELETE FROM log_dictionaries
  WHERE project_id = ?1 AND id < (SELECT MAX(id) FROM log_dictionaries WHERE project_id = ?1)
    AND NOT EXISTS (SELECT 1 FROM log_sealed WHERE project_id = ?1 AND dictionary_id = log_dictionaries.id)`;
/** Params: project, dictionary id. */
export const SELECT_DICTIONARY = `SELECT bytes FROM log_dictionaries WHERE project_id = ?1 AND id = ?2`;

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

/**
 * One chunk of a project's expired entries: tail rows first (at most
 * `limit`), then, once the tail holds none, the oldest sealed block: wholly
 * expired, dropped with its shards; partly expired (only the block at the
 * cutoff), rewritten with its unexpired entries, its key kept.
 */
export async function purgeLogEntries(db: SqlExecutor, projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk> {
  const rows = await db.all(SELECT_EXPIRED_LOG_CHUNK, [projectId, receivedBefore, limit]);
  if (rows.length === 0) return purgeSealed(db, projectId, receivedBefore);
  const ids = JSON.stringify(rows.map((r) => r.id));
  const bytes = rows.reduce((sum, r) => sum + Number(r.bytes), 0);
  const { changes } = await db.run(DELETE_LOG_ENTRIES, [ids]);
  // The rows were read in this transaction under the writer lock, so all of them go.
  if (changes !== rows.length) throw new Error(`retention deleted ${changes} of ${rows.length} selected log entries`);
  await db.run(LOWER_TAIL, [projectId, rows.length]);
  await subtract(
    db,
    projectId,
    rows.map((r) => ({ ts: Number(r.ts), level: Number(r.level) })),
    bytes,
  );
  return { entries: rows.length, bytes };
}

/** Takes deleted entries off the project's usage and rollup. */
async function subtract(db: SqlExecutor, projectId: number, entries: readonly { ts: number; level: number }[], bytes: number): Promise<void> {
  await db.run(SUBTRACT_PROJECT_USAGE, [projectId, entries.length, bytes]);
  const tally = new RollupTally();
  for (const e of entries) tally.add(projectId, minuteOf(e.ts), e.level, 1);
  const rollup = JSON.stringify(tally.all().map((c) => [c.span, c.start, c.level, c.n]));
  await db.run(SUBTRACT_LOG_ROLLUP, [projectId, rollup]);
  await db.run(DELETE_EMPTY_LOG_ROLLUP, [projectId, rollup]);
}

async function purgeSealed(db: SqlExecutor, projectId: number, receivedBefore: number): Promise<PurgedLogChunk> {
  const row = await db.get(SELECT_EXPIRED_BLOCK, [projectId]);
  if (row === undefined) return { entries: 0, bytes: 0 };
  const lastId = Number(row.last_id);
  const block = row.block as Uint8Array;
  const header = readSealedHeader(block);
  const expired = header.receivedAt.filter((at) => at < receivedBefore).length;
  if (expired === 0) return { entries: 0, bytes: 0 };
  if (expired === header.ids.length) {
    await db.run(DELETE_SHARDS, [projectId, lastId]);
    await db.run(DELETE_SEALED, [projectId, lastId]);
    await subtract(
      db,
      projectId,
      header.ts.map((ts, i) => ({ ts, level: header.levels[i]! })),
      Number(row.bytes),
    );
    await db.run(DELETE_UNUSED_DICTIONARIES, [projectId]);
    return { entries: header.ids.length, bytes: Number(row.bytes) };
  }
  // Partly expired: its newest entries stay, sealed again with the same dictionary.
  const dictionaryId = Number(row.dictionary_id);
  const d = dictionaryId === 0 ? undefined : await db.get(SELECT_DICTIONARY, [projectId, dictionaryId]);
  const dictionary = d === undefined ? null : { id: dictionaryId, bytes: d.bytes as Uint8Array };
  const entries = decodeSealedBlock(block, dictionary);
  const gone = entries.filter((e) => e.receivedAt < receivedBefore);
  const kept = entries.filter((e) => e.receivedAt >= receivedBefore);
  const run = sealRun(kept, dictionary);
  const goneBytes = Number(row.bytes) - run.bytes;
  await db.run(DELETE_SHARDS, [projectId, lastId]);
  await db.run(REWRITE_SEALED, [projectId, lastId, ...runSummaryParams(run), readSealedHeader(run.block).frames.length, hexless(run.block)]);
  await db.run(INSERT_SHARDS, [projectId, lastId, JSON.stringify(run.shards.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength).toString('hex')))]);
  await subtract(db, projectId, gone, goneBytes);
  return { entries: gone.length, bytes: goneBytes };
}

/** A view of bytes as a Buffer (no copy), which sqlite3 binds as a blob. */
const hexless = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

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
