/**
 * Picks the backend named by the configuration and loads it lazily, so a
 * PostgreSQL deployment never loads sqlite3 and vice versa. Opening also
 * migrates: an older schema is upgraded in place, a newer one refused.
 */
import type { DatabaseConfig } from '../config.js';
import type { ServiceLogger } from '../logger.js';
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
  return openSqliteStorage({
    path: config.dbPath ?? '',
    readPoolSize: config.dbReadPoolSize,
    logger: options.logger,
  });
}
