/**
 * Histogram benchmarks (`GET /v1/logs/histogram`) over HTTP, on a database
 * holding N entries in 10 projects (filled by `bench/ingest.ts`, or here
 * when run alone): p50/p99 with only scope, time range and level (target
 * p99 ≤ 100 ms), and with each other filter (target p99 ≤ 500 ms when it
 * matches up to 10 % of the range; the share each one matches is printed).
 * Beside them, a bare `SELECT count(*)` of the same project and range's
 * entries, straight on the database: what counting the entries costs (the
 * floor of a histogram that reads them; without text conditions one reads
 * the per-minute and per-hour rollup instead, so it may come in under this).
 *
 * Standalone: `node --import tsx bench/histogram.ts [--quick] [--plain]`
 * (`--plain`: only the histograms without text filters).
 */
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import pgPromise from 'pg-promise';
import { Pool } from 'undici';
import type { BatchPool } from './support/dataset.js';
import { adminLogin, fmt, percentile, serviceSettings, settleServerDatabase, startChild, type BenchDatabase, type BenchOrg } from './support/harness.js';
import { fillBothBackends, type FilledDatabase } from './ingest.js';

export interface HistogramOptions {
  quick: boolean;
  /** Only the histograms of scope, range and level (no text filter). */
  plain?: boolean;
}

interface HistogramCase {
  name: string;
  /** `plain`: scope, range and level only (≤ 100 ms); `filter`: another filter (≤ 500 ms when it matches ≤ 10 %); `other`: reported only. */
  kind: 'plain' | 'filter' | 'other';
  /** The project (null: the group) and range of run `n`; `filters` adds the rest. */
  scope: (n: number) => { projectId: number | null; from: number; to: number };
  filters: (n: number) => string;
}

const DAY = 86_400_000;
const TARGET = { plain: 100, filter: 500, other: Infinity } as const;

/** The whole history of the dataset: every cycle is one day later. */
function history(pool: BatchPool, cycles: number): { from: number; to: number } {
  return { from: pool.startMs, to: pool.startMs + (cycles - 1) * DAY + pool.cycleSpanMs };
}

function paramsOf(c: HistogramCase, groupId: number, n: number): string {
  const { projectId, from, to } = c.scope(n);
  const scope = projectId === null ? `group_id=${groupId}` : `project_id=${projectId}`;
  const extra = c.filters(n);
  return `${scope}&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}${extra ? `&${extra}` : ''}`;
}

function cases(org: BenchOrg, pool: BatchPool, cycles: number): HistogramCase[] {
  const project = (n: number) => org.projectIds[n % org.projectIds.length]!;
  const all = history(pool, cycles);
  const whole = (n: number) => ({ projectId: project(n), ...all });
  // One day of log time (the console's default range); the dataset puts one cycle in each day.
  const day = (n: number) => ({ projectId: project(n), from: pool.startMs + (n % cycles) * DAY, to: pool.startMs + (n % cycles) * DAY + DAY - 1 });
  const group = () => ({ projectId: null, ...all });
  // vocabulary[3] is in about one entry of ten (the generator's word choice is Zipf-like).
  const tenth = pool.vocabulary[3]!;
  const middle = pool.vocabulary[300]!;
  const rare = pool.vocabulary[4900]!;
  const filters: [string, (n: number) => string][] = [
    [`q=${tenth} (~10 %)`, () => `q=${tenth}`],
    [`q=${middle} (mid word)`, () => `q=${middle}`],
    [`q=${rare} (rare word)`, () => `q=${rare}`],
    [`q=${middle.slice(0, 4)}* (prefix)`, () => `q=${middle.slice(0, 4)}*`],
    ['request_id', (n) => `request_id=${pool.requestIds[n % pool.requestIds.length]}`],
    ['session_id', (n) => `session_id=s-${n % 5000}`],
    ['category=db, level=warning', () => 'category=db&level=warning'],
    ['logger=app.http', () => 'logger=app.http'],
    ['context.http.status=500', () => 'context.http.status=500'],
    ['context.user.name', (n) => `context.user.name=user${n % 2000}`],
    ['context.* matching nothing', (n) => `context.user.name=nobody-${n}`],
  ];
  return [
    { name: 'day: no filter', kind: 'plain', scope: day, filters: () => '' },
    { name: 'day: level=warning', kind: 'plain', scope: day, filters: () => 'level=warning' },
    { name: 'history: no filter', kind: 'plain', scope: whole, filters: () => '' },
    { name: 'history: level=warning', kind: 'plain', scope: whole, filters: () => 'level=warning' },
    { name: 'history: level=error, 500 buckets', kind: 'plain', scope: whole, filters: () => 'level=error&buckets=500' },
    { name: 'group of 10, history: level=warning', kind: 'other', scope: group, filters: () => 'level=warning' },
    ...filters.map(([name, f]): HistogramCase => ({ name: `day: ${name}`, kind: 'filter', scope: day, filters: f })),
    ...filters.map(([name, f]): HistogramCase => ({ name: `history: ${name}`, kind: 'filter', scope: whole, filters: f })),
  ];
}

/** The bare count of one project's range's entries, straight on the database: what reading the entries costs. */
async function countCeiling(db: BenchDatabase): Promise<{ count(projectIds: number[], from: number, to: number): Promise<number>; close(): Promise<void> }> {
  const s = db.settings;
  if (s.dbBackend === 'server') {
    const pgp = pgPromise({ noWarnings: true });
    const conn = pgp({
      host: s.dbServerHost!,
      port: s.dbServerPort!,
      database: s.dbServerDatabase!,
      user: s.dbServerUsername!,
      password: s.dbServerPassword!,
      max: 1,
    });
    return {
      count: async (p, from, to) =>
        Number((await conn.one('SELECT count(*) AS n FROM log_entries WHERE project_id = ANY($1::bigint[]) AND ts >= $2 AND ts <= $3', [p, from, to])).n),
      close: () => conn.$pool.end() as unknown as Promise<void>,
    };
  }
  const sqlite = await open({ filename: s.dbPath!, driver: sqlite3.Database, mode: sqlite3.OPEN_READONLY });
  return {
    count: async (p, from, to) =>
      Number(
        (await sqlite.get('SELECT count(*) AS n FROM log_entries WHERE project_id IN (SELECT value FROM json_each(?)) AND ts >= ? AND ts <= ?', [
          JSON.stringify(p),
          from,
          to,
        ]))!.n,
      ),
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

async function timeHistograms(token: string, path: (n: number) => string, runs: number, client: Pool, first = 0): Promise<Timed> {
  const latencies: number[] = [];
  let counted = 0;
  let refused: string | null = null;
  for (let n = first; n < first + runs; n++) {
    const t = performance.now();
    const res = await client.request({ path: `/v1/logs/histogram?${path(n)}`, method: 'GET', headers: { authorization: `Bearer ${token}` } });
    const text = await res.body.text();
    latencies.push(performance.now() - t);
    if (res.statusCode !== 200) {
      refused = `${res.statusCode} ${text.slice(0, 120)}`;
      continue;
    }
    const body = JSON.parse(text) as { buckets: { counts: Record<string, number> }[] };
    counted += body.buckets.reduce((sum, b) => sum + Object.values(b.counts).reduce((a, x) => a + x, 0), 0);
  }
  return { latencies, counted, refused };
}

export async function histogramSuite(label: string, filled: FilledDatabase, runs: number, plain = false): Promise<void> {
  await settleServerDatabase(filled.db);
  const child = await startChild({ kind: 'service', settings: serviceSettings(filled.db) });
  const token = await adminLogin(child.url);
  const client = new Pool(child.url, { connections: 1 });
  const cycles = Math.max(1, Math.floor(filled.entries / (filled.pool.bodies.length * filled.pool.entries[0]!)));
  const ceiling = await countCeiling(filled.db);
  console.log(
    `  ${label}: ${fmt(filled.entries)} entries in 10 projects over ${cycles} days of log time, ${runs} runs per histogram (day: one project's day; history: one project's whole history)`,
  );
  console.log(`    ${''.padEnd(44)} ${'histogram over HTTP'.padEnd(36)} bare SELECT count(*) of the range's entries`);
  let misses = 0;
  for (const c of cases(filled.org, filled.pool, cycles).filter((x) => !plain || x.kind !== 'filter')) {
    // One unmeasured run per project first: measured runs are steady state.
    await timeHistograms(token, (n) => paramsOf(c, filled.org.groupId, n), filled.org.projectIds.length, client, 1000);
    const { latencies, counted, refused } = await timeHistograms(token, (n) => paramsOf(c, filled.org.groupId, n), runs, client);
    const bare: number[] = [];
    let inRange = 0;
    for (let n = 0; n < runs; n++) {
      const { projectId, from, to } = c.scope(n);
      const t = performance.now();
      inRange += await ceiling.count(projectId === null ? filled.org.projectIds : [projectId], from, to);
      bare.push(performance.now() - t);
    }
    const p99 = percentile(latencies, 99);
    const share = inRange === 0 ? 0 : (100 * counted) / inRange;
    const judged = c.kind === 'plain' || (c.kind === 'filter' && share <= 10);
    const ok = p99 <= TARGET[c.kind];
    if (judged && !ok) misses += 1;
    const matches = c.kind === 'filter' ? ` matches ${fmt(share, 2)} %` : '';
    const against = judged ? ` (≤ ${TARGET[c.kind]}: ${ok ? 'ok' : 'OVER'})` : c.kind === 'filter' ? ' (over 10 %: reported only)' : '';
    console.log(
      `    ${c.name.padEnd(44)} p50 ${fmt(percentile(latencies, 50), 1).padStart(7)} p99 ${fmt(p99, 1).padStart(7)} ms   p50 ${fmt(percentile(bare, 50), 1).padStart(6)} p99 ${fmt(percentile(bare, 99), 1).padStart(6)} ms over ${fmt(inRange / runs)} entries${matches}${against}${refused ? `  refused: ${refused}` : ''}`,
    );
  }
  await ceiling.close();
  console.log(`    ${misses === 0 ? 'every judged histogram within its target' : `${misses} histograms over their target`}`);
  await client.close();
  await child.stop();
}

export async function benchHistogram(options: HistogramOptions, filled: { file: FilledDatabase; server: FilledDatabase | null }): Promise<void> {
  const runs = options.quick ? 20 : 50;
  console.log('Histograms over HTTP');
  await histogramSuite('file', filled.file, runs, options.plain);
  if (filled.server) await histogramSuite('server (PostgreSQL)', filled.server, runs, options.plain);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { quick: process.argv.includes('--quick'), plain: process.argv.includes('--plain') };
  const filled = await fillBothBackends(options.quick);
  try {
    await benchHistogram(options, filled);
  } finally {
    await filled.file.db.drop();
    await filled.server?.db.drop();
  }
}
