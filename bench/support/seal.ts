/**
 * Seals a benchmark database's tail before it is measured, so queries and
 * disk figures are those of the sealed format (docs/storage-format.md):
 * opens the storage in this process (from `dist/`, as serve-child.ts loads
 * the service), counts the tail, calls `sealNow()` and closes. The service
 * must be stopped first (the file backend allows one process per file).
 */
import { existsSync } from 'node:fs';
import pgPromise from 'pg-promise';
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import type { DatabaseConfig } from '../../lib/core/config.js';
import { fmt, type BenchDatabase } from './harness.js';

/** Tail rows (`log_entries`) and entries in sealed blocks (`log_sealed`). */
export interface TailCount {
  tail: number;
  sealed: number;
}

export async function countTail(db: BenchDatabase): Promise<TailCount> {
  const sql = 'SELECT (SELECT COUNT(*) FROM log_entries) AS tail, (SELECT COALESCE(SUM(entries), 0) FROM log_sealed) AS sealed';
  const s = db.settings;
  if (s.dbBackend === 'file') {
    const conn = await open({ filename: s.dbPath!, driver: sqlite3.Database });
    try {
      await conn.exec('PRAGMA busy_timeout = 5000');
      const row = await conn.get<{ tail: number; sealed: number }>(sql);
      return { tail: Number(row?.tail ?? 0), sealed: Number(row?.sealed ?? 0) };
    } finally {
      await conn.close();
    }
  }
  const pgp = pgPromise({ noWarnings: true });
  const conn = pgp({
    host: s.dbServerHost!,
    port: s.dbServerPort!,
    database: s.dbServerDatabase!,
    user: s.dbServerUsername!,
    password: s.dbServerPassword!,
    max: 1,
  });
  try {
    const row = await conn.one<{ tail: string; sealed: string }>(sql);
    return { tail: Number(row.tail), sealed: Number(row.sealed) };
  } finally {
    await conn.$pool.end();
  }
}

const describe = (c: TailCount) =>
  `${fmt(c.tail)} in the tail, ${fmt(c.sealed)} sealed (${fmt((100 * c.tail) / Math.max(1, c.tail + c.sealed), 1)} % in the tail)`;

/** Seals every tail entry of `db` now; prints where the entries were before and how long sealing took. Returns the count before. */
export async function sealDatabase(db: BenchDatabase, indent = '    '): Promise<TailCount> {
  const before = await countTail(db);
  const dist = new URL('../../dist/lib/', import.meta.url);
  if (!existsSync(new URL('storage/open-storage.js', dist))) throw new Error('dist/ is missing: run `npm run build` before a benchmark');
  const [{ openStorage }, { silentLogger }, { CONFIG_DEFAULTS }] = await Promise.all([
    import(new URL('storage/open-storage.js', dist).href) as Promise<typeof import('../../lib/storage/open-storage.js')>,
    import(new URL('core/logger.js', dist).href) as Promise<typeof import('../../lib/core/logger.js')>,
    import(new URL('core/config.js', dist).href) as Promise<typeof import('../../lib/core/config.js')>,
  ]);
  const started = performance.now();
  const storage = await openStorage({ ...CONFIG_DEFAULTS, ...db.settings } as DatabaseConfig, { logger: silentLogger });
  try {
    await storage.sealNow?.();
  } finally {
    await storage.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await countTail(db);
  console.log(`${indent}(before sealing: ${describe(before)}; sealNow() took ${fmt(seconds, 1)} s; after: ${describe(after)})`);
  return before;
}
