/**
 * Soak benchmark: does the service hold steady over time? The compiled
 * service runs in its own process (support/serve-child.ts) with metrics on,
 * while, for the whole run:
 * - ingestion is paced at 3,000 entries/s (100 per request every 33 ms,
 *   open loop, 2 projects in turn);
 * - 10 live streams stay open (3 on each project, 4 on their group), each
 *   matching `level=critical`, counting every frame by entry id: lost and
 *   duplicated frames against the critical entries the service accepted;
 * - a `GET /v1/logs` query is sent every 200 ms (five filter shapes in turn);
 * - the admin signs in with the password every 10 s (at the production
 *   scrypt cost); queries and reconnecting streams use the newest token;
 * - RSS and V8 heap used are read from `/metrics` every 10 s.
 * Prints errors by kind, frames expected/received/lost/duplicated, RSS
 * first/last/max and the least-squares slope of RSS and heap used over the
 * second half, in MiB/min. Target: no error, every frame once, RSS slope
 * under 0.2 MiB/min.
 *
 * In `npm run bench` it runs 2 minutes per backend (a short soak, which says
 * so); the full one: `LOGKEEP_BENCH_SOAK_MINUTES=30 npm run bench`, or alone
 * (after `npm run build`):
 *   node --import tsx bench/soak.ts [--minutes 30] [--backend file|server|both] [--heap-snapshots DIR] [--only ingest,streams,queries,sign-ins] [--detail]
 * `--only` runs part of the load (ingestion is always part of it), e.g.
 * `--only ingest` for ingestion alone. `--detail` also reads, every sample,
 * the service's `process.memoryUsage().arrayBuffers`, its RSS by kind from
 * /proc (anonymous, file-backed, shared) and the sizes of the database's
 * `-wal` and `-shm` files, and prints first/last/max and the second-half
 * slope of each (and of V8's heap total and `external`).
 * `--heap-snapshots` starts the service with `--heapsnapshot-signal=SIGUSR2`
 * and has it write a heap snapshot into DIR at 35 % and at 95 % of the run
 * (compare them with bench/support/heap-diff.ts); each snapshot pauses the
 * service for seconds and lifts its RSS, so slopes from such a run are not
 * the figures to quote.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { EventSource } from 'eventsource';
import { Pool } from 'undici';
import { createBatchPool } from './support/dataset.js';
import {
  adminLogin,
  createOrg,
  fileDatabase,
  fmt,
  percentile,
  serverDatabase,
  serviceSettings,
  startChild,
  verdict,
  type BenchDatabase,
  type BenchOrg,
} from './support/harness.js';
import { Tally, memorySample, procStatusRss, secondHalfSlope, type MemoryField, type Sample } from './support/soak-stats.js';

/** The soak's loads; ingestion is always one of them. */
export const SOAK_LOADS = ['ingest', 'streams', 'queries', 'sign-ins'] as const;
export type SoakLoad = (typeof SOAK_LOADS)[number];

export interface SoakOptions {
  minutes: number;
  backend?: 'file' | 'server' | 'both';
  heapSnapshotDir?: string;
  /** The loads to run (default: all four); 'ingest' must be among them. */
  only?: readonly SoakLoad[];
  /** Also read each sample's `arrayBuffers`, RSS by kind (/proc) and the `-wal`/`-shm` sizes, and print them. */
  detail?: boolean;
}

export interface SoakResult {
  backend: string;
  errors: Tally;
  expected: number;
  received: number;
  lost: number;
  duplicated: number;
  samples: Sample[];
  rssSlope: number;
  heapSlope: number;
}

const ENTRIES_PER_SECOND = 3_000;
const BATCH = 100;
const QUERY_EVERY_MS = 200;
const LOGIN_EVERY_MS = 10_000;
const SAMPLE_EVERY_MS = 10_000;
const MAX_INGEST_IN_FLIGHT = 8;
export const RSS_SLOPE_TARGET = 0.2;
/** The soak the target is set for; shorter ones print their slope unjudged. */
const FULL_MINUTES = 30;
const MIB = 2 ** 20;
/** Which project each stream watches (an index into the org's projects), or null for the whole group. */
const STREAM_SCOPES: (number | null)[] = [0, 0, 0, 1, 1, 1, null, null, null, null];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const kindOf = (err: unknown) => (err instanceof Error ? ((err as { code?: string }).code ?? err.name) : String(err));

interface Watched {
  project: number | null;
  expected: number;
  received: number;
  duplicated: number;
  reconnects: number;
  lastId: number;
  source: EventSource;
}

function openStreams(url: string, org: BenchOrg, token: () => string, errors: Tally): Promise<Watched[]> {
  const authFetch: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${token()}` } });
  return Promise.all(
    STREAM_SCOPES.map((project) => {
      const scope = project === null ? `group_id=${org.groupId}` : `project_id=${org.projectIds[project]}`;
      const source = new EventSource(`${url}/v1/logs/stream?${scope}&level=critical`, { fetch: authFetch });
      const w: Watched = { project, expected: 0, received: 0, duplicated: 0, reconnects: 0, lastId: 0, source };
      // Frames of one stream leave in id order, so an id not above the last is a repeat.
      source.addEventListener('log', (e) => {
        const id = Number(e.lastEventId);
        w.received += 1;
        if (id <= w.lastId) w.duplicated += 1;
        else w.lastId = id;
      });
      source.addEventListener('end', (e) => errors.add(`stream ended: ${e.data}`));
      return new Promise<Watched>((resolve, reject) => {
        let opened = false;
        source.onopen = () => {
          if (opened) w.reconnects += 1;
          opened = true;
          resolve(w);
        };
        source.onerror = (err) => {
          errors.add(`stream error: ${err.message ?? 'closed'}`);
          if (!opened) reject(new Error(`stream ${scope}: ${err.message}`));
        };
      });
    }),
  );
}

async function soakOn(label: string, db: BenchDatabase, options: SoakOptions): Promise<SoakResult> {
  const snapshots = options.heapSnapshotDir;
  const nodeArgs = snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : [];
  const child = await startChild({ kind: 'service', settings: serviceSettings(db, { metricsEnabled: true }) }, { nodeArgs });
  const loads = new Set<SoakLoad>(options.only ?? SOAK_LOADS);
  const dbPath = db.settings.dbBackend === 'file' ? db.settings.dbPath : undefined;
  const fileSize = (path: string) => (existsSync(path) ? statSync(path).size : 0);
  const errors = new Tally();
  const samples: Sample[] = [];
  const http = new Pool(child.url, { connections: 6, keepAliveTimeout: 60_000 });
  try {
    const org = await createOrg(child.url, 2);
    let token = org.token;
    const pool = createBatchPool(60, BATCH, 11);
    const critical = pool.bodies.map((b) => (JSON.parse(b.toString()) as { level: string }[]).filter((e) => e.level === 'critical').length);
    const streams = loads.has('streams') ? await openStreams(child.url, org, () => token, errors) : [];

    const started = performance.now();
    const deadline = started + options.minutes * 60_000;
    const running = () => performance.now() < deadline;
    const sample = async () => {
      try {
        const res = await http.request({ path: '/metrics', method: 'GET' });
        const s = memorySample((performance.now() - started) / 1000, await res.body.text());
        if (options.detail) {
          s.arrayBuffers = (await child.memory()).arrayBuffers;
          Object.assign(s, procStatusRss(readFileSync(`/proc/${child.pid}/status`, 'utf8')));
          if (dbPath) {
            s.walBytes = fileSize(`${dbPath}-wal`);
            s.shmBytes = fileSize(`${dbPath}-shm`);
          }
        }
        samples.push(s);
      } catch (err) {
        errors.add(`metrics ${kindOf(err)}`);
      }
    };
    await sample();

    let accepted = 0;
    const ingest = async () => {
      const inFlight = new Set<Promise<void>>();
      for (let n = 0; running(); n++) {
        const i = n % pool.bodies.length;
        const project = n % org.keys.length;
        const sent = http
          .request({
            path: '/v1/logs',
            method: 'POST',
            body: pool.body(i, Math.floor(n / pool.bodies.length)),
            headers: { authorization: `Bearer ${org.keys[project]}`, 'content-type': 'application/json' },
          })
          .then(async (res) => {
            const text = await res.body.text();
            if (res.statusCode !== 202) return errors.add(`ingest ${res.statusCode}`);
            const ok = (JSON.parse(text) as { accepted: number }).accepted;
            if (ok !== BATCH) errors.add('ingest: entries rejected');
            accepted += ok;
            for (const w of streams) if (w.project === null || w.project === project) w.expected += critical[i]!;
          })
          .catch((err) => errors.add(`ingest ${kindOf(err)}`));
        inFlight.add(sent);
        void sent.then(() => inFlight.delete(sent));
        if (inFlight.size >= MAX_INGEST_IN_FLIGHT) await Promise.race(inFlight);
        const wait = started + ((n + 1) * BATCH * 1000) / ENTRIES_PER_SECOND - performance.now();
        if (wait > 0) await sleep(wait);
      }
      await Promise.all(inFlight);
    };

    const common = pool.vocabulary[0]!;
    const shapes = [
      (n: number) => `project_id=${org.projectIds[n % 2]}&level=error&limit=50`,
      () => `group_id=${org.groupId}&q=${common}&limit=50`,
      (n: number) => `project_id=${org.projectIds[n % 2]}&context.user.plan=pro&limit=50`,
      () => `group_id=${org.groupId}&category=db&limit=50`,
      (n: number) => `project_id=${org.projectIds[n % 2]}&q=zzqx${n}&limit=50`,
    ];
    const queryMs: number[] = [];
    const queries = async () => {
      if (!loads.has('queries')) return;
      for (let n = 0; running(); n++) {
        const t = performance.now();
        try {
          const res = await http.request({ path: `/v1/logs?${shapes[n % shapes.length]!(n)}`, method: 'GET', headers: { authorization: `Bearer ${token}` } });
          await res.body.text();
          if (res.statusCode !== 200) errors.add(`query ${res.statusCode}`);
          queryMs.push(performance.now() - t);
        } catch (err) {
          errors.add(`query ${kindOf(err)}`);
        }
        await sleep(Math.max(0, t + QUERY_EVERY_MS - performance.now()));
      }
    };
    let logins = 0;
    const signIns = async () => {
      if (!loads.has('sign-ins')) return;
      while (running()) {
        await sleep(Math.min(LOGIN_EVERY_MS, deadline - performance.now()));
        if (!running()) break;
        try {
          token = await adminLogin(child.url);
          logins += 1;
        } catch (err) {
          errors.add(`login ${err instanceof Error ? err.message.slice(0, 60) : String(err)}`);
        }
      }
    };
    const sampler = async () => {
      for (let k = 1; running(); k++) {
        await sleep(Math.max(0, Math.min(started + k * SAMPLE_EVERY_MS, deadline) - performance.now()));
        if (running()) await sample();
      }
    };
    const snapshotter = async () => {
      if (!snapshots) return;
      for (const at of [0.35, 0.95]) {
        await sleep(Math.max(0, started + at * options.minutes * 60_000 - performance.now()));
        process.kill(child.pid, 'SIGUSR2');
      }
    };
    await Promise.all([ingest(), queries(), signIns(), sampler(), snapshotter()]);
    const seconds = (performance.now() - started) / 1000;
    await sample();

    // The last batches' frames may still be on their way.
    const settle = performance.now() + 15_000;
    while (performance.now() < settle && streams.some((w) => w.received - w.duplicated < w.expected)) await sleep(100);
    for (const w of streams) w.source.close();

    const sum = (f: (w: Watched) => number) => streams.reduce((s, w) => s + f(w), 0);
    const result: SoakResult = {
      backend: label,
      errors,
      expected: sum((w) => w.expected),
      received: sum((w) => w.received),
      duplicated: sum((w) => w.duplicated),
      lost: sum((w) => Math.max(0, w.expected - (w.received - w.duplicated))),
      samples,
      rssSlope: secondHalfSlope(samples, 'rss'),
      heapSlope: secondHalfSlope(samples, 'heapUsed'),
    };
    const rss = samples.map((s) => s.rss / MIB);
    const heap = samples.map((s) => s.heapUsed / MIB);
    const ok = errors.total === 0 && result.lost === 0 && result.duplicated === 0;
    console.log(
      `  ${label}: ${fmt(accepted)} entries in ${fmt(seconds)} s (${fmt(accepted / seconds)}/s), ${queryMs.length} queries (p50 ${fmt(percentile(queryMs, 50), 1)} ms, p99 ${fmt(percentile(queryMs, 99), 1)} ms), ${logins} sign-ins`,
    );
    console.log(
      `    errors: ${errors} — frames expected ${fmt(result.expected)}, received ${fmt(result.received)}, lost ${result.lost}, duplicated ${result.duplicated}, stream reconnects ${sum((w) => w.reconnects)}: ${ok ? 'no error, every frame once' : 'NOT CLEAN'}`,
    );
    console.log(
      `    RSS first ${fmt(rss[0]!, 1)}, last ${fmt(rss[rss.length - 1]!, 1)}, max ${fmt(Math.max(...rss), 1)} MiB; heap used first ${fmt(heap[0]!, 1)}, last ${fmt(heap[heap.length - 1]!, 1)}, max ${fmt(Math.max(...heap), 1)} MiB`,
    );
    // RSS rises through the first minutes (warm-up): a short soak's second half is mostly that, so it is not judged.
    const judged = options.minutes >= FULL_MINUTES ? verdict(result.rssSlope < RSS_SLOPE_TARGET) : `not judged on a soak under ${FULL_MINUTES} min`;
    console.log(
      `    second half: RSS ${fmt(result.rssSlope, 2)} MiB/min — target < ${RSS_SLOPE_TARGET}: ${judged}; heap used ${fmt(result.heapSlope, 2)} MiB/min`,
    );
    if (options.detail) {
      const fields: [MemoryField, string][] = [
        ['heapTotal', 'heap total'],
        ['external', 'external'],
        ['arrayBuffers', 'arrayBuffers'],
        ['rssAnon', 'RSS anonymous'],
        ['rssFile', 'RSS file'],
        ['rssShmem', 'RSS shared'],
        ['walBytes', '-wal file'],
        ['shmBytes', '-shm file'],
      ];
      for (const [field, name] of fields) {
        const values = samples.map((s) => s[field]).filter((v): v is number => v !== undefined);
        if (values.length > 0)
          console.log(
            `    ${name}: first ${fmt(values[0]! / MIB, 1)}, last ${fmt(values[values.length - 1]! / MIB, 1)}, max ${fmt(Math.max(...values) / MIB, 1)} MiB; second half ${fmt(secondHalfSlope(samples, field), 2)} MiB/min`,
          );
      }
    }
    const mib = (v: number | undefined) => (v === undefined ? '-' : fmt(v / MIB, 1));
    if (process.env.LOGKEEP_BENCH_VERBOSE)
      for (const s of samples)
        console.log(
          `      ${fmt(s.t)} s: RSS ${fmt(s.rss / MIB, 1)} MiB (anonymous ${mib(s.rssAnon)}, file ${mib(s.rssFile)}, shared ${mib(s.rssShmem)}), heap used ${fmt(s.heapUsed / MIB, 1)} of ${fmt(s.heapTotal / MIB, 1)} MiB, external ${fmt(s.external / MIB, 1)} MiB, arrayBuffers ${mib(s.arrayBuffers)} MiB, -wal ${mib(s.walBytes)}, -shm ${mib(s.shmBytes)} MiB`,
        );
    return result;
  } finally {
    await http.close();
    await child.stop();
  }
}

export async function benchSoak(options: SoakOptions): Promise<SoakResult[]> {
  const backend = options.backend ?? 'both';
  const { loadavg } = await import('node:os');
  const loads = new Set<SoakLoad>(options.only ?? SOAK_LOADS);
  if (!loads.has('ingest')) throw new Error('the soak always ingests: --only must include ingest');
  const parts = [`${fmt(ENTRIES_PER_SECOND)} entries/s paced`];
  if (loads.has('streams')) parts.push(`${STREAM_SCOPES.length} live streams`);
  if (loads.has('queries')) parts.push(`a query every ${QUERY_EVERY_MS} ms`);
  if (loads.has('sign-ins')) parts.push(`a sign-in every ${LOGIN_EVERY_MS / 1000} s`);
  console.log(
    `Soak, ${options.minutes} min per backend${options.minutes < FULL_MINUTES ? ` (short: LOGKEEP_BENCH_SOAK_MINUTES=30 for the full soak)` : ''}: ${parts.join(', ')}${loads.size < SOAK_LOADS.length ? ' (part of the load only)' : ''}; load average ${loadavg()
      .map((l) => fmt(l, 1))
      .join(' ')}`,
  );
  const results: SoakResult[] = [];
  const run = async (label: string, db: BenchDatabase | null) => {
    if (!db) return;
    try {
      results.push(await soakOn(label, db, options));
    } finally {
      await db.drop();
    }
  };
  if (backend !== 'server') await run('file', fileDatabase());
  if (backend !== 'file') await run('server (PostgreSQL)', await serverDatabase());
  console.log(
    `  load average after: ${loadavg()
      .map((l) => fmt(l, 1))
      .join(' ')}`,
  );
  return results;
}

/** The soak's length in `npm run bench`: 2 minutes unless LOGKEEP_BENCH_SOAK_MINUTES says otherwise. */
export function soakMinutesFromEnv(): number {
  const minutes = Number(process.env.LOGKEEP_BENCH_SOAK_MINUTES ?? 2);
  if (!(minutes > 0)) throw new Error('LOGKEEP_BENCH_SOAK_MINUTES must be a positive number');
  return minutes;
}

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const backend = flag('backend') ?? 'both';
  if (!['file', 'server', 'both'].includes(backend)) throw new Error('--backend takes file, server or both');
  const dir = flag('heap-snapshots');
  const only = flag('only')?.split(',');
  if (only && !only.every((l) => (SOAK_LOADS as readonly string[]).includes(l)))
    throw new Error(`--only takes a comma-separated list of ${SOAK_LOADS.join(', ')}`);
  await benchSoak({
    minutes: Number(flag('minutes') ?? 30),
    backend: backend as 'file' | 'server' | 'both',
    ...(dir ? { heapSnapshotDir: dir } : {}),
    ...(only ? { only: only as SoakLoad[] } : {}),
    detail: process.argv.includes('--detail'),
  });
}
