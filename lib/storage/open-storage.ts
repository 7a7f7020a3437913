/**
 * Picks the backend named by the configuration and loads it lazily, so a
 * PostgreSQL deployment never loads sqlite3 and vice versa. Opening also
 * migrates: an older schema is upgraded in place, a newer one refused.
 */
import { statSync } from 'node:fs';
import type { DatabaseConfig } from '../core/config.js';
import type { ServiceLogger } from '../core/logger.js';
import type { Storage } from './storage.js';

export interface OpenStorageOptions {
  logger: ServiceLogger;
}

export async function openStorage(config: DatabaseConfig, options: OpenStorageOptions): Promise<Storage> {
  if (config.dbBackend === 'server') {
    const { openPostgresStorage } = await import('./postgres/postgres-storage.js');
    return openPostgresStorage({
      host: config.dbServerHost ?? '127.0.0.1',
      port: config.dbServerPort,
      database: config.dbServerDatabase ?? '',
      user: config.dbServerUsername ?? '',
      password: config.dbServerPassword ?? '',
      poolSize: config.dbServerPoolSize,
      sslMode: config.dbServerSslMode,
      logger: options.logger,
    });
  }
  const { openSqliteStorage } = await import('./sqlite/sqlite-storage.js');
  const storage = await openSqliteStorage({
    path: config.dbPath ?? '',
    readPoolSize: config.dbReadPoolSize,
    logger: options.logger,
  });
  warnIfOthersMayRead(config.dbPath ?? '', options.logger);
  return storage;
}

/**
 * A new database file is created owner-only; one created before that (or
 * by hand) keeps its mode, so the operator is told once at start.
 */
function warnIfOthersMayRead(path: string, logger: ServiceLogger): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return;
  }
  if ((mode & 0o077) === 0) return;
  logger.warn(
    `the database file ${path} is open to other users (mode ${mode.toString(8).padStart(4, '0')}); ` +
      'it holds password hashes and every log entry: chmod 600 it (its -wal and -shm files take its mode)',
  );
}
