/**
 * Sealed storage in SQLite (docs/storage-format.md): the sealer's backend
 * (read a project's oldest tail run, commit a seal in one writer
 * transaction) and the reads of sealed blocks that query-plan.ts and
 * histogram-plan.ts walk (`SealedReads`).
 */
import type { LogRow } from '../types-logs.js';
import type { SealedRun } from '../log-index/seal-run.js';
import { readSealedHeader, type SealDictionary } from '../log-index/sealed-block.js';
import type { SealBackend, TailRun } from '../log-index/sealer.js';
import type { SealedBlockRow, SealedReads } from '../log-index/sealed-reads.js';
import type { SqlExecutor } from './connection.js';
import type { SqlRow } from './row-mappers.js';
import { NO_EARLIEST_TS, NO_LATEST_TS, NO_UPPER_ID } from '../types-logs.js';

const BLOCK_COLUMNS = `project_id, last_id, first_id, entries, min_ts, max_ts, levels, frames, dictionary_id`;

/**
 * Newest first: blocks with an entry below ?2, continuing below ?3. The top
 * is the first block reaching ?2 (blocks of a project are disjoint). Params:
 * project, position, after, level mask, from, to, limit.
 */
const BLOCKS_NEWEST = `SELECT ${BLOCK_COLUMNS} FROM log_sealed INDEXED BY log_sealed_project
  WHERE project_id = ?1 AND last_id < ?3
    AND last_id <= COALESCE((SELECT MIN(last_id) FROM log_sealed INDEXED BY log_sealed_project WHERE project_id = ?1 AND last_id >= ?2), ?2)
    AND first_id < ?2 AND (levels & ?4) != 0 AND max_ts >= ?5 AND min_ts <= ?6
  ORDER BY last_id DESC LIMIT ?7`;

/** Oldest first: blocks with an entry above ?2, continuing above ?3. Params as BLOCKS_NEWEST. */
const BLOCKS_OLDEST = `SELECT ${BLOCK_COLUMNS} FROM log_sealed INDEXED BY log_sealed_project
  WHERE project_id = ?1 AND last_id > ?2 AND last_id > ?3 AND (levels & ?4) != 0 AND max_ts >= ?5 AND min_ts <= ?6
  ORDER BY last_id ASC LIMIT ?7`;

/** One shard's rows, newest first. Params: project, shard, position, after, limit. */
const SHARDS_NEWEST = `SELECT block_last_id, shard, bits FROM log_filter_shards
  WHERE project_id = ?1 AND shard = ?2 AND block_last_id < ?4
    AND block_last_id <= COALESCE((SELECT MIN(last_id) FROM log_sealed INDEXED BY log_sealed_project WHERE project_id = ?1 AND last_id >= ?3), ?3)
  ORDER BY block_last_id DESC LIMIT ?5`;

/** One shard's rows, oldest first, of blocks ending above the position. Params as SHARDS_NEWEST. */
const SHARDS_OLDEST = `SELECT block_last_id, shard, bits FROM log_filter_shards
  WHERE project_id = ?1 AND shard = ?2 AND block_last_id > ?3 AND block_last_id > ?4
  ORDER BY block_last_id ASC LIMIT ?5`;

/** Params: project, JSON shards, JSON block ids. */
const SHARDS_OF = `SELECT block_last_id, shard, bits FROM log_filter_shards
  WHERE project_id = ?1 AND shard IN (SELECT value FROM json_each(?2)) AND block_last_id IN (SELECT value FROM json_each(?3))`;

/** Params: project, JSON block ids. */
const BLOCK_ROWS = `SELECT ${BLOCK_COLUMNS} FROM log_sealed WHERE last_id IN (SELECT value FROM json_each(?2)) AND project_id = ?1`;
const BLOCK_BYTES = `SELECT last_id, block FROM log_sealed WHERE last_id IN (SELECT value FROM json_each(?2)) AND project_id = ?1`;

/** Params: project, id. */
const DICTIONARY = `SELECT bytes FROM log_dictionaries WHERE project_id = ?1 AND id = ?2`;

const LAST_ID = `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'log_entries'), 0) AS id`;

/** Tail rows scanned, newest first below ?2. Params: project, position, limit. */
const TAIL_NEWEST = `SELECT id, project_id, received_at, ts, level, body FROM log_entries INDEXED BY log_entries_project
  WHERE project_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3`;
const TAIL_OLDEST = `SELECT id, project_id, received_at, ts, level, body FROM log_entries INDEXED BY log_entries_project
  WHERE project_id = ?1 AND id > ?2 ORDER BY id ASC LIMIT ?3`;

// ---- sealing -------------------------------------------------------------------------

/** Params: full run, old before. */
const PROJECTS_TO_SEAL = `SELECT project_id FROM log_tails WHERE entries >= ?1 OR oldest_received_at < ?2 ORDER BY project_id`;
/** Params: project, limit. */
const READ_RUN = `SELECT id, received_at, ts, level, body FROM log_entries INDEXED BY log_entries_project
  WHERE project_id = ?1 ORDER BY id LIMIT ?2`;
/** The project's newest dictionary and how many blocks were sealed since it was made (index only). Params: project. */
const NEWEST_DICTIONARY = `SELECT d.id, d.bytes,
    (SELECT count(*) FROM log_sealed INDEXED BY log_sealed_project WHERE project_id = ?1 AND last_id >= d.first_block_last_id) AS blocks
  FROM log_dictionaries AS d WHERE d.project_id = ?1 ORDER BY d.id DESC LIMIT 1`;
/** Params: project, last id. Every tail row of the project up to the run's last id. */
const DELETE_RUN = `DELETE FROM log_entries WHERE project_id = ?1 AND id <= ?2 RETURNING id`;
const INSERT_DICTIONARY = `INSERT INTO log_dictionaries (project_id, id, first_block_last_id, bytes) VALUES (?1, ?2, ?3, ?4)`;
/** A run's summary, first_id … levels, as INSERT_SEALED (?3–?10) and retention's REWRITE_SEALED bind it. */
export function runSummaryParams(run: SealedRun): number[] {
  return [run.firstId, run.count, run.bytes, run.minTs, run.maxTs, run.minReceivedAt, run.maxReceivedAt, run.levels];
}

const INSERT_SEALED = `INSERT INTO log_sealed (last_id, project_id, first_id, entries, bytes, min_ts, max_ts, min_received_at, max_received_at, levels, frames, dictionary_id, block)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)`;
/** Params: project, block last id, JSON array of the shards' bytes in hex (shard = index). */
const INSERT_SHARDS = `INSERT INTO log_filter_shards (project_id, shard, block_last_id, bits)
  SELECT ?1, key, ?2, unhex(value) FROM json_each(?3)`;
/**
 * The statements that store a sealed block: its row and its filter's
 * shards (a seal's, or a presealed request's in the ingest transaction).
 */
export function blockStatements(projectId: number, run: SealedRun): [string, unknown[]][] {
  const header = readSealedHeader(run.block);
  return [
    [INSERT_SEALED, [run.lastId, projectId, ...runSummaryParams(run), header.frames.length, header.dictionaryId, blob(run.block)]],
    [INSERT_SHARDS, [projectId, run.lastId, JSON.stringify(run.shards.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength).toString('hex')))]],
  ];
}

/** The project's newest dictionary. Params: project. */
const NEWEST_DICTIONARY_BYTES = `SELECT id, bytes FROM log_dictionaries WHERE project_id = ?1 ORDER BY id DESC LIMIT 1`;

/** Params: project, entries taken out of the tail. */
export const LOWER_TAIL = `UPDATE log_tails SET entries = entries - ?2,
    oldest_received_at = (SELECT MIN(received_at) FROM log_entries INDEXED BY log_entries_received WHERE project_id = ?1)
  WHERE project_id = ?1`;
/** LOWER_TAIL answering the entries left (run with `all`: a statement stepped only to its first row stays in progress and blocks the commit). */
const LOWER_TAIL_LEFT = `${LOWER_TAIL} RETURNING entries`;
const TAIL_ENTRIES = `SELECT COALESCE(SUM(entries), 0) AS n FROM log_tails`;

const blob = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const bytesOf = (v: unknown): Uint8Array => (v instanceof Uint8Array ? v : new Uint8Array(0));

function toBlockRow(r: SqlRow): SealedBlockRow {
  return {
    projectId: Number(r.project_id),
    lastId: Number(r.last_id),
    firstId: Number(r.first_id),
    entries: Number(r.entries),
    minTs: Number(r.min_ts),
    maxTs: Number(r.max_ts),
    levels: Number(r.levels),
    frames: Number(r.frames),
    dictionaryId: Number(r.dictionary_id),
  };
}

/** The sealed reads over an executor (the reader pool, or the writer inside a transaction). */
export function sqliteSealedReads(db: SqlExecutor): SealedReads {
  return {
    async blocks(projectId, direction, position, after, bounds, limit) {
      const statement = direction === 'newest' ? BLOCKS_NEWEST : BLOCKS_OLDEST;
      const rows = await db.all(statement, [
        projectId,
        position,
        after ?? (direction === 'newest' ? NO_UPPER_ID : 0),
        bounds.levelMask,
        bounds.from,
        bounds.to,
        limit,
      ]);
      return rows.map(toBlockRow);
    },
    async shardWalk(projectId, shard, direction, position, after, limit) {
      const statement = direction === 'newest' ? SHARDS_NEWEST : SHARDS_OLDEST;
      const rows = await db.all(statement, [projectId, shard, position, after ?? (direction === 'newest' ? NO_UPPER_ID : 0), limit]);
      return rows.map((r) => ({ blockLastId: Number(r.block_last_id), shard: Number(r.shard), bits: bytesOf(r.bits) }));
    },
    async shardsOf(projectId, shards, blockLastIds) {
      const rows = await db.all(SHARDS_OF, [projectId, JSON.stringify(shards), JSON.stringify(blockLastIds)]);
      return rows.map((r) => ({ blockLastId: Number(r.block_last_id), shard: Number(r.shard), bits: bytesOf(r.bits) }));
    },
    async blockRows(projectId, lastIds) {
      return (await db.all(BLOCK_ROWS, [projectId, JSON.stringify(lastIds)])).map(toBlockRow);
    },
    async blockBytes(projectId, lastIds) {
      const rows = await db.all(BLOCK_BYTES, [projectId, JSON.stringify(lastIds)]);
      return new Map(rows.map((r) => [Number(r.last_id), bytesOf(r.block)]));
    },
    async dictionary(projectId, id) {
      const row = await db.get(DICTIONARY, [projectId, id]);
      return row === undefined ? null : bytesOf(row.bytes);
    },
    async horizon() {
      return Number((await db.get(LAST_ID))?.id ?? 0);
    },
    async tailScan(projectId, direction, filter, position, limit) {
      const rows = await db.all(direction === 'newest' ? TAIL_NEWEST : TAIL_OLDEST, [projectId, position, limit]);
      const minLevel = filter.minLevel ?? 0;
      const from = filter.from ?? NO_EARLIEST_TS;
      const to = filter.to ?? NO_LATEST_TS;
      const kept: LogRow[] = [];
      for (const r of rows) {
        const ts = Number(r.ts);
        if (Number(r.level) >= minLevel && ts >= from && ts <= to)
          kept.push({ id: Number(r.id), projectId: Number(r.project_id), receivedAt: Number(r.received_at), body: r.body as string });
      }
      return { rows: kept, edge: rows.length < limit ? null : Number(rows[rows.length - 1]!.id) };
    },
  };
}

/** Runs `fn` in one writer transaction (the storage's `write`, without its WriteOps). */
export type WriterTransaction = <T>(fn: (db: SqlExecutor) => Promise<T>) => Promise<T>;

/** The sealer's backend: `reads` for finding work, `transaction` for reading a run and committing a seal. */
export function sqliteSealBackend(reads: SqlExecutor, transaction: WriterTransaction): SealBackend {
  const runDictionary = async (projectId: number): Promise<Omit<TailRun, 'entries'>> => {
    const d = await reads.get(NEWEST_DICTIONARY, [projectId]);
    return {
      dictionary: d === undefined ? null : { id: Number(d.id), bytes: bytesOf(d.bytes) },
      blocksWithDictionary: d === undefined ? 0 : Number(d.blocks),
    };
  };
  return {
    async projectsToSeal(fullRun, oldBefore) {
      return (await reads.all(PROJECTS_TO_SEAL, [fullRun, oldBefore])).map((r) => Number(r.project_id));
    },
    async readRun(projectId, limit): Promise<TailRun> {
      const rows = await reads.all(READ_RUN, [projectId, limit]);
      return {
        entries: rows.map((r) => ({ id: Number(r.id), receivedAt: Number(r.received_at), ts: Number(r.ts), level: Number(r.level), body: r.body as string })),
        ...(await runDictionary(projectId)),
      };
    },
    runDictionary,
    async newestDictionary(projectId) {
      const d = await reads.get(NEWEST_DICTIONARY_BYTES, [projectId]);
      return d === undefined ? null : { id: Number(d.id), bytes: bytesOf(d.bytes) };
    },
    commitSeal(projectId: number, run: SealedRun, dictionary: SealDictionary | null, ids: readonly number[]) {
      return transaction(async (db) => {
        const gone = (await db.all(DELETE_RUN, [projectId, run.lastId])).map((r) => Number(r.id)).sort((a, b) => a - b);
        // Not exactly the run: retention or another process changed the
        // tail since it was read. Nothing is written; the next pass reads
        // it again.
        if (gone.length !== run.count || ids.length !== run.count || gone.some((id, i) => id !== ids[i])) throw new StaleRunError();
        if (dictionary !== null) await db.run(INSERT_DICTIONARY, [projectId, dictionary.id, run.lastId, blob(dictionary.bytes)]);
        for (const [statement, params] of blockStatements(projectId, run)) await db.run(statement, params);
        const [left] = await db.all(LOWER_TAIL_LEFT, [projectId, run.count]);
        return { tailEntries: left === undefined ? null : Number(left.entries) };
      }).catch((err: unknown) => {
        if (err instanceof StaleRunError) return null;
        throw err;
      });
    },
    async tailEntries() {
      return Number((await reads.get(TAIL_ENTRIES))?.n ?? 0);
    },
  };
}

class StaleRunError extends Error {}
