/**
 * SQLite connections and the one narrow interface the verbs run SQL through.
 * The writer is read-write with WAL and `synchronous=FULL` (a 202 survives power loss); readers are
 * read-only (`query_only`) and, under WAL, see only committed transactions.
 * Every driver error passes through `toStorageError`, so unique violations
 * surface as StorageConflict.
 */
import { closeSync, openSync } from 'node:fs';
import { open, type Database } from 'sqlite';
import sqlite3 from 'sqlite3';
import { StorageConflict } from '../../core/errors.js';
import type { SqlRow } from './row-mappers.js';
import { StatementCache } from './statement-cache.js';

/** How long a connection waits on another process's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/** What the verbs need from a connection (or from a pool of them). */
export interface SqlExecutor {
  all(sql: string, params?: readonly unknown[]): Promise<SqlRow[]>;
  get(sql: string, params?: readonly unknown[]): Promise<SqlRow | undefined>;
  /** `changes`: rows inserted, updated or deleted. */
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>;
}

const WRITER_PRAGMAS = [
  // Lets the purge give freed pages back with `PRAGMA incremental_vacuum`.
  // It only takes effect on a new, empty file, before the switch to WAL
  // writes the header (and outside a transaction); on an existing file it
  // changes nothing.
  'PRAGMA auto_vacuum = INCREMENTAL',
  `PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`,
  'PRAGMA foreign_keys = ON',
  'PRAGMA synchronous = FULL',
] as const;
const READER_PRAGMAS = [`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`, 'PRAGMA foreign_keys = ON', 'PRAGMA query_only = ON'] as const;
const SET_WAL = 'PRAGMA journal_mode = WAL';

/**
 * Which unique index a SQLite message names ("UNIQUE constraint failed:
 * users.username") and the contract's name for it.
 */
const UNIQUE_CONSTRAINTS: readonly (readonly [string, string])[] = [
  ['users.username', 'username'],
  ['users.email', 'email'],
  ['users.is_primary_admin', 'primary_admin'],
  ['refresh_tokens.token_hash', 'token_hash'],
  ['secret_keys.key_hash', 'key_hash'],
  ['team_members.team_id, team_members.user_id', 'team_member'],
  ['user_identities.issuer, user_identities.subject', 'identity'],
];

/** A unique violation becomes StorageConflict; anything else is returned as is. */
export function toStorageError(err: unknown): unknown {
  if (!(err instanceof Error) || (err as { code?: unknown }).code !== 'SQLITE_CONSTRAINT') return err;
  const marker = 'UNIQUE constraint failed: ';
  const at = err.message.indexOf(marker);
  if (at < 0) return err;
  const columns = err.message.slice(at + marker.length).trim();
  const known = UNIQUE_CONSTRAINTS.find(([cols]) => cols === columns);
  return known ? new StorageConflict(known[1]) : err;
}

async function mapped<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw toStorageError(err);
  }
}

/** Each connection's prepared statements, finalized by `closeConnection`. */
const caches = new WeakMap<Database, StatementCache>();

function cacheOf(db: Database): StatementCache {
  let cache = caches.get(db);
  if (cache === undefined) caches.set(db, (cache = new StatementCache(db)));
  return cache;
}

/**
 * The executor of one connection, over its prepared statements (one trip
 * through the thread pool per statement instead of three). `get` runs the
 * statement to completion like `all`: a statement stopped at its first row
 * would keep its read snapshot, or an INSERT … RETURNING its write, open.
 * `run` is for statements without result rows.
 */
export function connectionExecutor(db: Database): SqlExecutor {
  const cache = cacheOf(db);
  const all = (sql: string, params: readonly unknown[]) => cache.use(sql, (s) => s.all<SqlRow[]>(params));
  return {
    all: (sql, params = []) => mapped(all(sql, params)),
    get: async (sql, params = []) => (await mapped(all(sql, params)))[0],
    run: async (sql, params = []) => {
      const result = await mapped(cache.use(sql, (s) => s.run(params)));
      return { changes: result.changes ?? 0 };
    },
  };
}

/** Finalizes the connection's prepared statements, then closes it. */
export async function closeConnection(db: Database): Promise<void> {
  await caches.get(db)?.close();
  caches.delete(db);
  await db.close();
}

/** Owner read and write only: the file holds password hashes and every log entry. */
export const DATABASE_FILE_MODE = 0o600;

/**
 * Creates a missing database file with `DATABASE_FILE_MODE` (SQLite would
 * create it 0644 less the umask). SQLite creates the `-wal` and `-shm`
 * files with the database file's mode, so they follow. An existing file
 * keeps its mode, whatever it is; SQLite's special names are left alone.
 */
function createPrivateFile(path: string): void {
  if (path === '' || path.startsWith(':') || path.startsWith('file:')) return;
  try {
    closeSync(openSync(path, 'wx', DATABASE_FILE_MODE));
  } catch {
    // It exists (keep its mode), or it cannot be created: SQLite's own open reports that.
  }
}

/**
 * Opens the writer: creates the file if missing (its directory must exist)
 * and switches it to WAL. Throws the driver's error when the file cannot be
 * opened; the caller turns it into StorageUnavailableError.
 */
export async function openWriter(path: string): Promise<Database> {
  createPrivateFile(path);
  const db = await open({ filename: path, driver: sqlite3.Database, mode: sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE });
  try {
    for (const pragma of WRITER_PRAGMAS) await db.exec(pragma);
    const mode = await retryWhileBusy(() => db.get<{ journal_mode: string }>(SET_WAL));
    if (mode?.journal_mode?.toLowerCase() !== 'wal') throw new Error(`could not switch ${path} to WAL (journal_mode is ${String(mode?.journal_mode)})`);
    return db;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Switching a new file to WAL needs an exclusive lock, and SQLite answers
 * SQLITE_BUSY at once (without the busy handler) when another process is
 * doing the same: retry for up to the busy timeout.
 */
async function retryWhileBusy<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    try {
      return await work();
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() + delay > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Opens one read-only reader on a file the writer has already set up. */
export async function openReader(path: string): Promise<Database> {
  const db = await open({ filename: path, driver: sqlite3.Database, mode: sqlite3.OPEN_READONLY });
  try {
    for (const pragma of READER_PRAGMAS) await db.exec(pragma);
    return db;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
