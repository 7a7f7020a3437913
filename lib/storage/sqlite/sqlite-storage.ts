/**
 * The `file` backend: one SQLite database file, one writer connection and
 * `readPoolSize` read-only reader connections (sqlite3 runs each statement
 * on the libuv pool, so the event loop never blocks on disk).
 *
 * - `write(fn)` transactions are serialised by an async mutex on the writer
 *   (`BEGIN IMMEDIATE` … `COMMIT`/`ROLLBACK`), so statements of two
 *   transactions never interleave on the one connection.
 * - Plain reads go to the readers (least busy first); with no readers they
 *   run on the writer between transactions, never inside one.
 * - `write` must not be called from inside `fn` (it would wait for itself).
 */
import type { Database } from 'sqlite';
import type { ServiceLogger } from '../../core/logger.js';
import type { ConnectionStats, Storage, StorageSession, WriteOps } from '../storage.js';
import { SchemaTooNewError, StorageUnavailableError } from '../../core/errors.js';
import { closeConnection, connectionExecutor, openReader, openWriter, type SqlExecutor } from './connection.js';
import { migrate } from './migrations.js';
import { AsyncMutex } from './mutex.js';
import { lockedWriterExecutor, readerPoolExecutor, type ReaderLoad } from './read-routing.js';
import { SqliteReads } from './reads.js';
import { SqliteWrites } from './writes.js';
import * as sql from './sql.js';
import { sqliteSealBackend } from './sealing.js';
import { sealWorkers } from '../log-index/seal-worker.js';
import { Sealer } from '../log-index/sealer.js';
import type { SealDictionary } from '../log-index/sealed-block.js';
import { DictionaryCache } from '../log-index/sealed-reads.js';

export interface SqliteStorageOptions {
  /** The database file; created if missing, its directory must exist. */
  path: string;
  /** Read-only connections for plain reads, 0–16. */
  readPoolSize: number;
  logger: ServiceLogger;
  /** Seal in the background (default true); false leaves entries in the tail until `sealNow()` (tests). */
  sealing?: boolean;
}

class SqliteStorage extends SqliteReads implements Storage {
  readonly backend = 'file' as const;
  private closing: Promise<void> | null = null;
  private readonly sealWorkers = sealWorkers();
  private readonly sealer: Sealer;

  constructor(
    reads: SqlExecutor,
    private readonly writer: Database,
    private readonly readers: readonly Database[],
    private readonly writerMutex: AsyncMutex,
    private readonly logger: ServiceLogger,
    private readonly readerLoad: () => ReaderLoad,
  ) {
    super(reads, new DictionaryCache());
    const backend = sqliteSealBackend(reads, (fn) => this.transaction(fn));
    this.sealer = new Sealer(backend, this.sealWorkers, { logger });
  }

  /** Starts sealing in the background (docs/storage-format.md, "Sealing"). */
  startSealing(): void {
    this.sealer.start();
  }

  /** Seals every tail entry now, part-filled runs included (tests and tools; the service seals on its own). */
  sealNow(): Promise<void> {
    return this.sealer.sealNow();
  }

  tailRoom(projectId: number): Promise<void> {
    return this.sealer.waitForRoom(projectId);
  }

  ingestDictionary(projectId: number): Promise<SealDictionary | null> {
    return this.sealer.presealDictionary(projectId);
  }

  presealMissed(projectId: number): void {
    void this.sealer.presealMissed(projectId);
  }

  /** One writer transaction of plain statements (the sealer's). */
  private transaction<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new StorageUnavailableError('the storage is closed'));
    return this.writerMutex.runExclusive(async () => {
      await this.writer.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(connectionExecutor(this.writer));
        await this.writer.exec('COMMIT');
        return result;
      } catch (err) {
        await this.rollback();
        throw err;
      }
    });
  }

  /** The writer counts as in use while a transaction (or locked read) holds it; the rest queue behind it. */
  connectionStats(): ConnectionStats {
    const writerQueued = this.writerMutex.queued;
    const readers = this.readerLoad();
    return {
      open: 1 + this.readers.length,
      inUse: (writerQueued > 0 ? 1 : 0) + readers.inUse,
      waiting: Math.max(0, writerQueued - 1) + readers.waiting,
    };
  }

  write<T>(fn: (tx: WriteOps) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new StorageUnavailableError('the storage is closed'));
    return this.writerMutex.runExclusive(async () => {
      await this.writer.exec('BEGIN IMMEDIATE');
      let result: T;
      const tx = new SqliteWrites(connectionExecutor(this.writer), this.dictionaries);
      try {
        result = await fn(tx);
        await this.writer.exec('COMMIT');
      } catch (err) {
        await this.rollback();
        throw err;
      }
      // Ingested entries may have taken a tail past a full run.
      if (tx.ingested) this.sealer.notify();
      return result;
    });
  }

  async schemaVersion(): Promise<number> {
    const row = await this.db.get(sql.SELECT_SCHEMA_VERSION);
    return Number(row?.version ?? 0);
  }

  /**
   * One file, one writer: a pass needs no lock beyond the writer's. (Two
   * processes purging one file would only split the work between them.)
   */
  async withMaintenanceLock<T>(fn: (session: StorageSession) => Promise<T>): Promise<{ ran: true; result: T }> {
    return { ran: true, result: await fn(this) };
  }

  close(): Promise<void> {
    // Queued behind the in-flight transaction (and any already waiting).
    this.closing ??= this.sealer
      .close()
      .then(async () => {
        await Promise.all(this.sealWorkers.map((w) => w.close()));
      })
      .then(() =>
        this.writerMutex.runExclusive(async () => {
          await Promise.allSettled(this.readers.map(closeConnection));
          await closeConnection(this.writer);
        }),
      );
    return this.closing;
  }

  /** Rolls back unless SQLite already did (some errors end the transaction). */
  private async rollback(): Promise<void> {
    try {
      await this.writer.exec('ROLLBACK');
    } catch (err) {
      this.logger.debug('sqlite rollback found no open transaction', { error: String(err) });
    }
  }
}

/**
 * Opens (creating if needed) and migrates the database file. Throws
 * SchemaTooNewError for a newer schema and StorageUnavailableError when the
 * file cannot be opened or used.
 */
export async function openSqliteStorage(options: SqliteStorageOptions): Promise<Storage> {
  const { path, readPoolSize, logger } = options;
  if (!path) throw new StorageUnavailableError('no database file path given');
  if (!Number.isInteger(readPoolSize) || readPoolSize < 0 || readPoolSize > 16) {
    throw new RangeError(`readPoolSize must be an integer from 0 to 16, got ${readPoolSize}`);
  }
  let writer: Database | null = null;
  const readers: Database[] = [];
  try {
    writer = await openWriter(path);
    const version = await migrate(writer);
    // Readers open after the writer set WAL and created the schema.
    for (let i = 0; i < readPoolSize; i++) readers.push(await openReader(path));
    logger.debug('sqlite storage open', { path, schemaVersion: version, readers: readPoolSize });
  } catch (err) {
    await Promise.allSettled([...readers.map((r) => r.close()), ...(writer ? [writer.close()] : [])]);
    if (err instanceof SchemaTooNewError) throw err;
    throw new StorageUnavailableError(`cannot open the database file ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const mutex = new AsyncMutex();
  const writerExecutor = connectionExecutor(writer);
  const pool = readers.length > 0 ? readerPoolExecutor(readers) : null;
  const reads = pool ?? lockedWriterExecutor(writerExecutor, mutex);
  const noReaders: ReaderLoad = { inUse: 0, waiting: 0 };
  const storage = new SqliteStorage(reads, writer, readers, mutex, logger, pool ? () => pool.load() : () => noReaders);
  if (options.sealing !== false) storage.startSealing();
  return storage;
}
