/**
 * Live-stream benchmarks (issue 6), the service in a forked process:
 * - delivery latency, ingest acknowledged → frame received at a real
 *   `eventsource` client, p50/p99 over 100 concurrent streams (ten filter
 *   shapes, project and group scopes) while background ingestion runs;
 *   once at a moderate rate and once with the writer saturated;
 * - RSS growth with 1,000 idle streams open (per stream).
 * Targets: p99 < 50 ms on the file backend at moderate load; < 50 KiB per
 * idle stream.
 *
 * Standalone: `node --import tsx bench/stream.ts [--quick] [--fanout-only]` (LOGKEEP_BENCH_STREAMS:
 * streams opened, 100 by default).
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { EventSource } from 'eventsource';
import { Pool } from 'undici';
import { createBatchPool, type BatchPool } from './support/dataset.js';
import {
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
  type Child,
} from './support/harness.js';

/** One admin opens every stream here (up to 1,000 idle ones): lift the per-user and total caps, and the connection cap, above that. */
const STREAM_BENCH_BOUNDS = { sseMaxStreams: 2000, sseMaxStreamsPerUser: 2000, httpMaxConnections: 4096 };

export interface StreamBenchOptions {
  quick: boolean;
  /** Only the runs compared with the fan-out ceiling (also LOGKEEP_BENCH_STREAM_FANOUT_ONLY=1). */
  fanoutOnly?: boolean;
}

const STREAMS = Number(process.env.LOGKEEP_BENCH_STREAMS ?? 100);
const IDLE_STREAMS = 1_000;
const TRACER_INTERVAL_MS = 20;
const LATENCY_TARGET_MS = 50;
const IDLE_TARGET_BYTES = 50 * 1024;

/** Ten filter shapes; tracer entries match every one, background entries none. */
function streamQueries(org: BenchOrg): string[] {
  const p = `project_id=${org.projectIds[0]}`;
  const g = `group_id=${org.groupId}`;
  return [
    `${p}&q=tracer`,
    `${g}&q=tracer`,
    `${p}&context.kind=tracer`,
    `${g}&context.kind=tracer`,
    `${p}&level=warning&q=tracer`,
    `${g}&level=warning&context.kind=tracer`,
    `${p}&category=bench.tracer`,
    `${g}&category=bench.tracer`,
    `${p}&q=trac*`,
    `${g}&logger=tracer`,
  ];
}

function tracerBody(tag: number): string {
  return JSON.stringify([
    { level: 'warning', event: `tracer ${tag}`, timestamp: new Date().toISOString(), category: 'bench.tracer', logger: 'tracer', kind: 'tracer', tag },
  ]);
}

interface LatencyResult {
  latencies: number[];
  /** The same, split by the streams' scope. */
  projectLatencies: number[];
  groupLatencies: number[];
  missing: number;
  early: number;
  backgroundRate: number;
}

/**
 * Opens 100 streams, sends one tracer entry every 20 ms while `background`
 * connections ingest 500-entry batches (paced to `backgroundRate` entries/s,
 * or as fast as they can when it is null), and measures, for every stream
 * and tracer, the time from the tracer's 202 to its frame.
 */
async function deliveryLatency(db: BenchDatabase, seconds: number, backgroundRate: number | null, pool: BatchPool): Promise<LatencyResult> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(db, STREAM_BENCH_BOUNDS) });
  try {
    return await measureLatency(child.url, await createOrg(child.url, 4), seconds, backgroundRate, pool);
  } finally {
    await child.stop();
    await db.drop();
  }
}

/** The same measurement against the bare fan-out server (serve-child.ts): the ceiling of the same run. */
async function fanoutCeiling(seconds: number, backgroundRate: number | null, pool: BatchPool): Promise<LatencyResult> {
  const child = await startChild({ kind: 'fanout' });
  try {
    const org: BenchOrg = { token: 'bare', groupId: 1, projectIds: [1, 2, 3, 4], keys: ['slk_1', 'slk_2', 'slk_3', 'slk_4'] };
    return await measureLatency(child.url, org, seconds, backgroundRate, pool);
  } finally {
    await child.stop();
  }
}

async function measureLatency(url: string, org: BenchOrg, seconds: number, backgroundRate: number | null, pool: BatchPool): Promise<LatencyResult> {
  const queries = streamQueries(org);
  const acked = new Map<number, number>();
  const received: Map<number, number>[] = [];
  const sources: EventSource[] = [];
  const authFetch: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${org.token}` } });
  await Promise.all(
    Array.from({ length: STREAMS }, (_, i) => {
      const seen = new Map<number, number>();
      received.push(seen);
      const source = new EventSource(`${url}/v1/logs/stream?${queries[i % queries.length]}`, { fetch: authFetch });
      sources.push(source);
      source.addEventListener('log', (e) => {
        seen.set((JSON.parse(e.data) as { tag: number }).tag, performance.now());
      });
      return new Promise<void>((resolve, reject) => {
        source.onopen = () => resolve();
        source.onerror = (err) => reject(new Error(`stream ${i}: ${err.message}`));
      });
    }),
  );

  const http = new Pool(url, { connections: 4, keepAliveTimeout: 60_000 });
  const tracerHttp = new Pool(url, { connections: 32, keepAliveTimeout: 60_000 });
  const deadline = performance.now() + seconds * 1000;
  let backgroundEntries = 0;
  const backgroundStart = performance.now();
  const backgroundKeys = org.keys; // the tracer project too: its feeds wake up on every commit
  const backgroundWorker = async (worker: number, workers: number) => {
    let n = worker;
    while (performance.now() < deadline) {
      const body = pool.body(n % pool.bodies.length, Math.floor(n / pool.bodies.length));
      const res = await http.request({
        path: '/v1/logs',
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${backgroundKeys[n % backgroundKeys.length]}` },
      });
      await res.body.text();
      backgroundEntries += pool.entries[n % pool.bodies.length]!;
      n += workers;
      if (backgroundRate !== null) {
        // Pace: the next batch is due when the running rate falls to the target.
        const due = backgroundStart + (backgroundEntries / backgroundRate) * 1000;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    }
  };
  // Tracers leave on a fixed schedule, each on its own (not after the previous 202), so
  // their number does not depend on how long commits take under the background load.
  const sendTracer = async (tag: number) => {
    const res = await tracerHttp.request({ path: '/v1/logs', method: 'POST', body: tracerBody(tag), headers: { authorization: `Bearer ${org.keys[0]}` } });
    await res.body.text();
    if (res.statusCode !== 202) throw new Error(`tracer ingest answered ${res.statusCode}`);
    acked.set(tag, performance.now());
  };
  const tracer = async () => {
    const inFlight: Promise<void>[] = [];
    const started = performance.now();
    for (let tag = 1; performance.now() < deadline; tag++) {
      inFlight.push(sendTracer(tag));
      const wait = started + tag * TRACER_INTERVAL_MS - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all(inFlight);
  };
  const workers = backgroundRate === null ? 4 : backgroundRate === 0 ? 0 : 2;
  await Promise.all([tracer(), ...Array.from({ length: workers }, (_, w) => backgroundWorker(w, workers))]);
  const backgroundSeconds = (performance.now() - backgroundStart) / 1000;
  // Stragglers: the last tracers' frames may still be on their way.
  const settle = performance.now() + 5_000;
  while (performance.now() < settle && received.some((seen) => seen.size < acked.size)) await new Promise((r) => setTimeout(r, 50));

  const latencies: number[] = [];
  const projectLatencies: number[] = [];
  const groupLatencies: number[] = [];
  let missing = 0;
  let early = 0;
  received.forEach((seen, i) => {
    const byScope = queries[i % queries.length]!.startsWith('project_id') ? projectLatencies : groupLatencies;
    for (const [tag, ackAt] of acked) {
      const at = seen.get(tag);
      if (at === undefined) missing += 1;
      else {
        // A frame may beat the 202 to the client (the notification and the response race): count it as 0.
        if (at < ackAt) early += 1;
        latencies.push(Math.max(0, at - ackAt));
        byScope.push(Math.max(0, at - ackAt));
      }
    }
  });
  for (const source of sources) source.close();
  await http.close();
  await tracerHttp.close();
  return { latencies, projectLatencies, groupLatencies, missing, early, backgroundRate: backgroundEntries / backgroundSeconds };
}

function printLatency(label: string, r: LatencyResult, target: number | null): void {
  const p50 = percentile(r.latencies, 50);
  const p99 = percentile(r.latencies, 99);
  const judged = target === null ? '' : ` — target p99 < ${target} ms: ${verdict(p99 < target)}`;
  console.log(
    `  ${label}: p50 ${fmt(p50, 1)} ms, p99 ${fmt(p99, 1)} ms, max ${fmt(Math.max(...r.latencies), 1)} ms over ${fmt(r.latencies.length)} frames` +
      ` (background ${fmt(r.backgroundRate)} entries/s; ${r.early} frames before their 202; missing ${r.missing})${judged}`,
  );
  const split = (xs: number[]) => `p50 ${fmt(percentile(xs, 50), 1)} ms, p99 ${fmt(percentile(xs, 99), 1)} ms`;
  console.log(`    project streams ${split(r.projectLatencies)}; group streams ${split(r.groupLatencies)}`);
}

/** Background rate of the runs compared with the bare fan-out ceiling. */
const FANOUT_BACKGROUND = 2_000;
/** Delivery p99 may be at most this multiple of the ceiling's in the same run. */
const FANOUT_RATIO_TARGET = 1.3;

function printRatio(label: string, r: LatencyResult, ceiling: LatencyResult): void {
  const line = (what: string, xs: number[], ceilingXs: number[]) => {
    const ratio = percentile(xs, 99) / percentile(ceilingXs, 99);
    console.log(`    ${what}: p99 ${fmt(ratio, 2)} × the bare fan-out ceiling's — target ≤ ${FANOUT_RATIO_TARGET}×: ${verdict(ratio <= FANOUT_RATIO_TARGET)}`);
  };
  line(label, r.latencies, ceiling.latencies);
  // Each scope against the ceiling's streams of the same scope (same filters, same sockets).
  line(`${label}, project streams`, r.projectLatencies, ceiling.projectLatencies);
  line(`${label}, group streams`, r.groupLatencies, ceiling.groupLatencies);
}

/** Opens `count` streams through node:http and keeps them open, reading and discarding. */
async function openIdleStreams(url: string, token: string, query: string, count: number): Promise<{ close(): void }> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const responses: IncomingMessage[] = [];
  const openOne = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(`${url}/v1/logs/stream?${query}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`stream refused: ${res.statusCode}`));
        res.on('data', () => {});
        res.on('error', () => {});
        responses.push(res);
        resolve();
      });
      req.on('error', reject);
      req.end();
    });
  for (let opened = 0; opened < count; opened += 50) await Promise.all(Array.from({ length: Math.min(50, count - opened) }, openOne));
  return {
    close() {
      for (const res of responses) res.destroy();
      agent.destroy();
    },
  };
}

/** RSS of the service before and after opening 1,000 idle streams (half project, half group scope). */
async function idleMemory(db: BenchDatabase, label: string): Promise<number> {
  // Two heartbeats (ping + re-validation) run while the streams sit open.
  const child = await startChild({ kind: 'service', settings: serviceSettings(db, { ...STREAM_BENCH_BOUNDS, sseHeartbeatIntervalSeconds: 2 }) });
  try {
    return await measureIdle(child, label);
  } finally {
    await child.stop();
    await db.drop();
  }
}

async function measureIdle(child: Child, label: string): Promise<number> {
  const org = await createOrg(child.url, 2);
  const warm = await openIdleStreams(child.url, org.token, `project_id=${org.projectIds[0]}`, 50);
  await new Promise((r) => setTimeout(r, 500));
  warm.close();
  await new Promise((r) => setTimeout(r, 1_000));
  const before = (await child.rss()).now;
  const half = IDLE_STREAMS / 2;
  const project = await openIdleStreams(child.url, org.token, `project_id=${org.projectIds[0]}&level=error`, half);
  const group = await openIdleStreams(child.url, org.token, `group_id=${org.groupId}&q=never`, half);
  await new Promise((r) => setTimeout(r, 5_000));
  const after = (await child.rss()).now;
  project.close();
  group.close();
  const perStream = (after - before) / IDLE_STREAMS;
  console.log(
    `  ${label}: ${fmt(IDLE_STREAMS)} idle streams: RSS ${fmt(before / 2 ** 20, 1)} → ${fmt(after / 2 ** 20, 1)} MiB, ` +
      `${fmt(perStream / 1024, 1)} KiB per stream — target < 50 KiB: ${verdict(perStream < IDLE_TARGET_BYTES)}`,
  );
  return perStream;
}

export async function runStreamBench(options: StreamBenchOptions): Promise<void> {
  const seconds = options.quick ? 5 : 15;
  const pool = createBatchPool(options.quick ? 40 : 120, 500, 7);
  console.log(`live stream: ${STREAMS} streams (10 filter shapes), one tracer entry every ${TRACER_INTERVAL_MS} ms, ${seconds} s per run`);
  const fanoutOnly = options.fanoutOnly ?? process.env.LOGKEEP_BENCH_STREAM_FANOUT_ONLY === '1';
  if (!fanoutOnly) printLatency('file, no background ingestion', await deliveryLatency(fileDatabase(), seconds, 0, pool), null);
  const ceiling = await fanoutCeiling(seconds, FANOUT_BACKGROUND, pool);
  printLatency(`ceiling: bare node:http fan-out, background ${fmt(FANOUT_BACKGROUND)} entries/s`, ceiling, null);
  const file = await deliveryLatency(fileDatabase(), seconds, FANOUT_BACKGROUND, pool);
  printLatency(`file, background ${fmt(FANOUT_BACKGROUND)} entries/s`, file, LATENCY_TARGET_MS);
  printRatio('file', file, ceiling);
  if (!fanoutOnly) printLatency('file, background saturating the writer', await deliveryLatency(fileDatabase(), seconds, null, pool), null);
  const server = await serverDatabase();
  if (server) {
    const result = await deliveryLatency(server, seconds, FANOUT_BACKGROUND, pool);
    printLatency(`server, background ${fmt(FANOUT_BACKGROUND)} entries/s`, result, null);
    printRatio('server', result, ceiling);
  }
  if (fanoutOnly) return;

  await idleMemory(fileDatabase(), 'file');
  const idleServer = await serverDatabase();
  if (idleServer) await idleMemory(idleServer, 'server');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runStreamBench({ quick: process.argv.includes('--quick'), fanoutOnly: process.argv.includes('--fanout-only') || undefined }).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
