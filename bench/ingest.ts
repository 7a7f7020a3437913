/**
 * Ingestion benchmarks (issue 5), each printed next to the two ceilings
 * measured in the same run:
 * - a bare `node:http` server that only parses the batch and answers 202;
 * - a raw multi-row INSERT of the same rows into a table without indexes.
 * Figures: file backend at 500 entries per batch from an empty database to
 * N entries (all indexes on), batches of 10 from 16 connections (group
 * commit), the server backend at 500 per batch, and peak RSS while four
 * clients send 10 MiB bodies during ingestion.
 *
 * Standalone: `node --import tsx bench/ingest.ts [--quick]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import { createBatchPool, type BatchPool } from './support/dataset.js';
import { SERVICE_HEAP_GROWTH_PERCENT } from '../lib/heap-growth.js';
import {
  createOrg,
  fileDatabase,
  fmt,
  load,
  percentile,
  serverDatabase,
  serviceSettings,
  startChild,
  verdict,
  type BenchDatabase,
  type BenchOrg,
  type Shot,
} from './support/harness.js';

export interface IngestOptions {
  quick: boolean;
}

export interface Ceilings {
  bareHttp: number;
  rawInsert: number;
}

/** A database filled by `ingestFromEmpty`, kept for the query benchmark. */
export interface FilledDatabase {
  db: BenchDatabase;
  org: BenchOrg;
  pool: BatchPool;
  entries: number;
  /** Entries per second while it was filled. */
  rate: number;
}

const BATCH = 500;

/** Cycles through the pool; each full pass shifts timestamps by a day. */
export function shots(pool: BatchPool, keys: string[]): () => Shot {
  let n = 0;
  return () => {
    const i = n % pool.bodies.length;
    const cycle = Math.floor(n / pool.bodies.length);
    n += 1;
    return { body: pool.body(i, cycle), entries: pool.entries[i]!, key: keys[n % keys.length]! };
  };
}

export async function measureCeilings(pool: BatchPool, options: IngestOptions): Promise<Ceilings> {
  const seconds = options.quick ? 4 : 10;
  const bare = await startChild({ kind: 'bare' });
  const deadline = Date.now() + seconds * 1000;
  const http = await load({ url: bare.url, next: shots(pool, ['slk_bare']), connections: 4, until: () => Date.now() > deadline });
  await bare.stop();

  const dir = mkdtempSync(join(process.env.LOGKEEP_BENCH_DIR ?? tmpdir(), 'logkeep-raw-'));
  const db = await open({ filename: join(dir, 'raw.db'), driver: sqlite3.Database });
  await db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
  await db.exec('CREATE TABLE raw (id INTEGER PRIMARY KEY, project_id INTEGER, received_at INTEGER, ts INTEGER, level INTEGER, bytes INTEGER, body TEXT)');
  const rows = options.quick ? 50_000 : 200_000;
  const started = performance.now();
  const sql = `INSERT INTO raw (project_id, received_at, ts, level, bytes, body) VALUES ${Array.from({ length: BATCH }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`;
  for (let done = 0, b = 0; done < rows; done += BATCH, b++) {
    const entries = JSON.parse(pool.bodies[b % pool.bodies.length]!.toString()) as Record<string, unknown>[];
    const params: unknown[] = [];
    for (const e of entries) {
      const body = JSON.stringify(e);
      params.push(1 + (b % 10), Date.now(), Date.parse(e.timestamp as string), 1, Buffer.byteLength(body), body);
    }
    await db.exec('BEGIN');
    await db.run(sql, params);
    await db.exec('COMMIT');
  }
  const rawInsert = rows / ((performance.now() - started) / 1000);
  await db.close();
  rmSync(dir, { recursive: true, force: true });

  console.log(`  ceiling: bare node:http parse + 202, 500/batch, 4 connections: ${fmt(http.rate)} entries/s`);
  console.log(`  ceiling: raw multi-row INSERT (500 rows, sqlite3, WAL, no index):   ${fmt(rawInsert)} rows/s`);
  return { bareHttp: http.rate, rawInsert };
}

function ratio(rate: number, ceilings: Ceilings): string {
  return `(${fmt((100 * rate) / ceilings.bareHttp, 1)} % of bare HTTP, ${fmt((100 * rate) / ceilings.rawInsert, 1)} % of raw INSERT)`;
}

/** 500-entry batches into an empty database up to `total` entries; prints the rate per tenth. */
export async function ingestFromEmpty(
  db: BenchDatabase,
  pool: BatchPool,
  total: number,
  ceilings: Ceilings,
  label: string,
  target: number,
): Promise<FilledDatabase> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  const org = await createOrg(child.url, 10);
  const step = total / 10;
  let mark = step;
  let markTime = performance.now();
  let markCount = 0;
  const segments: number[] = [];
  const result = await load({
    url: child.url,
    next: shots(pool, org.keys),
    connections: 4,
    totalEntries: total,
    onProgress: (accepted) => {
      if (accepted >= mark) {
        const now = performance.now();
        segments.push((accepted - markCount) / ((now - markTime) / 1000));
        markTime = now;
        markCount = accepted;
        mark += step;
      }
    },
  });
  const rss = await child.rss();
  await child.stop();
  console.log(
    `  ${label}: ${fmt(result.rate)} entries/s over ${fmt(result.entries)} entries ${ratio(result.rate, ceilings)} — target ≥ ${fmt(target)}: ${verdict(result.rate >= target)}`,
  );
  console.log(`    per tenth (entries/s): ${segments.map((r) => fmt(r)).join(' → ')}`);
  console.log(
    `    request p50 ${fmt(percentile(result.latencies, 50), 1)} ms, p99 ${fmt(percentile(result.latencies, 99), 1)} ms; peak RSS ${fmt(rss.peak / 2 ** 20)} MiB`,
  );
  return { db, org, pool, entries: result.entries, rate: result.rate };
}

/** Batches of 10 entries from 16 connections for a while, into an existing database. */
export async function smallBatches(db: BenchDatabase, org: BenchOrg, seconds: number, ceilings: Ceilings): Promise<number> {
  const small = createBatchPool(200, 10, 3);
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  const deadline = Date.now() + seconds * 1000;
  const result = await load({ url: child.url, next: shots(small, org.keys), connections: 16, until: () => Date.now() > deadline });
  await child.stop();
  console.log(
    `  file, 10/batch from 16 connections (group commit): ${fmt(result.rate)} entries/s, ${fmt(result.requests / result.seconds)} requests/s ${ratio(result.rate, ceilings)} — target ≥ 8,000: ${verdict(result.rate >= 8000)}`,
  );
  console.log(`    request p50 ${fmt(percentile(result.latencies, 50), 1)} ms, p99 ${fmt(percentile(result.latencies, 99), 1)} ms`);
  return result.rate;
}

/** The V8 heap cap the memory figure is also measured with (see the report line). */
export const HEAP_CAP_ARGS = ['--max-old-space-size=192'];

/**
 * Peak RSS while four clients send ~10 MiB bodies and 500-entry ingestion
 * runs: as the bin runs (heap growth limited, lib/heap-growth.ts), with
 * V8's defaults (which let garbage pile up to a multiple of the live heap
 * before collecting; the live heap stays near 50 MB here), and with the
 * old generation capped too.
 */
export async function memoryUnderLargeBodies(options: IngestOptions, nodeArgs: string[] = [], v8Defaults = false): Promise<number> {
  const db = fileDatabase();
  // The child limits heap growth as the bin does (lib/heap-growth.ts) unless told to keep V8's defaults.
  if (v8Defaults) process.env.LOGKEEP_BENCH_HEAP_DEFAULTS = '1';
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) }, { nodeArgs }).finally(
    () => delete process.env.LOGKEEP_BENCH_HEAP_DEFAULTS,
  );
  const org = await createOrg(child.url, 10);
  const perBody = 22_000;
  const big = createBatchPool(1, perBody, 11);
  const bigBody = big.bodies[0]!;
  const small = createBatchPool(20, BATCH, 12);
  // Forget the peak of setting up (the sign-in's hash runs in its own process).
  await child.rss();
  const rounds = options.quick ? 2 : 5;
  let bigDone = 0;
  const bigLoad = load({
    url: child.url,
    next: () => ({ body: bigBody, entries: perBody, key: org.keys[bigDone++ % org.keys.length]! }),
    connections: 4,
    totalEntries: perBody * 4 * rounds,
  });
  let finished = false;
  const background = load({ url: child.url, next: shots(small, org.keys), connections: 2, until: () => finished });
  const bigResult = await bigLoad.finally(() => {
    finished = true;
  });
  const smallResult = await background;
  const rss = await child.rss();
  await child.stop();
  await db.drop();
  const mib = rss.peak / 2 ** 20;
  if (process.env.LOGKEEP_BENCH_VERBOSE) console.log('    at peak:', JSON.stringify(rss.atPeak));
  console.log(
    `  memory${v8Defaults ? ' (V8 defaults, no heap-growth limit)' : nodeArgs.length ? ` (as the bin, and node ${nodeArgs.join(' ')})` : ` (as the bin runs: heap growth ${SERVICE_HEAP_GROWTH_PERCENT} %)`}: 4 clients × ${fmt(bigBody.length / 2 ** 20, 1)} MiB bodies, ${rounds} rounds, + 500/batch ingestion: peak RSS ${fmt(mib)} MiB — target ≤ 256: ${verdict(mib <= 256)} (${fmt(bigResult.rate)} + ${fmt(smallResult.rate)} entries/s)`,
  );
  return mib;
}

/** The server backend at 500 per batch: at least this many entries/s, and at least this share of the file backend's rate in the same run. */
const SERVER_TARGET = 25_000;
const SERVER_OF_FILE = 0.9;

/** Both backends' 500-per-batch rates, empty → full, on one line with the server's two targets. */
function printSideBySide(file: FilledDatabase, server: FilledDatabase): void {
  const ofFile = server.rate / file.rate;
  console.log(
    `  side by side, 500/batch, empty → ${fmt(file.entries)}: file ${fmt(file.rate)} entries/s, server ${fmt(server.rate)} entries/s = ${fmt(ofFile, 2)} × file — server ≥ ${fmt(SERVER_TARGET)}: ${server.rate >= SERVER_TARGET ? 'met' : 'MISSED'}; ≥ ${SERVER_OF_FILE} × file: ${ofFile >= SERVER_OF_FILE ? 'met' : 'MISSED'}`,
  );
}

export async function benchIngest(options: IngestOptions): Promise<{ file: FilledDatabase; server: FilledDatabase | null; ceilings: Ceilings }> {
  const total = options.quick ? 100_000 : 1_000_000;
  const pool = createBatchPool(options.quick ? 40 : 100, BATCH);
  console.log(`Ingestion (${options.quick ? 'quick' : 'full'}: ${fmt(total)} entries of ~${fmt(pool.bodies[0]!.length / BATCH)} B per backend)`);
  const ceilings = await measureCeilings(pool, options);
  const file = await ingestFromEmpty(fileDatabase(), pool, total, ceilings, 'file, 500/batch, empty → full', 20_000);
  await smallBatches(file.db, file.org, options.quick ? 5 : 15, ceilings);
  const serverDb = await serverDatabase();
  const server = serverDb ? await ingestFromEmpty(serverDb, pool, total, ceilings, 'server (PostgreSQL), 500/batch', SERVER_TARGET) : null;
  if (server) printSideBySide(file, server);
  await memoryUnderLargeBodies(options);
  await memoryUnderLargeBodies(options, [], true);
  await memoryUnderLargeBodies(options, HEAP_CAP_ARGS);
  return { file, server, ceilings };
}

/** Fills a database of each backend (1M entries, or 100k with `quick`) for a benchmark run on its own. */
export async function fillBothBackends(quick: boolean): Promise<{ file: FilledDatabase; server: FilledDatabase | null }> {
  const total = quick ? 100_000 : 1_000_000;
  const pool = createBatchPool(quick ? 40 : 100, 500);
  const none = { bareHttp: Number.NaN, rawInsert: Number.NaN };
  console.log(`Filling (${fmt(total)} entries per backend)`);
  const file = await ingestFromEmpty(fileDatabase(), pool, total, none, 'file', 0);
  const serverDb = await serverDatabase();
  const server = serverDb ? await ingestFromEmpty(serverDb, pool, total, none, 'server', 0) : null;
  if (server) printSideBySide(file, server);
  return { file, server };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { file, server } = await benchIngest({ quick: process.argv.includes('--quick') });
  await file.db.drop();
  await server?.db.drop();
}
