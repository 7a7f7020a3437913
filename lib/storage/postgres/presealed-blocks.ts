/**
 * Presealed blocks on PostgreSQL (log-index/presealed.ts): the ids a large
 * request's blocks take, and their rows, written by the ingest transaction.
 */
import type { SealedRun } from '../log-index/seal-run.js';
import type { SqlExecutor } from './connection.js';
import { insertBlock } from './block-insert.js';

/** $1: how many. Ids for presealed blocks, drawn from the tail's identity sequence (so no id is ever handed out twice). */
export const DRAW_LOG_IDS = `SELECT nextval(pg_get_serial_sequence('log_entries', 'id')) AS id FROM generate_series(1, $1::int)`;

/** Stores a presealed block (ids already in it) in the caller's transaction. */
export function insertPresealed(db: SqlExecutor, projectId: number, run: SealedRun, dictionaryId: number): Promise<void> {
  return insertBlock(db, projectId, run, dictionaryId, run.bytes);
}
