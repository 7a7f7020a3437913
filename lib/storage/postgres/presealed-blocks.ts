/**
 * Presealed blocks on PostgreSQL (log-index/presealed.ts): the ids a large
 * request's blocks take, and their rows, written by the ingest transaction.
 */
import type { SealedRun } from '../log-index/seal-run.js';
import type { SqlExecutor } from './connection.js';
import { sealedRow } from './sealing.js';

/**
 * A presealed block and its shards in one statement (log-index/presealed.ts),
 * positional so the block's bytes are bound in binary format, not spelled
 * in hex inside the statement. $1 project … $13 block (INSERT_SEALED's
 * columns in order), $14 the shards' bytes in shard order.
 */
const INSERT_PRESEALED = `WITH block AS (
    INSERT INTO log_sealed (project_id, last_id, first_id, entries, bytes, min_ts, max_ts,
      min_received_at, max_received_at, levels, frames, dictionary_id, block)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13))
  INSERT INTO log_filter_shards (project_id, shard, block_last_id, bits)
    SELECT $1, (s.n - 1)::smallint, $2, s.bits FROM unnest($14::bytea[]) WITH ORDINALITY AS s(bits, n)`;

/** $1: how many. Ids for presealed blocks, drawn from the tail's identity sequence (so no id is ever handed out twice). */
export const DRAW_LOG_IDS = `SELECT nextval(pg_get_serial_sequence('log_entries', 'id')) AS id FROM generate_series(1, $1::int)`;

/** Stores a presealed block (ids already in it) in the caller's transaction. */
export async function insertPresealed(db: SqlExecutor, projectId: number, run: SealedRun, dictionaryId: number): Promise<void> {
  const row = sealedRow(projectId, run, dictionaryId, run.bytes);
  await db.none({
    text: INSERT_PRESEALED,
    values: [
      projectId,
      row.lastId,
      row.firstId,
      row.entries,
      row.bytes,
      row.minTs,
      row.maxTs,
      row.minReceivedAt,
      row.maxReceivedAt,
      row.levels,
      row.frames,
      dictionaryId,
      row.block,
      run.shards.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength)),
    ],
  });
}
