/**
 * Disk per entry: varied entries (bench/support/varied-entries.ts, ~465 B
 * of JSON each) ingested over HTTP, 500 per request into 10 projects, into
 * each backend; then the database is settled and its growth divided by the
 * entries, every index included. Printed beside `zstd -3` and `gzip -6`
 * of the same entries as NDJSON (the CLIs; skipped with a note when
 * missing).
 *
 * Sealing: the service seals in the background; once it has caught up
 * the rest of the tail is sealed with `sealNow()` (bench/support/seal.ts),
 * so every entry is in a sealed block (docs/storage-format.md).
 * Settling: the file backend's write-ahead log is checkpointed and
 * truncated (the service is stopped first), so the main file holds
 * everything; on PostgreSQL the database is vacuumed and checkpointed, and
 * the figure is the growth of `pg_database_size` (tables, indexes, TOAST,
 * free-space and visibility maps). PostgreSQL's write-ahead log belongs to
 * the whole cluster, not to one database: after the checkpoint its
 * segments are recycled, so it is not counted.
 *
 * Standalone: `node --import tsx bench/disk.ts [--quick] [--entries=N]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgPromise from 'pg-promise';
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import { createOrg, fileDatabase, fmt, load, serverDatabase, serviceSettings, startChild, type BenchDatabase } from './support/harness.js';
import { createVariedGenerator } from './support/varied-entries.js';
import { countTail, sealDatabase } from './support/seal.js';

export interface DiskOptions {
  quick: boolean;
  /** Entries per backend (default 1M, 50k with `quick`). */
  entries?: number;
}

const BATCH = 500;
const PROJECTS = 10;
/** Disk per entry, sealed and settled, every index included (both backends); the stretch is a multiple of `zstd -3` of the same NDJSON. */
const TARGET_BYTES = 150;
const STRETCH_OF_ZSTD = 1.2;

/** The batches to send, as JSON bodies, and the same entries as NDJSON. */
export function variedBatches(entries: number, seed = 1): { bodies: Buffer[]; ndjson: Buffer } {
  const gen = createVariedGenerator(seed);
  const bodies: Buffer[] = [];
  const lines: Buffer[] = [];
  for (let done = 0; done < entries; done += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, entries - done) }, () => gen.next());
    bodies.push(Buffer.from(JSON.stringify(batch)));
    lines.push(Buffer.from(batch.map((e) => `${JSON.stringify(e)}\n`).join('')));
  }
  return { bodies, ndjson: Buffer.concat(lines) };
}

/** Bytes of `file` compressed by a CLI (`zstd -3 -c`, `gzip -6 -c`), or null when the CLI is missing. */
function compressedBytes(command: string, args: string[], file: string): number | null {
  try {
    return execFileSync(command, [...args, file], { maxBuffer: 1 << 30 }).length;
  } catch {
    return null;
  }
}

/** The file backend's bytes on disk: main file and write-ahead log, after a truncating checkpoint. */
async function sqliteBytes(path: string): Promise<{ total: number; tables: [string, number][] }> {
  const db = await open({ filename: path, driver: sqlite3.Database });
  try {
    await db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    let tables: [string, number][] = [];
    try {
      const rows = await db.all<{ name: string; bytes: number }[]>('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 12');
      tables = rows.map((r) => [r.name, Number(r.bytes)]);
    } catch {
      // dbstat is not compiled in: only the total is printed.
    }
    const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
    return { total: size(path) + size(`${path}-wal`), tables };
  } finally {
    await db.close();
  }
}

/** Waits until every project's tail holds less than a full run (1,024); returns how long it took in ms. */
async function waitForSealing(db: BenchDatabase): Promise<number> {
  const started = Date.now();
  for (;;) {
    const { tail } = await countTail(db);
    if (tail < PROJECTS * 1024) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Gives the pages the sealed tail rows left free back to the file system (as a retention pass does). */
async function reclaim(path: string): Promise<void> {
  const db = await open({ filename: path, driver: sqlite3.Database });
  try {
    await db.all('PRAGMA incremental_vacuum');
  } finally {
    await db.close();
  }
}

/** The server backend's database after VACUUM and CHECKPOINT: its size and its largest relations. */
async function postgresBytes(db: BenchDatabase): Promise<{ total: number; tables: [string, number][] }> {
  const s = db.settings;
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
    await conn.none('VACUUM');
    await conn.none('CHECKPOINT');
    const { bytes } = await conn.one<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    const rows = await conn.any<{ name: string; bytes: string }>(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 8`,
    );
    return { total: Number(bytes), tables: rows.map((r) => [r.name, Number(r.bytes)]) };
  } finally {
    await conn.$pool.end();
  }
}

async function bytesOf(db: BenchDatabase): Promise<{ total: number; tables: [string, number][] }> {
  return db.settings.dbBackend === 'file' ? sqliteBytes(db.settings.dbPath!) : postgresBytes(db);
}

/** Ingests the batches into a fresh database of one backend; returns the bytes per entry it grew by. */
async function measureBackend(db: BenchDatabase, label: string, bodies: Buffer[], entries: number, rawBytes: number): Promise<number> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  const org = await createOrg(child.url, PROJECTS);
  await child.stop();
  const before = await bytesOf(db);
  const again = await startChild({ kind: 'service', settings: serviceSettings(db) });
  let n = 0;
  const result = await load({
    url: again.url,
    connections: 4,
    totalEntries: entries,
    next: () => {
      const i = n++;
      return { body: bodies[i % bodies.length]!, entries: BATCH, key: org.keys[i % PROJECTS]! };
    },
  });
  // Both backends seal in the background: wait until each project's tail
  // is under a full run, as a service left running would, then seal the
  // rest (part-filled runs, as a quiet tail is sealed after
  // SEAL_MAX_TAIL_AGE_MS), so every entry is in the sealed format.
  const sealedAfter = await waitForSealing(db);
  await again.stop();
  console.log(`  ${label}: the background sealing caught up ${fmt(sealedAfter / 1000, 1)} s after the last batch`);
  await sealDatabase(db, '    ');
  if (db.settings.dbBackend === 'file') await reclaim(db.settings.dbPath!);
  const after = await bytesOf(db);
  const perEntry = (after.total - before.total) / result.entries;
  console.log(
    `  ${label}: ${fmt(perEntry)} B per entry (${fmt(perEntry / rawBytes, 2)} × the JSON), ${fmt(result.entries)} entries at ${fmt(result.rate)} entries/s`,
  );
  const largest = after.tables.filter(([, b]) => b >= 0.01 * after.total);
  if (largest.length > 0) console.log(`    largest: ${largest.map(([name, b]) => `${name} ${fmt(b / result.entries)} B`).join(', ')} (per entry)`);
  return perEntry;
}

export async function benchDisk(options: DiskOptions): Promise<{ file: number; server: number | null; zstd: number | null; gzip: number | null }> {
  const entries = options.entries ?? (options.quick ? 50_000 : 1_000_000);
  const { bodies, ndjson } = variedBatches(entries);
  const raw = ndjson.length / entries - 1;
  console.log(`Disk per entry (${fmt(entries)} varied entries, ${fmt(raw)} B of JSON each on average, ${BATCH} per request, ${PROJECTS} projects)`);
  const dir = mkdtempSync(join(process.env.LOGKEEP_BENCH_DIR ?? tmpdir(), 'logkeep-disk-'));
  let zstd: number | null = null;
  let gzip: number | null = null;
  try {
    const file = join(dir, 'entries.ndjson');
    writeFileSync(file, ndjson);
    zstd = compressedBytes('zstd', ['-3', '-q', '-c'], file);
    gzip = compressedBytes('gzip', ['-6', '-c'], file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const show = (name: string, bytes: number | null) =>
    console.log(
      bytes === null
        ? `  ${name}: (CLI not found)`
        : `  ${name} of the same NDJSON: ${fmt(bytes / entries, 1)} B per entry (${fmt(bytes / entries / raw, 2)} × the JSON)`,
    );
  show('zstd -3', zstd);
  show('gzip -6', gzip);
  const fileDb = fileDatabase();
  let fileBytes: number;
  try {
    fileBytes = await measureBackend(fileDb, 'file (SQLite, WAL checkpointed)', bodies, entries, raw);
  } finally {
    await fileDb.drop();
  }
  const serverDb = await serverDatabase();
  let serverBytes: number | null = null;
  if (serverDb) {
    try {
      serverBytes = await measureBackend(serverDb, 'server (PostgreSQL, vacuumed and checkpointed)', bodies, entries, raw);
    } finally {
      await serverDb.drop();
    }
  }
  if (zstd !== null) {
    const z = zstd / entries;
    console.log(
      `  against zstd -3 (${fmt(z, 1)} B per entry): file ${fmt(fileBytes / z, 2)} ×${serverBytes === null ? '' : `, server ${fmt(serverBytes / z, 2)} ×`}`,
    );
    const judge = (name: string, bytes: number) =>
      `${name} ${fmt(bytes, 1)} B: ≤ ${TARGET_BYTES} B ${bytes <= TARGET_BYTES ? 'met' : 'MISSED'}, stretch ≤ ${STRETCH_OF_ZSTD} × zstd -3 (${fmt(STRETCH_OF_ZSTD * z, 1)} B) ${bytes <= STRETCH_OF_ZSTD * z ? 'met' : 'missed'}`;
    console.log(`  targets: ${judge('file', fileBytes)}${serverBytes === null ? '' : `; ${judge('server', serverBytes)}`}`);
  }
  return { file: fileBytes, server: serverBytes, zstd: zstd === null ? null : zstd / entries, gzip: gzip === null ? null : gzip / entries };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = process.argv.find((a) => a.startsWith('--entries='));
  await benchDisk({ quick: process.argv.includes('--quick'), entries: arg ? Number(arg.slice('--entries='.length)) : undefined });
}
