/**
 * The `server` backend: PostgreSQL through pg-promise. Each storage owns its
 * own pg-promise instance and pool, so two storages in one process (or a
 * host application using pg-promise itself) never share state: closing one
 * ends only its pool, and int8 parsing is set per pool, not on `pg`'s global
 * type registry.
 */
import type pgPromise from 'pg-promise';
import type { ServiceLogger } from '../../core/logger.js';
import type { ConnectionStats, Storage, StorageSession, WriteOps } from '../storage.js';
import { SchemaTooNewError, StorageUnavailableError } from '../../core/errors.js';
import { openPool, type PostgresStorageOptions } from './connection.js';
import { migrate } from './migrations.js';
import { describeConnectionError } from './pg-errors.js';
import { PostgresReads } from './reads.js';
import { PostgresWrites } from './writes.js';
import { Sealer } from '../log-index/sealer.js';
import type { SealDictionary } from '../log-index/sealed-block.js';
import { sealWorkers } from '../log-index/seal-worker.js';
import { DictionaryCache } from '../log-index/sealed-reads.js';
import { postgresSealBackend } from './sealing.js';
import { OpenIngestion } from './ingesting.js';
import * as sql from './sql.js';
import * as Retention from './retention.js';
import { createPostgresSignals } from './listen-notify.js';

/** Reads and transactions on one connection: what a maintenance pass runs on. */
class PostgresSession extends PostgresReads implements StorageSession {
  write<T>(fn: (tx: WriteOps) => Promise<T>): Promise<T> {
    return this.db.tx((t) => fn(new PostgresWrites(t, undefined, this.dictionaries)));
  }
}

class PostgresStorage extends PostgresReads implements Storage {
  readonly backend = 'server' as const;
  private closing: Promise<void> | null = null;
  /** LISTEN/NOTIFY between processes sharing the database. */
  readonly signals: ReturnType<typeof createPostgresSignals>;

  constructor(
    private readonly pool: pgPromise.IDatabase<unknown>,
    logger: ServiceLogger,
    sealing: boolean,
    private readonly ingesting = new OpenIngestion(),
    dictionaries = new DictionaryCache(),
  ) {
    super(pool, ingesting, dictionaries);
    // Another process's notification follows its commit: a settle polling for its transaction looks again at once.
    this.signals = createPostgresSignals(pool, logger, () => ingesting.nudge());
    this.sealer = new Sealer(postgresSealBackend(pool), this.sealWorkers, { logger });
    if (sealing) this.sealer.start();
  }

  /** Seals tails into blocks in the background (docs/storage-format.md), its CPU on its own thread. */
  private readonly sealWorkers = sealWorkers();
  private readonly sealer: Sealer;

  async write<T>(fn: (tx: WriteOps) => Promise<T>): Promise<T> {
    let writes: PostgresWrites | null = null;
    const result = await this.ingesting.track((marked) => this.pool.tx((t) => fn((writes = new PostgresWrites(t, marked, this.dictionaries)))));
    const done = writes as PostgresWrites | null;
    for (const write of done?.tailWrites ?? []) this.sealer.committed(write.projectId, write.pieces, write.tailEntries);
    if (done?.tailFull) this.sealer.notify();
    return result;
  }

  /** Seals every tail entry now (tests and tools; the service seals on its own). */
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

  connectionStats(): ConnectionStats {
    const pool = this.pool.$pool;
    return { open: pool.totalCount, inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount };
  }

  async schemaVersion(): Promise<number> {
    return (await this.pool.one<{ version: number }>(sql.SELECT_SCHEMA_VERSION)).version;
  }

  /**
   * The lock lives as long as its session, so the pass runs on a connection
   * of its own, opened outside the pool: requests keep every pooled
   * connection (even with a pool of one), and if the connection dies the
   * server releases the lock with it.
   */
  async withMaintenanceLock<T>(fn: (session: StorageSession) => Promise<T>): Promise<{ ran: true; result: T } | { ran: false }> {
    const connection = await this.pool.connect({ direct: true });
    try {
      const { locked } = await connection.one<{ locked: boolean }>(Retention.TRY_MAINTENANCE_LOCK, [Retention.MAINTENANCE_LOCK_KEY]);
      if (!locked) return { ran: false };
      // No explicit unlock: closing the session below releases the lock.
      return { ran: true, result: await fn(new PostgresSession(connection, undefined, this.dictionaries)) };
    } finally {
      // A direct connection's done() closes it and returns a promise.
      await Promise.resolve(connection.done()).catch(() => undefined);
    }
  }

  close(): Promise<void> {
    // Only this storage's pool: pgp.end() would end every pool pg-promise knows in the process.
    this.closing ??= Promise.all([this.signals.closeAll(), this.sealer.close().then(() => Promise.all(this.sealWorkers.map((w) => w.close())))]).then(() =>
      this.pool.$pool.end(),
    );
    return this.closing;
  }
}

/**
 * Connects, checks the server answers, migrates, and returns the storage.
 * Unreachable server, refused login or TLS failure → StorageUnavailableError;
 * a newer schema → SchemaTooNewError. On failure the pool is ended.
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<Storage> {
  const db = openPool(options);

  const target = `${options.host}:${options.port}/${options.database}`;
  try {
    await db.one(sql.PING);
  } catch (err) {
    await db.$pool.end().catch(() => undefined);
    throw new StorageUnavailableError(`cannot connect to PostgreSQL at ${target}: ${describeConnectionError(err)}`, { cause: err });
  }

  try {
    const version = await migrate(db);
    options.logger.debug('postgresql: schema ready', { version, database: options.database });
  } catch (err) {
    await db.$pool.end().catch(() => undefined);
    if (err instanceof SchemaTooNewError || err instanceof StorageUnavailableError) throw err;
    throw new StorageUnavailableError(`cannot migrate PostgreSQL database ${target}: ${describeConnectionError(err)}`, { cause: err });
  }
  return new PostgresStorage(db, options.logger, options.sealing ?? true);
}
