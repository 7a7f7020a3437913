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
import { FILTER_SHARDS } from '../log-index/block-filter.js';
import { buildDictionary, cutSealRuns, SEAL_FRAME_ENTRIES, SEAL_MAX_BYTES, SEAL_MAX_ENTRIES, type SealDictionary, type SealInput } from '../log-index/sealed-block.js';
import { sealRun, type SealedRun } from '../log-index/seal-run.js';
import type { SqlExecutor } from './connection.js';

/**
 * The advisory-lock class of seal locks: key = class << 32 | project id
 * (as ingestion marks, log-sql.ts), so pg_locks shows classid = this class
 * and objid = the project. Distinct from every other advisory key logkeep
 * takes (ingestion marks and floors, migrations, maintenance).
 */
export const SEAL_LOCK_CLASS = 1935958380;

/**
 * A tail whose oldest entry is older than this is sealed whole, part-filled
 * runs included: a quiet project's entries do not wait in the tail (read
 * without a term index) for longer, and a busy one seals full runs long
 * before.
 */
export const SEAL_MAX_TAIL_AGE_MS = 10 * 60_000;

/**
 * A project takes a new dictionary after this many blocks sealed with its
 * newest one (about a million entries), so the dictionary follows the
 * project's entries as they change while costing ~32 KiB per million.
 */
export const DICTIONARY_EVERY_BLOCKS = 1024;

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
 * bound alone is still read, as the first), ids increasing. The running
 * sum reads only (project_id, id) and `bytes`; bodies are fetched for the
 * rows kept.
 */
const SELECT_RUN = `WITH head AS (
    SELECT id, sum(bytes) OVER (ORDER BY id) - bytes AS before FROM (
      SELECT id, bytes FROM log_entries WHERE project_id = $1 ORDER BY id LIMIT $2) AS h
  )
  SELECT e.id, e.received_at AS "receivedAt", e.ts, e.level, e.body
  FROM head JOIN log_entries AS e ON e.project_id = $1 AND e.id = head.id
  WHERE head.before < $3 OR head.id = (SELECT min(id) FROM head)
  ORDER BY e.id`;

/** $1: project. Its newest dictionary and how many blocks name it, counted up to DICTIONARY_EVERY_BLOCKS. */
const SELECT_NEWEST_DICTIONARY = `SELECT d.id, d.bytes, (SELECT count(*) FROM (
      SELECT 1 FROM log_sealed AS s WHERE s.project_id = $1 AND s.last_id >= d.first_block_last_id LIMIT $2) AS c)::integer AS blocks
  FROM log_dictionaries AS d WHERE d.project_id = $1 ORDER BY d.id DESC LIMIT 1`;

/** $1: lock class, $2: project. */
export const TRY_SEAL_LOCK = `SELECT pg_try_advisory_xact_lock(($1::bigint << 32) | $2::bigint) AS locked`;
/** $1: lock class, $2: project. Waits for a seal of the project in progress. */
export const SEAL_LOCK = `SELECT pg_advisory_xact_lock(($1::bigint << 32) | $2::bigint)`;

/** $1: project, $2: first id, $3: last id. The run's tail rows, counted with their stored bytes. */
const DELETE_RUN = `WITH gone AS (DELETE FROM log_entries WHERE project_id = $1 AND id >= $2 AND id <= $3 RETURNING bytes)
  SELECT count(*)::integer AS entries, COALESCE(sum(bytes), 0)::bigint AS bytes FROM gone`;

const INSERT_DICTIONARY = `INSERT INTO log_dictionaries (project_id, id, first_block_last_id, bytes) VALUES ($1, $2, $3, $4)`;

const INSERT_SEALED = `INSERT INTO log_sealed (project_id, last_id, first_id, entries, bytes, min_ts, max_ts,
    min_received_at, max_received_at, levels, frames, dictionary_id, block)
  VALUES ($(projectId), $(lastId), $(firstId), $(entries), $(bytes), $(minTs), $(maxTs),
    $(minReceivedAt), $(maxReceivedAt), $(levels), $(frames), $(dictionaryId), $(block))`;

/** $1: project, $2: block's last id, $3: the shards' bytes in shard order. */
export const INSERT_SHARDS = `INSERT INTO log_filter_shards (project_id, shard, block_last_id, bits)
  SELECT $1, (s.n - 1)::smallint, $2, s.bits FROM unnest($3::bytea[]) WITH ORDINALITY AS s(bits, n)`;

/**
 * $1: project, $2: entries that left the tail. The oldest arrival left is
 * one probe of (project_id, received_at).
 */
export const TAKE_FROM_TAIL = `UPDATE log_tails
  SET entries = entries - $2, oldest_received_at = (SELECT min(received_at) FROM log_entries WHERE project_id = $1)
  WHERE project_id = $1`;

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

/**
 * Seals the oldest run of a project's tail, if it holds a full run or its
 * oldest entry is older than SEAL_MAX_TAIL_AGE_MS (then a part-filled run
 * too). `db` is the pool: the run is read outside the transaction, sealed
 * by `seal` (off the transaction: no lock is held while it runs), and
 * written in one short transaction.
 */
export async function sealProject(db: SqlExecutor, projectId: number, options: { now: number; seal?: SealRunner }): Promise<SealOutcome> {
  const seal = options.seal ?? sealInProcess;
  for (let attempt = 0; attempt < SEAL_RETRIES; attempt++) {
    const tail = await db.oneOrNone<{ entries: number; oldestReceivedAt: number | null }>(SELECT_TAIL, [projectId]);
    if (tail === null || tail.entries === 0) return { sealed: false, reason: 'nothing' };
    const old = tail.oldestReceivedAt !== null && tail.oldestReceivedAt < options.now - SEAL_MAX_TAIL_AGE_MS;
    if (tail.entries < SEAL_MAX_ENTRIES && !old) return { sealed: false, reason: 'nothing' };

    const rows = await db.any<TailRow>(SELECT_RUN, [projectId, SEAL_MAX_ENTRIES, SEAL_MAX_BYTES]);
    const [run] = cutSealRuns(rows, old);
    if (run === undefined) return { sealed: false, reason: 'nothing' };

    const newest = await db.oneOrNone<{ id: number; bytes: Buffer; blocks: number }>(SELECT_NEWEST_DICTIONARY, [projectId, DICTIONARY_EVERY_BLOCKS]);
    const fresh = newest === null || newest.blocks >= DICTIONARY_EVERY_BLOCKS;
    const dictionary: SealDictionary = fresh
      ? { id: (newest?.id ?? 0) + 1, bytes: buildDictionary(run.map((e) => e.body)) }
      : { id: newest.id, bytes: new Uint8Array(newest.bytes) };
    const sealed = await seal(run, dictionary);

    const outcome = await db.tx('logkeep-seal', async (t): Promise<SealOutcome | 'changed'> => {
      const { locked } = await t.one<{ locked: boolean }>(TRY_SEAL_LOCK, [SEAL_LOCK_CLASS, projectId]);
      if (!locked) return { sealed: false, reason: 'busy' };
      const gone = await t.one<{ entries: number; bytes: number }>(DELETE_RUN, [projectId, sealed.firstId, sealed.lastId]);
      if (gone.entries !== sealed.count) throw new RunChanged();
      if (fresh) await t.none(INSERT_DICTIONARY, [projectId, dictionary.id, sealed.lastId, Buffer.from(dictionary.bytes)]);
      await t.none(INSERT_SEALED, sealedRow(projectId, sealed, dictionary.id, gone.bytes));
      await t.none(INSERT_SHARDS, [projectId, sealed.lastId, sealed.shards.map((s) => Buffer.from(s))]);
      await t.none(TAKE_FROM_TAIL, [projectId, sealed.count]);
      return { sealed: true, entries: sealed.count, lastId: sealed.lastId };
    }).catch((err: unknown) => {
      // Another process sealed the same run, or took the project's next dictionary id, first.
      if (err instanceof RunChanged || (err as { code?: unknown }).code === UNIQUE_VIOLATION) return 'changed' as const;
      throw err;
    });
    if (outcome !== 'changed') return outcome;
  }
  return { sealed: false, reason: 'busy' };
}

const UNIQUE_VIOLATION = '23505';

/** Thrown inside the seal transaction to roll it back: the run read is no longer all in the tail. */
class RunChanged extends Error {}

/** The columns of a `log_sealed` row (INSERT_SEALED's parameters). */
export function sealedRow(projectId: number, run: SealedRun, dictionaryId: number, bytes: number) {
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
    block: Buffer.from(run.block),
  };
}

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
