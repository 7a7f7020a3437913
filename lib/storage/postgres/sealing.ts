/**
 * Sealing in PostgreSQL (docs/storage-format.md, "Sealing"): a run of one
 * project's tail rows (`log_entries`) becomes one compressed block
 * (`log_sealed`), its 64 filter shards (`log_filter_shards`) and, when the
 * project needs one, a new preset dictionary (`log_dictionaries`), in one
 * transaction that also deletes the run's tail rows. So `kill -9` at any
 * moment leaves every entry in exactly one place.
 *
 * Several processes may seal one database: the transaction takes the
 * project's seal lock with `pg_try_advisory_xact_lock` (held: another
 * process is sealing the project, skip it), and checks that its DELETE
 * removed exactly the run it read (a retention pass or another sealer got
 * there first otherwise: roll back, read again). Retention takes the same
 * lock, waiting for it, for each of its transactions on a project.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import {
  buildDictionary,
  cutSealRuns,
  readSealedHeader,
  SEAL_MAX_BYTES,
  SEAL_MAX_ENTRIES,
  type SealDictionary,
  type SealInput,
} from '../log-index/sealed-block.js';
import { sealRun, type SealedRun } from '../log-index/seal-run.js';
import type { SqlExecutor } from './connection.js';
import { blockFrames } from './block-frames.js';
import { insertBlock } from './block-insert.js';
import { DICTIONARY_EVERY_BLOCKS, SEAL_MAX_TAIL_AGE_MS, type SealBackend, type TailRun } from '../log-index/sealer.js';
import type { SealedBlockRow, SealedReads, ShardRow } from '../log-index/sealed-reads.js';
import type { LogRow } from '../types-logs.js';
import { NO_EARLIEST_TS, NO_LATEST_TS, NO_UPPER_ID } from '../types-logs.js';

export { SEAL_MAX_TAIL_AGE_MS };

/**
 * The advisory-lock class of seal locks: key = class << 32 | project id
 * (as ingestion marks, log-sql.ts), so pg_locks shows classid = this class
 * and objid = the project. Distinct from every other advisory key logkeep
 * takes (ingestion marks and floors, migrations, maintenance).
 */
export const SEAL_LOCK_CLASS = 1935958380;

/** Seals a run (pure CPU): in-process below, or a worker's. */
export type SealRunner = (entries: SealInput[], dictionary: SealDictionary | null) => Promise<SealedRun>;

/** `sealRun` on this thread, after a turn of the event loop (one run is at most SEAL_MAX_ENTRIES entries and SEAL_MAX_BYTES). */
export const sealInProcess: SealRunner = async (entries, dictionary) => {
  await yieldToEventLoop();
  return sealRun(entries, dictionary);
};

/** $1: project. Its tail's counters. */
const SELECT_TAIL = `SELECT entries, oldest_received_at AS "oldestReceivedAt" FROM log_tails WHERE project_id = $1`;

/**
 * $1: project, $2: most entries, $3: most stored bytes. The project's
 * oldest tail rows, up to a run's bounds (an entry larger than the byte
 * bound alone is still read, as the first), ids increasing: one walk of
 * (project_id, id), with a running sum of `bytes`; rows past the byte bound
 * come without their body, and are dropped (`readRun`).
 */
const SELECT_RUN = `SELECT id, received_at AS "receivedAt", ts, level,
    CASE WHEN sum(bytes) OVER (ORDER BY id) - bytes < $3 OR row_number() OVER (ORDER BY id) = 1 THEN body END AS body
  FROM (SELECT id, received_at, ts, level, bytes, body FROM log_entries WHERE project_id = $1 ORDER BY id LIMIT $2) AS h
  ORDER BY id`;

/** $1: project. Its newest dictionary and how many blocks name it, counted up to DICTIONARY_EVERY_BLOCKS. */
const SELECT_NEWEST_DICTIONARY = `SELECT d.id, d.bytes, (SELECT count(*) FROM (
      SELECT 1 FROM log_sealed AS s WHERE s.project_id = $1 AND s.last_id >= d.first_block_last_id LIMIT $2) AS c)::integer AS blocks
  FROM log_dictionaries AS d WHERE d.project_id = $1 ORDER BY d.id DESC LIMIT 1`;

/** $1: lock class, $2: project. */
export const TRY_SEAL_LOCK = `SELECT pg_try_advisory_xact_lock(($1::bigint << 32) | $2::bigint) AS locked`;
/** $1: lock class, $2: project. Waits for a seal of the project in progress. */
export const SEAL_LOCK = `SELECT pg_advisory_xact_lock(($1::bigint << 32) | $2::bigint)`;

/**
 * $1: project, $2: last id, $3: the run's ids (ascending, as an array
 * literal). Every tail row of the project up to the run's last id, counted,
 * whether they
 * are exactly the run's (their ids sorted, compared as one array: a join
 * with the run's ids cost as much as the delete), and their stored bytes.
 */
const DELETE_RUN = `WITH gone AS (DELETE FROM log_entries WHERE project_id = $1 AND id <= $2 RETURNING id, bytes)
  SELECT count(*)::integer AS entries, (SELECT array_agg(id ORDER BY id) FROM gone) = $3::text::bigint[] AS exact,
    COALESCE(sum(bytes), 0)::bigint AS bytes
  FROM gone`;

const INSERT_DICTIONARY = `INSERT INTO log_dictionaries (project_id, id, first_block_last_id, bytes) VALUES ($1, $2, $3, $4)`;

/**
 * $1: project, $2: entries that left the tail. The oldest arrival left is
 * one probe of (project_id, received_at). Answers the entries left.
 */
export const TAKE_FROM_TAIL = `UPDATE log_tails
  SET entries = entries - $2, oldest_received_at = (SELECT min(received_at) FROM log_entries WHERE project_id = $1)
  WHERE project_id = $1 RETURNING entries`;

/** $1: now − SEAL_MAX_TAIL_AGE_MS, $2: a full run. Projects with a tail to seal, oldest waiting first. */
const SELECT_DUE_PROJECTS = `SELECT project_id AS "projectId" FROM log_tails
  WHERE entries >= $2 OR (entries > 0 AND oldest_received_at < $1)
  ORDER BY oldest_received_at`;

/** What one call of `sealProject` did. */
export type SealOutcome =
  /** Sealed a block of `entries` entries. */
  | { sealed: true; entries: number; lastId: number }
  /** Nothing to seal now (no full run, tail not old enough), or another process holds the project's seal lock. */
  | { sealed: false; reason: 'nothing' | 'busy' };

/** How many times a seal whose run changed under it reads again before leaving the project to the next pass. */
const SEAL_RETRIES = 3;

/** Bodies as stored in `log_entries`, with their arrival and timestamp. */
type TailRow = SealInput;

/** The project's oldest tail rows (up to a run's bounds) and its newest dictionary. */
export async function readRun(db: SqlExecutor, projectId: number, limit = SEAL_MAX_ENTRIES): Promise<TailRun> {
  const rows = await db.any<Omit<TailRow, 'body'> & { body: string | null }>(SELECT_RUN, [projectId, limit, SEAL_MAX_BYTES]);
  const kept = rows.findIndex((r) => r.body === null);
  const entries = (kept < 0 ? rows : rows.slice(0, kept)) as TailRow[];
  return { entries, ...(await runDictionary(db, projectId)) };
}

/** The project's newest dictionary and how many blocks were sealed with it (counted up to DICTIONARY_EVERY_BLOCKS). */
async function runDictionary(db: SqlExecutor, projectId: number): Promise<Omit<TailRun, 'entries'>> {
  const newest = await db.oneOrNone<{ id: number; bytes: Buffer; blocks: number }>(SELECT_NEWEST_DICTIONARY, [projectId, DICTIONARY_EVERY_BLOCKS]);
  return {
    dictionary: newest === null ? null : { id: newest.id, bytes: new Uint8Array(newest.bytes) },
    blocksWithDictionary: newest?.blocks ?? 0,
  };
}

/**
 * The seal transaction: the project's seal lock (held elsewhere: 'busy'),
 * every tail row of the project up to the run's last id deleted, checked
 * to be exactly the run's `ids` (else 'changed', rolled back), then
 * `dictionary` when new, the block's row, its shards, and the tail's count
 * lowered (what it holds then is answered). A unique violation (another
 * process sealed the same run, or took the project's next dictionary id,
 * first) is 'changed'.
 */
export async function commitSeal(
  db: SqlExecutor,
  projectId: number,
  run: SealedRun,
  newDictionary: SealDictionary | null,
  dictionaryId: number,
  ids: readonly number[],
): Promise<{ tailEntries: number | null } | 'busy' | 'changed'> {
  return db
    .tx('logkeep-seal', async (t) => {
      const { locked } = await t.one<{ locked: boolean }>(TRY_SEAL_LOCK, [SEAL_LOCK_CLASS, projectId]);
      if (!locked) return 'busy' as const;
      const gone = await t.one<{ entries: number; exact: boolean | null; bytes: number }>(DELETE_RUN, [projectId, run.lastId, arrayLiteral(ids)]);
      if (gone.entries !== run.count || gone.exact !== true || ids.length !== run.count) throw new RunChanged();
      if (newDictionary !== null) await t.none(INSERT_DICTIONARY, [projectId, newDictionary.id, run.lastId, Buffer.from(newDictionary.bytes)]);
      await insertBlock(t, projectId, run, dictionaryId, gone.bytes);
      const left = await t.oneOrNone<{ entries: string | number }>(TAKE_FROM_TAIL, [projectId, run.count]);
      return { tailEntries: left === null ? null : Number(left.entries) };
    })
    .catch((err: unknown) => {
      if (err instanceof RunChanged || (err as { code?: unknown }).code === UNIQUE_VIOLATION) return 'changed' as const;
      throw err;
    });
}

/**
 * Seals the oldest run of a project's tail, if it holds a full run or its
 * oldest entry is older than SEAL_MAX_TAIL_AGE_MS (then a part-filled run
 * too), sealing on this thread (`sealInProcess`) unless given `seal`. The
 * service seals through the shared sealer (log-index/sealer.ts) and
 * `postgresSealBackend`, which run the same statements; this is for tools
 * and tests that pick the moment.
 */
export async function sealProject(db: SqlExecutor, projectId: number, options: { now: number; seal?: SealRunner }): Promise<SealOutcome> {
  const seal = options.seal ?? sealInProcess;
  for (let attempt = 0; attempt < SEAL_RETRIES; attempt++) {
    const tail = await db.oneOrNone<{ entries: number; oldestReceivedAt: number | null }>(SELECT_TAIL, [projectId]);
    if (tail === null || tail.entries === 0) return { sealed: false, reason: 'nothing' };
    const old = tail.oldestReceivedAt !== null && tail.oldestReceivedAt < options.now - SEAL_MAX_TAIL_AGE_MS;
    if (tail.entries < SEAL_MAX_ENTRIES && !old) return { sealed: false, reason: 'nothing' };
    const read = await readRun(db, projectId);
    const [run] = cutSealRuns(read.entries, old);
    if (run === undefined) return { sealed: false, reason: 'nothing' };
    const fresh = read.dictionary === null || read.blocksWithDictionary >= DICTIONARY_EVERY_BLOCKS;
    const dictionary: SealDictionary = fresh ? { id: (read.dictionary?.id ?? 0) + 1, bytes: buildDictionary(run.map((e) => e.body)) } : read.dictionary!;
    const sealed = await seal(run, dictionary);
    const outcome = await commitSeal(
      db,
      projectId,
      sealed,
      fresh ? dictionary : null,
      dictionary.id,
      run.map((e) => e.id),
    );
    if (outcome === 'busy') return { sealed: false, reason: 'busy' };
    if (outcome !== 'changed') return { sealed: true, entries: sealed.count, lastId: sealed.lastId };
  }
  return { sealed: false, reason: 'busy' };
}

const UNIQUE_VIOLATION = '23505';

/**
 * Ids as one array literal (`{1,2,3}`): pg-promise would spell a JavaScript
 * array as an ARRAY[…] expression of one element per id, which PostgreSQL
 * parses node by node (a 1,024-id run cost more than the delete).
 */
const arrayLiteral = (ids: readonly number[]): string => `{${ids.join(',')}}`;

/** Thrown inside the seal transaction to roll it back: the run read is no longer all in the tail. */
class RunChanged extends Error {}

/**
 * Projects whose tail is due for sealing now (a full run, or entries older
 * than SEAL_MAX_TAIL_AGE_MS), oldest waiting first: what a sealer's timer
 * pass asks, which also finds entries other processes ingested.
 */
export async function dueProjects(db: SqlExecutor, now: number): Promise<number[]> {
  return (await db.any<{ projectId: number }>(SELECT_DUE_PROJECTS, [now - SEAL_MAX_TAIL_AGE_MS, SEAL_MAX_ENTRIES])).map((r) => r.projectId);
}

/**
 * Seals every due project until none is due (or `shouldStop`), a block at
 * a time; returns the entries sealed. A project another process is
 * sealing is left to it.
 */
export async function sealDue(db: SqlExecutor, options: { now: () => number; seal?: SealRunner; shouldStop?: () => boolean }): Promise<number> {
  let total = 0;
  for (;;) {
    let progressed = false;
    for (const projectId of await dueProjects(db, options.now())) {
      if (options.shouldStop?.()) return total;
      const outcome = await sealProject(db, projectId, { now: options.now(), seal: options.seal });
      if (outcome.sealed) {
        total += outcome.entries;
        progressed = true;
      }
    }
    if (!progressed) return total;
  }
}

// ---- the shared sealer's backend (log-index/sealer.ts) ------------------------------

/** $1: full run, $2: old before. Projects with a tail to seal, oldest waiting first. */
const PROJECTS_TO_SEAL = `SELECT project_id AS "projectId" FROM log_tails
  WHERE entries >= $1 OR (entries > 0 AND oldest_received_at < $2)
  ORDER BY oldest_received_at`;

/** $1: lock class, $2: project. Whether some transaction holds the project's seal lock now. */
const SEAL_LOCK_HELD = `SELECT EXISTS (SELECT 1 FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid::bigint = $1::bigint AND objid::bigint = $2::bigint
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS held`;

const TAIL_ENTRIES = `SELECT COALESCE(sum(entries), 0)::bigint AS n FROM log_tails`;
/** $1: project. */
const NEWEST_DICTIONARY_BYTES = `SELECT id, bytes FROM log_dictionaries WHERE project_id = $1 ORDER BY id DESC LIMIT 1`;
/** Outside any transaction; another process's vacuum of the table in progress is enough, so none waits for it. */
const RECLAIM_TAIL = 'VACUUM (SKIP_LOCKED) log_entries';

/**
 * The sealer's backend on the pool. A project whose seal lock another
 * process holds reads as an empty run, so this process's sealer moves on
 * to other projects instead of reading the same run again while the other
 * commits (or a retention pass rewrites its oldest block).
 */
export function postgresSealBackend(db: SqlExecutor): SealBackend {
  return {
    async projectsToSeal(fullRun, oldBefore) {
      return (await db.any<{ projectId: number }>(PROJECTS_TO_SEAL, [fullRun, oldBefore])).map((r) => r.projectId);
    },
    async readRun(projectId, limit) {
      const { held } = await db.one<{ held: boolean }>(SEAL_LOCK_HELD, [SEAL_LOCK_CLASS, projectId]);
      if (held) return { entries: [], dictionary: null, blocksWithDictionary: 0 };
      return readRun(db, projectId, limit);
    },
    runDictionary: (projectId) => runDictionary(db, projectId),
    async commitSeal(projectId, run, dictionary, ids) {
      const outcome = await commitSeal(db, projectId, run, dictionary, readSealedHeader(run.block).dictionaryId, ids);
      return typeof outcome === 'string' ? null : outcome;
    },
    async tailEntries() {
      return Number((await db.one<{ n: number }>(TAIL_ENTRIES)).n);
    },
    async newestDictionary(projectId) {
      const d = await db.oneOrNone<{ id: number; bytes: Buffer }>(NEWEST_DICTIONARY_BYTES, [projectId]);
      return d === null ? null : { id: Number(d.id), bytes: new Uint8Array(d.bytes) };
    },
    async reclaimTail() {
      await db.none(RECLAIM_TAIL);
    },
  };
}

// ---- reading sealed blocks (log-index/sealed-reads.ts) ------------------------------

const BLOCK_COLUMNS = `project_id AS "projectId", last_id AS "lastId", first_id AS "firstId", entries, min_ts AS "minTs", max_ts AS "maxTs",
  levels, frames, dictionary_id AS "dictionaryId"`;

/**
 * The last_id of the project's block holding ids below $2 that reaches
 * farthest: the first block ending at or above $2 when it starts below
 * it, else $2 − 1 (blocks of a project are disjoint). $1: project.
 */
const NEWEST_TOP = `COALESCE((SELECT s.last_id FROM (SELECT last_id, first_id FROM log_sealed
    WHERE project_id = $1 AND last_id >= $2 ORDER BY last_id LIMIT 1) AS s WHERE s.first_id < $2), $2 - 1)`;

/** Newest first: blocks with an entry below $2, continuing below $3. Params: project, position, after, level mask, from, to, limit. */
const BLOCKS_NEWEST = `SELECT ${BLOCK_COLUMNS} FROM log_sealed
  WHERE project_id = $1 AND last_id < $3 AND last_id <= ${NEWEST_TOP}
    AND (levels & $4) <> 0 AND max_ts >= $5 AND min_ts <= $6
  ORDER BY last_id DESC LIMIT $7`;

/** Oldest first: blocks with an entry above $2, continuing above $3. Params as BLOCKS_NEWEST. */
const BLOCKS_OLDEST = `SELECT ${BLOCK_COLUMNS} FROM log_sealed
  WHERE project_id = $1 AND last_id > $2 AND last_id > $3 AND (levels & $4) <> 0 AND max_ts >= $5 AND min_ts <= $6
  ORDER BY last_id ASC LIMIT $7`;

/** One shard's rows, newest first, one key range of the primary key. Params: project, position, after, shard, limit. */
const SHARDS_NEWEST = `SELECT block_last_id AS "blockLastId", shard, bits FROM log_filter_shards
  WHERE project_id = $1 AND shard = $4 AND block_last_id < $3 AND block_last_id <= ${NEWEST_TOP}
  ORDER BY block_last_id DESC LIMIT $5`;

/** One shard's rows, oldest first, of blocks ending above the position. Params as SHARDS_NEWEST. */
const SHARDS_OLDEST = `SELECT block_last_id AS "blockLastId", shard, bits FROM log_filter_shards
  WHERE project_id = $1 AND shard = $4 AND block_last_id > $2 AND block_last_id > $3
  ORDER BY block_last_id ASC LIMIT $5`;

/** Params: project, shards, block last ids. */
const SHARDS_OF = `SELECT block_last_id AS "blockLastId", shard, bits FROM log_filter_shards
  WHERE project_id = $1 AND shard = ANY($2::smallint[]) AND block_last_id = ANY($3::bigint[])`;

/** Params: project, block last ids. */
const BLOCK_ROWS = `SELECT ${BLOCK_COLUMNS} FROM log_sealed WHERE project_id = $1 AND last_id = ANY($2::bigint[])`;
const BLOCK_BYTES = `SELECT last_id AS "lastId", block FROM log_sealed WHERE project_id = $1 AND last_id = ANY($2::bigint[])`;

/** Params: project, id. */
const DICTIONARY = `SELECT bytes FROM log_dictionaries WHERE project_id = $1 AND id = $2`;

/** Tail rows scanned, newest first below $2 / oldest first above it. Params: project, position, limit, min level, from, to. */
const tailScanSql = (direction: 'newest' | 'oldest') => `SELECT id, project_id AS "projectId", received_at AS "receivedAt",
    CASE WHEN level >= $4 AND ts >= $5 AND ts <= $6 THEN body END AS body
  FROM log_entries WHERE project_id = $1 AND ${direction === 'newest' ? 'id < $2 ORDER BY id DESC' : 'id > $2 ORDER BY id ASC'} LIMIT $3`;
const TAIL_SCAN = { newest: tailScanSql('newest'), oldest: tailScanSql('oldest') } as const;

/** The sealed reads over an executor (the pool), with the backend's horizon (see log-entries.ts `sealedReadsOf`). */
export function postgresSealedReads(db: SqlExecutor, horizon: (projectIds: readonly number[]) => Promise<number>): SealedReads {
  const shardRows = (rows: ShardRow[]) => rows.map((r) => ({ blockLastId: Number(r.blockLastId), shard: Number(r.shard), bits: r.bits }));
  return {
    async blocks(projectId, direction, position, after, bounds, limit) {
      const statement = direction === 'newest' ? BLOCKS_NEWEST : BLOCKS_OLDEST;
      const edge = after ?? (direction === 'newest' ? NO_UPPER_ID : 0);
      return db.any<SealedBlockRow>(statement, [projectId, position, edge, bounds.levelMask, bounds.from, bounds.to, limit]);
    },
    async shardWalk(projectId, shard, direction, position, after, limit) {
      const statement = direction === 'newest' ? SHARDS_NEWEST : SHARDS_OLDEST;
      const edge = after ?? (direction === 'newest' ? NO_UPPER_ID : 0);
      return shardRows(await db.any<ShardRow>(statement, [projectId, position, edge, shard, limit]));
    },
    async shardsOf(projectId, shards, blockLastIds) {
      if (shards.length === 0 || blockLastIds.length === 0) return [];
      return shardRows(await db.any<ShardRow>(SHARDS_OF, [projectId, [...shards], [...blockLastIds]]));
    },
    async blockRows(projectId, lastIds) {
      if (lastIds.length === 0) return [];
      return db.any<SealedBlockRow>(BLOCK_ROWS, [projectId, [...lastIds]]);
    },
    async blockBytes(projectId, lastIds) {
      if (lastIds.length === 0) return new Map();
      const rows = await db.any<{ lastId: number; block: Buffer }>(BLOCK_BYTES, [projectId, [...lastIds]]);
      return new Map(rows.map((r) => [Number(r.lastId), new Uint8Array(r.block.buffer, r.block.byteOffset, r.block.byteLength)]));
    },
    blockFrames: (projectId, wants) => blockFrames(db, projectId, wants),
    async dictionary(projectId, id) {
      const row = await db.oneOrNone<{ bytes: Buffer }>(DICTIONARY, [projectId, id]);
      return row === null ? null : new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
    },
    horizon,
    async tailScan(projectId, direction, filter, position, limit) {
      const params = [projectId, position, limit, filter.minLevel ?? 0, filter.from ?? NO_EARLIEST_TS, filter.to ?? NO_LATEST_TS];
      // The body only of rows that pass level and time: the others are scanned, not sent.
      const rows = await db.any<Omit<LogRow, 'body'> & { body: string | null }>(TAIL_SCAN[direction], params);
      const kept: LogRow[] = [];
      for (const r of rows) if (r.body !== null) kept.push({ id: r.id, projectId: r.projectId, receivedAt: r.receivedAt, body: r.body });
      return { rows: kept, edge: rows.length < limit ? null : rows[rows.length - 1]!.id };
    },
  };
}
