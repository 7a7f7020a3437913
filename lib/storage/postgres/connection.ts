/**
 * Connections to PostgreSQL: one pg-promise instance and pool per storage,
 * so two storages in one process (or a host application using pg-promise
 * itself) never share state: closing one ends only its pool, and int8
 * parsing is set per pool, not on `pg`'s global type registry.
 */
import { checkServerIdentity } from 'node:tls';
import pgPromise, { type IBaseProtocol } from 'pg-promise';
import type { ServiceLogger } from '../../core/logger.js';
import { describeConnectionError } from './pg-errors.js';

/** The pool or a task/transaction: what every verb runs its SQL on. */
export type SqlExecutor = IBaseProtocol<unknown>;

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
  /** false: this storage does not seal in the background (tools and tests that seal at chosen moments). */
  sealing?: boolean;
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

/** Distinguishes storages in pg-promise's process-wide registry (and its duplicate-connection warning). */
let storageCount = 0;

/**
 * A new pool for the options. Nothing connects yet: the first query opens
 * the first connection.
 */
export function openPool(options: PostgresStorageOptions): pgPromise.IDatabase<unknown> {
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

  return db;
}
