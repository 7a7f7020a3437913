/**
 * Server-backend ingestion beside PostgreSQL's own ceilings, in one run:
 * a bare COPY and an unnest INSERT of the same rows into an unindexed
 * table (bench/support/pg-ceiling.ts), then the service at 500 entries per
 * batch from 8 connections, with one process and with two processes on the
 * same database. Target: ≥ 25,000 entries/s and ≥ 0.55 × the COPY ceiling.
 *
 * Standalone: `node --import tsx bench/ingest-server.ts [--quick] [--entries N]`.
 */
import { createBatchPool, type BatchPool } from './support/dataset.js';
import { measurePgCeilings, type PgCeilings } from './support/pg-ceiling.js';
import {
  createOrg,
  fmt,
  load,
  percentile,
  serverDatabase,
  serviceSettings,
  startChild,
  verdict,
  type BenchDatabase,
  type BenchOrg,
  type LoadResult,
} from './support/harness.js';
import { shots } from './ingest.js';
import { pgBackendsCpu, processCpuMs } from './support/cpu-time.js';

const BATCH = 500;
const TARGET_RATE = 25_000;
const TARGET_OF_COPY = 0.55;

export function describeAgainstCopy(rate: number, ceilings: PgCeilings): string {
  const ofCopy = rate / ceilings.copy;
  return `${fmt(ofCopy, 2)} × COPY — target ≥ ${fmt(TARGET_RATE)} and ≥ ${TARGET_OF_COPY} × COPY: ${verdict(rate >= TARGET_RATE && ofCopy >= TARGET_OF_COPY)}`;
}

/** `processes` services on one database, each loaded by 8/processes connections, up to `total` entries in all. */
async function ingestWith(
  db: BenchDatabase,
  org: BenchOrg | null,
  pool: BatchPool,
  total: number,
  processes: number,
): Promise<{ result: LoadResult; org: BenchOrg; cpu: CpuPerEntry }> {
  const children = [await startChild({ kind: 'service', settings: serviceSettings(db) })];
  const made = org ?? (await createOrg(children[0]!.url, 10));
  for (let i = 1; i < processes; i++) children.push(await startChild({ kind: 'service', settings: serviceSettings(db) }));
  const backends = await pgBackendsCpu(db);
  const serviceCpu = () => children.reduce((ms, c) => ms + processCpuMs(c.pid), 0);
  const [service0, pg0] = [serviceCpu(), await backends.read()];
  // Backends may come and go with the pool: read them while the load runs.
  const sampler = setInterval(() => void backends.read(), 500);
  const started = performance.now();
  const results = await Promise.all(
    children.map((c) => load({ url: c.url, next: shots(pool, made.keys), connections: 8 / processes, totalEntries: total / processes })),
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const [service1, pg1] = [serviceCpu(), await backends.read()];
  await backends.close();
  await Promise.all(children.map((c) => c.stop()));
  const entries = results.reduce((n, r) => n + r.entries, 0);
  const result = {
    entries,
    requests: results.reduce((n, r) => n + r.requests, 0),
    seconds,
    rate: entries / seconds,
    latencies: results.flatMap((r) => r.latencies),
  };
  return { result, org: made, cpu: { service: ((service1 - service0) * 1000) / entries, postgres: ((pg1 - pg0) * 1000) / entries } };
}

/** CPU µs per entry: the service processes, and the PostgreSQL backends of the database. */
interface CpuPerEntry {
  service: number;
  postgres: number;
}

const cpuLine = (cpu: CpuPerEntry) => `CPU per entry: service ${fmt(cpu.service, 1)} µs, PostgreSQL backends ${fmt(cpu.postgres, 1)} µs`;

export async function benchServerIngest(options: { quick: boolean; entries?: number }): Promise<void> {
  const total = options.entries ?? (options.quick ? 100_000 : 300_000);
  const pool = createBatchPool(options.quick ? 40 : 100, BATCH);
  console.log(`Server-backend ingestion (${fmt(total)} entries of ~${fmt(pool.bodies[0]!.length / BATCH)} B, 500 per batch, 8 connections)`);
  const db = await serverDatabase();
  if (!db) return;
  try {
    const ceilings = await measurePgCeilings(db, pool, options.quick ? 50_000 : 150_000, 4);
    const cpuOf = (us: number | null) => (us === null ? '' : `, PostgreSQL CPU ${fmt(us, 1)} µs per row`);
    console.log(`  ceiling: bare COPY FROM STDIN, unindexed table, 500 rows a transaction, 4 writers: ${fmt(ceilings.copy)} rows/s${cpuOf(ceilings.copyCpu)}`);
    console.log(`  ceiling: unnest INSERT, same table and rows:                              ${fmt(ceilings.unnestInsert)} rows/s${cpuOf(ceilings.unnestCpu)}`);
    const one = await ingestWith(db, null, pool, total, 1);
    console.log(
      `  server, 1 process, empty → ${fmt(one.result.entries)}: ${fmt(one.result.rate)} entries/s, ${describeAgainstCopy(one.result.rate, ceilings)}`,
    );
    console.log(
      `    request p50 ${fmt(percentile(one.result.latencies, 50), 1)} ms, p99 ${fmt(percentile(one.result.latencies, 99), 1)} ms; ${cpuLine(one.cpu)}${ceilings.copyCpu ? ` (${fmt(one.cpu.postgres / ceilings.copyCpu, 1)} × COPY's)` : ''}`,
    );
    const two = await ingestWith(db, one.org, pool, total, 2);
    console.log(
      `  server, 2 processes on one database, ${fmt(one.result.entries)} → ${fmt(one.result.entries + two.result.entries)}: ${fmt(two.result.rate)} entries/s (${fmt(two.result.rate / one.result.rate, 2)} × one process)`,
    );
    console.log(
      `    request p50 ${fmt(percentile(two.result.latencies, 50), 1)} ms, p99 ${fmt(percentile(two.result.latencies, 99), 1)} ms; ${cpuLine(two.cpu)}`,
    );
  } finally {
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--entries');
  await benchServerIngest({ quick: process.argv.includes('--quick'), ...(at > 0 ? { entries: Number(process.argv[at + 1]) } : {}) });
}
