/**
 * A sealed block's row and its filter shards, written in one statement by
 * sealing, retention's rewrite and presealed ingestion alike, with every
 * byte bound in binary format: the block as a bytea parameter, the shards
 * as one binary `bytea[]` (column-arrays.ts). Spelled in the SQL text, as
 * pg-promise formats values, a block of ~50 kB became ~100 kB of hex that
 * the event loop wrote and the server parsed again, and each shard a hex
 * element of a text array.
 */
import type { SealedRun } from '../log-index/seal-run.js';
import { byteaArray } from '../log-index/column-arrays.js';
import type { SqlExecutor } from './connection.js';
import { FILTER_SHARDS } from '../log-index/block-filter.js';
import { SEAL_FRAME_ENTRIES } from '../log-index/sealed-block.js';

/** $1 project … $13 block (log_sealed's columns in order), $14 the shards' bytes in shard order. */
const INSERT_BLOCK = `WITH block AS (
    INSERT INTO log_sealed (project_id, last_id, first_id, entries, bytes, min_ts, max_ts,
      min_received_at, max_received_at, levels, frames, dictionary_id, block)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13))
  INSERT INTO log_filter_shards (project_id, shard, block_last_id, bits)
    SELECT $1, (s.n - 1)::smallint, $2, s.bits FROM unnest($14::bytea[]) WITH ORDINALITY AS s(bits, n)`;

/** Writes a block (its ids final) and its shards in the caller's transaction; `bytes` counts its entries as submitted. */
export async function insertBlock(db: SqlExecutor, projectId: number, run: SealedRun, dictionaryId: number, bytes: number): Promise<void> {
  const row = sealedRow(projectId, run, dictionaryId, bytes);
  await db.none({
    text: INSERT_BLOCK,
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
      byteaArray(run.shards),
    ],
  });
}

/** The columns of a `log_sealed` row. */
function sealedRow(projectId: number, run: SealedRun, dictionaryId: number, bytes: number) {
  if (run.shards.length !== FILTER_SHARDS) throw new Error(`a block's filter has ${run.shards.length} shards, not ${FILTER_SHARDS}`);
  return {
    projectId,
    lastId: run.lastId,
    firstId: run.firstId,
    entries: run.count,
    bytes,
    minTs: run.minTs,
    maxTs: run.maxTs,
    minReceivedAt: run.minReceivedAt,
    maxReceivedAt: run.maxReceivedAt,
    levels: run.levels,
    frames: Math.ceil(run.count / SEAL_FRAME_ENTRIES),
    dictionaryId,
    block: Buffer.from(run.block.buffer, run.block.byteOffset, run.block.byteLength),
  };
}
