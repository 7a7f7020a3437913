/**
 * The `server` backend: PostgreSQL through pg-promise. Each storage owns its
 * own pg-promise instance and pool, so two storages in one process (or a
 * host application using pg-promise itself) never share state: closing one
 * ends only its pool, and int8 parsing is set per pool, not on `pg`'s global
 * type registry.
 */
import { checkServerIdentity } from 'node:tls';
import pgPromise from 'pg-promise';
import type { ServiceLogger } from '../../core/logger.js';
import { SchemaTooNewError, StorageUnavailableError, type Storage, type StorageSession, type WriteOps } from '../storage.js';
import { migrate } from './migrations.js';
import { describeConnectionError } from './pg-errors.js';
import { PostgresReads } from './reads.js';
import { PostgresWrites } from './writes.js';
import { PendingListCleaner } from './pending-list-cleaner.js';
import * as sql from './sql.js';
import * as Retention from './retention.js';
import { createPostgresSignals } from './signals.js';

export interface PostgresStorageOptions {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  poolSize: number;
  /**
   * `disable`: plain TCP. `require`: TLS, certificate not checked.
   * `verify-full`: TLS, certificate chain (system CAs, or NODE_EXTRA_CA_CERTS)
   * and host name verified.
   */
  sslMode: 'disable' | 'require' | 'verify-full';
  logger: ServiceLogger;
  /** How long opening a connection (or waiting for a free pooled one) may take; 5 s unless given. */
  connectTimeoutMs?: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** int8 (bigint, count(*)). */
const INT8_OID = 20;

/**
 * Type parsers for one pool: `pg`'s defaults, except int8 → JS number (ids,
 * epoch-ms timestamps and counters all stay far below 2^53). Passed as the
 * pool's `types`, so `pg.types` — shared by everything in the process — is
 * left untouched.
 */
function typesWithInt8AsNumber(pgTypes: pgPromise.IMain['pg']['types']): pgPromise.IMain['pg']['types'] {
  return Object.assign(Object.create(pgTypes) as typeof pgTypes, {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID && format !== 'binary') return (value: string) => Number(value);
      return pgTypes.getTypeParser(oid, format);
    },
  });
}

type TlsOptions = { rejectUnauthorized: false } | { rejectUnauthorized: true; checkServerIdentity: typeof checkServerIdentity };

function tlsOptions(mode: PostgresStorageOptions['sslMode'], host: string): false | TlsOptions {
  if (mode === 'disable') return false;
  if (mode === 'require') return { rejectUnauthorized: false };
  // The chain is verified by Node; the name is checked here against the
  // configured host, because the pg 8.23.0 that pg-promise 12.7.1 pins gives
  // TLS no host for IP addresses, so Node would check the name 'localhost'.
  return { rejectUnauthorized: true, checkServerIdentity: (_servername, cert) => checkServerIdentity(host, cert) };
}

/** Reads and transactions on one connection: what a maintenance pass runs on. */
class PostgresSession extends PostgresReads implements StorageSession {
  write<T>(fn: (tx: WriteOps) => Promise<T>): Promise<T> {
    return this.db.tx((t) => fn(new PostgresWrites(t)));
  }
}

/** Distinguishes storages in pg-promise's process-wide registry (and its duplicate-connection warning). */
let storageCount = 0;

class PostgresStorage extends PostgresReads implements Storage {
  readonly backend = 'server' as const;
  private closing: Promise<void> | null = null;
  /** LISTEN/NOTIFY between processes sharing the database (D31). */
  readonly signals: ReturnType<typeof createPostgresSignals>;

  constructor(
    private readonly pool: pgPromise.IDatabase<unknown>,
    logger: ServiceLogger,
  ) {
    super(pool);
    this.signals = createPostgresSignals(pool, logger);
    this.pendingList = new PendingListCleaner(pool, logger);
  }

  /** Merges the search index's pending list away from ingestion requests. */
  readonly pendingList: PendingListCleaner;

  async write<T>(fn: (tx: WriteOps) => Promise<T>): Promise<T> {
    let writes: PostgresWrites | null = null;
    const result = await this.pool.tx((t) => fn((writes = new PostgresWrites(t))));
    const stored = (writes as PostgresWrites | null)?.storedEntries ?? 0;
    if (stored > 0) this.pendingList.added(stored);
    return result;
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
      return { ran: true, result: await fn(new PostgresSession(connection)) };
    } finally {
      // A direct connection's done() closes it and returns a promise.
      await Promise.resolve(connection.done()).catch(() => undefined);
    }
  }

  close(): Promise<void> {
    // Only this storage's pool: pgp.end() would end every pool pg-promise knows in the process.
    this.closing ??= Promise.all([this.signals.closeAll(), this.pendingList.idle()]).then(() => this.pool.$pool.end());
    return this.closing;
  }
}

/**
 * Connects, checks the server answers, migrates, and returns the storage.
 * Unreachable server, refused login or TLS failure → StorageUnavailableError;
 * a newer schema → SchemaTooNewError. On failure the pool is ended.
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<Storage> {
  const pgp = pgPromise();
  const connection: Exclude<Parameters<typeof pgp>[0], string> & { options: string } = {
    host: options.host,
    port: options.port,
    database: options.database,
    user: options.user,
    password: options.password,
    max: options.poolSize,
    ssl: tlsOptions(options.sslMode, options.host),
    // Bounds both opening a connection and waiting for a free one in the pool.
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    // TCP keepalive probes start after 30 s idle (OS default: 2 h), so half-open connections get noticed.
    keepAliveInitialDelayMillis: 30_000,
    application_name: 'logkeep',
    types: typesWithInt8AsNumber(pgp.pg.types),
    // pg-promise escapes string values assuming this setting (the default
    // since 9.1); pin it per session so a database or role that turned it
    // off cannot make a backslash in a value end the string literal early.
    options: '-c standard_conforming_strings=on',
  };
  const db = pgp(connection, `logkeep-storage-${++storageCount}`);
  // Idle clients emit 'error' when the server restarts or drops them; without
  // a listener that would crash the process. The pool replaces them on demand.
  db.$pool.on('error', (err: Error) => {
    options.logger.warn('postgresql: idle connection lost', { error: describeConnectionError(err) });
  });

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
  return new PostgresStorage(db, options.logger);
}
