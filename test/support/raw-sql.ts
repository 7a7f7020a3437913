/**
 * Reading a test database's tables straight, past the storage: what a test
 * of the stored format checks (blocks, tails) that no verb answers.
 */
import { open as openSqliteFile } from 'sqlite';
import sqlite3 from 'sqlite3';
import pgPromise from 'pg-promise';
import type { TestDatabase } from './backends.js';

const pgp = pgPromise({ noWarnings: true });

/** Rows of a query (`$1`-style parameters) read straight from either backend's database, every value a number. */
export async function rawRows(database: TestDatabase, sql: string, params: unknown[] = []): Promise<Record<string, number>[]> {
  const numbers = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)])));
  const c = database.config;
  if (c.dbBackend === 'file') {
    const raw = await openSqliteFile({ filename: c.dbPath as string, driver: sqlite3.Database, mode: sqlite3.OPEN_READONLY });
    try {
      return numbers(await raw.all<Record<string, unknown>[]>(sql.replace(/\$(\d)/g, '?$1'), params));
    } finally {
      await raw.close();
    }
  }
  const db = pgp({
    host: c.dbServerHost ?? '127.0.0.1',
    port: c.dbServerPort,
    database: c.dbServerDatabase ?? '',
    user: c.dbServerUsername ?? '',
    password: c.dbServerPassword ?? '',
    max: 1,
  });
  try {
    return numbers(await db.any<Record<string, unknown>>(sql, params));
  } finally {
    // Only this pool: pgp.end() would close every pool of the process.
    await db.$pool.end();
  }
}
