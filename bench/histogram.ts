/**
 * Histogram benchmarks (`GET /v1/logs/histogram`) over HTTP, on a database
 * holding N entries in 10 projects (filled by `bench/ingest.ts`, or here
 * when run alone): p50/p99 with only scope, time range and level (target
 * p99 ≤ 100 ms), and with each other filter (target p99 ≤ 500 ms when it
 * matches up to 10 % of the range; the share each one matches is printed).
 * Beside them, the ceiling of the same run: a bare `SELECT count(*)` over
 * the same project and range, straight on the database.
 *
 * Standalone: `node --import tsx bench/histogram.ts [--quick]`.
 */
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import pgPromise from 'pg-promise';
import { Pool } from 'undici';
import type { BatchPool } from './support/dataset.js';
import { createBatchPool } from './support/dataset.js';
import { adminLogin, fileDatabase, fmt, percentile, serverDatabase, serviceSettings, settleServerDatabase, startChild, type BenchDatabase, type BenchOrg } from './support/harness.js';
import { ingestFromEmpty, type FilledDatabase } from './ingest.js';

export interface HistogramOptions {
  quick: boolean;
}

interface HistogramCase {
  name: string;
  /** `plain`: scope, range and level only (≤ 100 ms); `filter`: another filter (≤ 500 ms when it matches ≤ 10 %); `other`: reported only. */
  kind: 'plain' | 'filter' | 'other';
  params: (n: number) => string;
}

const DAY = 86_400_000;
const TARGET = { plain: 100, filter: 500, other: Infinity } as const;

/** The whole history of the dataset: every cycle is one day later. */
function history(pool: BatchPool, cycles: number): { from: string; to: string } {
  return { from: new Date(pool.startMs).toISOString(), to: new Date(pool.startMs + (cycles - 1) * DAY + pool.cycleSpanMs).toISOString() };
}

function cases(org: BenchOrg, pool: BatchPool, cycles: number): HistogramCase[] {
  const project = (n: number) => org.projectIds[n % org.projectIds.length]!;
  const all = history(pool, cycles);
  const whole = (n: number) => `project_id=${project(n)}&from=${all.from}&to=${all.to}`;
  const day = (n: number) => {
    const start = pool.startMs + (n % cycles) * DAY;
    return `project_id=${project(n)}&from=${new Date(start).toISOString()}&to=${new Date(start + DAY - 1).toISOString()}`;
  };
  // vocabulary[3] is in about one entry of ten (the generator's word choice is Zipf-like).
  const tenth = pool.vocabulary[3]!;
  const middle = pool.vocabulary[300]!;
  const rare = pool.vocabulary[4900]!;
  return [
    { name: 'whole history', kind: 'plain', params: whole },
    { name: 'whole history, level=warning', kind: 'plain', params: (n) => `${whole(n)}&level=warning` },
    { name: 'whole history, level=error, 500 buckets', kind: 'plain', params: (n) => `${whole(n)}&level=error&buckets=500` },
    { name: 'one day, level=info', kind: 'plain', params: (n) => `${day(n)}&level=info` },
    { name: 'group of 10, whole history', kind: 'other', params: () => `group_id=${org.groupId}&from=${all.from}&to=${all.to}` },
    { name: `q=${tenth} (~10 %)`, kind: 'filter', params: (n) => `${whole(n)}&q=${tenth}` },
    { name: `q=${middle} (mid word)`, kind: 'filter', params: (n) => `${whole(n)}&q=${middle}` },
    { name: `q=${rare} (rare word)`, kind: 'filter', params: (n) => `${whole(n)}&q=${rare}` },
    { name: `q=${middle.slice(0, 4)}* (prefix)`, kind: 'filter', params: (n) => `${whole(n)}&q=${middle.slice(0, 4)}*` },
    { name: 'request_id', kind: 'filter', params: (n) => `${whole(n)}&request_id=${pool.requestIds[n % pool.requestIds.length]}` },
    { name: 'session_id', kind: 'filter', params: (n) => `${whole(n)}&session_id=s-${n % 5000}` },
    { name: 'category=db, level=warning', kind: 'filter', params: (n) => `${whole(n)}&category=db&level=warning` },
    { name: 'logger=app.http', kind: 'filter', params: (n) => `${whole(n)}&logger=app.http` },
    { name: 'context.http.status=500', kind: 'filter', params: (n) => `${whole(n)}&context.http.status=500` },
    { name: 'context.user.name', kind: 'filter', params: (n) => `${whole(n)}&context.user.name=user${n % 2000}` },
    { name: 'context.* matching nothing', kind: 'filter', params: (n) => `${whole(n)}&context.user.name=nobody-${n}` },
    { name: 'one day, q common + level=error', kind: 'filter', params: (n) => `${day(n)}&level=error&q=${pool.vocabulary[0]}` },
  ];
}

/** The bare count over one project's range, straight on the database: what no histogram can beat. */
async function countCeiling(db: BenchDatabase): Promise<{ count(projectId: number, from: number, to: number): Promise<number>; close(): Promise<void> }> {
  const s = db.settings;
  if (s.dbBackend === 'server') {
    const pgp = pgPromise({ noWarnings: true });
    const conn = pgp({ host: s.dbServerHost!, port: s.dbServerPort!, database: s.dbServerDatabase!, user: s.dbServerUsername!, password: s.dbServerPassword!, max: 1 });
    return {
      count: async (p, from, to) => Number((await conn.one('SELECT count(*) AS n FROM log_entries WHERE project_id = $1 AND ts >= $2 AND ts <= $3', [p, from, to])).n),
      close: () => conn.$pool.end() as unknown as Promise<void>,
    };
  }
  const sqlite = await open({ filename: s.dbPath!, driver: sqlite3.Database, mode: sqlite3.OPEN_READONLY });
  return {
    count: async (p, from, to) => Number((await sqlite.get('SELECT count(*) AS n FROM log_entries WHERE project_id = ? AND ts >= ? AND ts <= ?', [p, from, to]))!.n),
    close: () => sqlite.close(),
  };
}

interface Timed {
  latencies: number[];
  /** Entries counted by the last answer. */
  counted: number;
  /** Status of a refusal, if any. */
  refused: string | null;
}

async function timeHistograms(token: string, c: HistogramCase, runs: number, client: Pool, first = 0): Promise<Timed> {
  const latencies: number[] = [];
  let counted = 0;
  let refused: string | null = null;
  for (let n = first; n < first + runs; n++) {
    const t = performance.now();
    const res = await client.request({ path: `/v1/logs/histogram?${c.params(n)}`, method: 'GET', headers: { authorization: `Bearer ${token}` } });
    const text = await res.body.text();
    latencies.push(performance.now() - t);
    if (res.statusCode !== 200) {
      refused = `${res.statusCode} ${text.slice(0, 120)}`;
      continue;
    }
    const body = JSON.parse(text) as { buckets: { counts: Record<string, number> }[] };
    counted = body.buckets.reduce((sum, b) => sum + Object.values(b.counts).reduce((a, x) => a + x, 0), 0);
  }
  return { latencies, counted, refused };
}

export async function histogramSuite(label: string, filled: FilledDatabase, runs: number): Promise<void> {
  await settleServerDatabase(filled.db);
  const child = await startChild({ kind: 'service', settings: serviceSettings(filled.db) });
  const token = await adminLogin(child.url);
  const client = new Pool(child.url, { connections: 1 });
  const cycles = Math.max(1, Math.floor(filled.entries / (filled.pool.bodies.length * filled.pool.entries[0]!)));
  const all = history(filled.pool, cycles);
  const ceiling = await countCeiling(filled.db);
  const ceilingLatencies: number[] = [];
  let perProject = 0;
  for (let n = 0; n < runs; n++) {
    const t = performance.now();
    perProject = await ceiling.count(filled.org.projectIds[n % filled.org.projectIds.length]!, Date.parse(all.from), Date.parse(all.to));
    ceilingLatencies.push(performance.now() - t);
  }
  await ceiling.close();
  console.log(`  ${label}: ${fmt(filled.entries)} entries in 10 projects (${fmt(perProject)} per project over the whole history of ${cycles} days), ${runs} runs per histogram`);
  console.log(`    ceiling: bare SELECT count(*) over one project's whole history, on the database: p50 ${fmt(percentile(ceilingLatencies, 50), 1)} ms  p99 ${fmt(percentile(ceilingLatencies, 99), 1)} ms`);
  let misses = 0;
  for (const c of cases(filled.org, filled.pool, cycles)) {
    // One unmeasured run per project first: measured runs are steady state.
    await timeHistograms(token, c, filled.org.projectIds.length, client, 1000);
    const { latencies, counted, refused } = await timeHistograms(token, c, runs, client);
    const p99 = percentile(latencies, 99);
    const share = (100 * counted) / perProject;
    const judged = c.kind === 'plain' || (c.kind === 'filter' && share <= 10);
    const ok = p99 <= TARGET[c.kind];
    if (judged && !ok) misses += 1;
    const matches = c.kind === 'filter' ? `  matches ${fmt(share, 2)} %` : '';
    const against = judged ? `  (≤ ${TARGET[c.kind]}: ${ok ? 'ok' : 'OVER'})` : c.kind === 'filter' ? '  (over 10 %: reported only)' : '';
    console.log(`    ${c.name.padEnd(42)} p50 ${fmt(percentile(latencies, 50), 1).padStart(7)} ms  p99 ${fmt(p99, 1).padStart(7)} ms${matches}${against}${refused ? `  refused: ${refused}` : ''}`);
  }
  console.log(`    ${misses === 0 ? 'every judged histogram within its target' : `${misses} histograms over their target`}`);
  await client.close();
  await child.stop();
}

export async function benchHistogram(options: HistogramOptions, filled: { file: FilledDatabase; server: FilledDatabase | null }): Promise<void> {
  const runs = options.quick ? 20 : 50;
  console.log('Histograms over HTTP');
  await histogramSuite('file', filled.file, runs);
  if (filled.server) await histogramSuite('server (PostgreSQL)', filled.server, runs);
}

/** Fills a database of each backend for a standalone run. */
async function fill(options: HistogramOptions): Promise<{ file: FilledDatabase; server: FilledDatabase | null }> {
  const total = options.quick ? 100_000 : 1_000_000;
  const pool = createBatchPool(options.quick ? 40 : 100, 500);
  const none = { bareHttp: Number.NaN, rawInsert: Number.NaN };
  console.log(`Filling (${fmt(total)} entries per backend)`);
  const file = await ingestFromEmpty(fileDatabase(), pool, total, none, 'file', 0);
  const serverDb = await serverDatabase();
  const server = serverDb ? await ingestFromEmpty(serverDb, pool, total, none, 'server', 0) : null;
  return { file, server };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { quick: process.argv.includes('--quick') };
  const filled = await fill(options);
  try {
    await benchHistogram(options, filled);
  } finally {
    await filled.file.db.drop();
    await filled.server?.db.drop();
  }
}
