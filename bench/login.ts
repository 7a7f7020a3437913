/**
 * Login-burst benchmark: what 20 people signing in at once, at the
 * production scrypt cost, cost everyone else.
 *
 * The compiled service runs in its own process (support/serve-child.ts)
 * with ingestion running as fast as it is answered (500 entries a batch),
 * while `GET /healthz` is sent every 10 ms on connections of its own, open
 * loop (each probe's latency counts from when it was due, so a stalled event
 * loop shows in every probe it held up). Both run without a break; windows
 * without and with a burst alternate over them (quiet, burst, then burst,
 * quiet, …) so a drift in the ingestion rate as the database grows falls on
 * both kinds alike, and samples are pooled per kind. A burst window lasts
 * until its last sign-in has its answer, a quiet one as long as the burst
 * before it; a first burst, not counted, warms everything up.
 *
 * Targets: `/healthz` p99 during bursts under 20 ms, and ingestion during
 * bursts at least 80 % of its quiet rate.
 *
 * Standalone (after `npm run build`):
 *   node --import tsx bench/login.ts [--quick] [--backend file|server|both] [--pairs 2] [--quiet-seconds 5] [--connections 4] [--logn 14]
 */
import { Pool } from 'undici';
import { createBatchPool } from './support/dataset.js';
import {
  LOGIN_BURST,
  adminLogin,
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
} from './support/harness.js';
import { shots } from './ingest.js';
import { DEFAULT_MAX_CONCURRENT_HASHES, DEFAULT_SCRYPT_LOG_N, SCRYPT_P, SCRYPT_R } from '../lib/auth/passwords.js';
import { HASH_PROCESS_NICE } from '../lib/auth/hash-process.js';

export interface LoginBenchOptions {
  quick: boolean;
  backends?: 'file' | 'server' | 'both';
  /** Quiet/burst window pairs per backend. */
  pairs?: number;
  /** The shortest quiet window; otherwise each lasts as long as the last burst. */
  quietSeconds?: number;
  /** Ingestion connections (saturated: each sends its next batch when the last is answered). */
  connections?: number;
  logN?: number;
}

export interface LoginBurstFigures {
  backend: string;
  healthzQuietP99: number;
  healthzBurstP99: number;
  ingestQuiet: number;
  ingestBurst: number;
}

const PROBE_EVERY_MS = 10;
export const HEALTHZ_P99_TARGET_MS = 20;
export const INGEST_SHARE_TARGET = 0.8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `GET /healthz` every 10 ms until `stop()`. Each latency (ms, counted from
 * when the probe was due) goes to the array `into()` named when it was due;
 * none while it names null.
 */
async function probeHealthz(url: string, stop: () => boolean, into: () => number[] | null): Promise<void> {
  const pool = new Pool(url, { connections: 4, keepAliveTimeout: 60_000 });
  const inFlight: Promise<void>[] = [];
  let due = performance.now();
  while (!stop()) {
    const sentAt = due;
    const samples = into();
    inFlight.push(
      pool.request({ path: '/healthz', method: 'GET' }).then(async (res) => {
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`/healthz answered ${res.statusCode}`);
        samples?.push(performance.now() - sentAt);
      }),
    );
    due += PROBE_EVERY_MS;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await Promise.all(inFlight);
  await pool.close();
}

interface Burst {
  seconds: number;
  /** Each sign-in's time to its answer, ms. */
  latencies: number[];
  refused: number;
}

/** LOGIN_BURST sign-ins at once; a refusal (503) is counted, not retried. */
async function signInBurst(url: string): Promise<Burst> {
  const started = performance.now();
  const latencies: number[] = [];
  let refused = 0;
  await Promise.all(
    Array.from({ length: LOGIN_BURST }, async () => {
      const t = performance.now();
      try {
        await adminLogin(url);
        latencies.push(performance.now() - t);
      } catch (err) {
        if (!(err instanceof Error && / 503 /.test(err.message))) throw err;
        refused += 1;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies, refused };
}

interface Pooled {
  entries: number;
  seconds: number;
  healthz: number[];
  bursts: Burst[];
}

async function burstOnBackend(label: string, db: BenchDatabase, options: Required<LoginBenchOptions>): Promise<LoginBurstFigures> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(db), passwordHashLogN: options.logN });
  try {
    const org = await createOrg(child.url, 10);
    const batches = createBatchPool(options.quick ? 20 : 40, 500);
    const next = shots(batches, org.keys);

    // One sign-in on an otherwise idle service, for scale.
    const alone: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await adminLogin(child.url);
      alone.push(performance.now() - t);
    }

    // One ingestion load and one prober for the whole run; a window is a stretch of
    // it, so no window pays for a load starting or draining.
    let accepted = 0;
    let finished = false;
    let samples: number[] | null = null;
    const ingesting = load({ url: child.url, next, connections: options.connections, until: () => finished, onProgress: (n) => (accepted = n) });
    const probing = probeHealthz(
      child.url,
      () => finished,
      () => samples,
    );

    // Quiet windows last as long as the last burst did, so both kinds weigh the same.
    let lastBurstSeconds = 0;
    async function window(burst: boolean, into: Pooled | null): Promise<void> {
      const current: number[] = [];
      samples = current;
      const acceptedBefore = accepted;
      const started = performance.now();
      const quietMs = Math.max(options.quietSeconds, lastBurstSeconds) * 1000;
      const signed = burst ? await signInBurst(child.url) : await sleep(quietMs).then(() => null);
      const seconds = (performance.now() - started) / 1000;
      samples = null;
      if (signed) lastBurstSeconds = signed.seconds;
      if (!into) return;
      into.entries += accepted - acceptedBefore;
      into.seconds += seconds;
      into.healthz.push(...current);
      if (signed) into.bursts.push(signed);
    }

    const quiet: Pooled = { entries: 0, seconds: 0, healthz: [], bursts: [] };
    const bursts: Pooled = { entries: 0, seconds: 0, healthz: [], bursts: [] };
    try {
      await window(true, null); // warm-up (and the first burst's length), not counted
      for (let pair = 0; pair < options.pairs; pair++) {
        for (const isBurst of pair % 2 === 0 ? [false, true] : [true, false]) await window(isBurst, isBurst ? bursts : quiet);
      }
    } finally {
      finished = true;
      await Promise.all([ingesting, probing]);
    }

    const figures: LoginBurstFigures = {
      backend: label,
      healthzQuietP99: percentile(quiet.healthz, 99),
      healthzBurstP99: percentile(bursts.healthz, 99),
      ingestQuiet: quiet.entries / quiet.seconds,
      ingestBurst: bursts.entries / bursts.seconds,
    };
    const share = figures.ingestBurst / figures.ingestQuiet;
    const signIns = bursts.bursts.flatMap((b) => b.latencies);
    const refused = bursts.bursts.reduce((n, b) => n + b.refused, 0);
    const burstSeconds = bursts.bursts.map((b) => fmt(b.seconds, 1)).join(', ');
    console.log(`  ${label}: one sign-in alone ${fmt(percentile(alone, 50), 0)} ms (median of ${alone.length})`);
    console.log(
      `    quiet (${quiet.healthz.length} probes): /healthz p50 ${fmt(percentile(quiet.healthz, 50), 1)} ms, p99 ${fmt(figures.healthzQuietP99, 1)} ms; ingestion ${fmt(figures.ingestQuiet)} entries/s`,
    );
    console.log(
      `    bursts (${bursts.healthz.length} probes): /healthz p50 ${fmt(percentile(bursts.healthz, 50), 1)} ms, p99 ${fmt(figures.healthzBurstP99, 1)} ms — target < ${HEALTHZ_P99_TARGET_MS} ms: ${verdict(figures.healthzBurstP99 < HEALTHZ_P99_TARGET_MS)}`,
    );
    console.log(
      `      ingestion ${fmt(figures.ingestBurst)} entries/s, ${fmt(100 * share, 1)} % of quiet — target ≥ ${fmt(100 * INGEST_SHARE_TARGET)} %: ${verdict(share >= INGEST_SHARE_TARGET)}`,
    );
    console.log(
      `      ${bursts.bursts.length} bursts of ${LOGIN_BURST} sign-ins took ${burstSeconds} s; a sign-in waited p50 ${fmt(percentile(signIns, 50) / 1000, 2)} s, at most ${fmt(Math.max(...signIns) / 1000, 2)} s${refused ? `; ${refused} refused with 503` : ''}`,
    );
    return figures;
  } finally {
    await child.stop();
  }
}

export async function benchLogin(options: LoginBenchOptions): Promise<LoginBurstFigures[]> {
  const settled: Required<LoginBenchOptions> = {
    quick: options.quick,
    backends: options.backends ?? 'both',
    pairs: options.pairs ?? (options.quick ? 1 : 2),
    quietSeconds: options.quietSeconds ?? 5,
    connections: options.connections ?? 4,
    logN: options.logN ?? DEFAULT_SCRYPT_LOG_N,
  };
  console.log(
    `Login bursts: ${LOGIN_BURST} sign-ins at once, scrypt log2 N = ${settled.logN}, r = ${SCRYPT_R}, p = ${SCRYPT_P}, ${DEFAULT_MAX_CONCURRENT_HASHES} hash at a time at nice ${HASH_PROCESS_NICE}; ingestion saturated (500/batch, ${settled.connections} connections); ${settled.pairs} burst windows and ${settled.pairs} quiet windows as long, alternating`,
  );
  const figures: LoginBurstFigures[] = [];
  if (settled.backends !== 'server') {
    const db = fileDatabase();
    try {
      figures.push(await burstOnBackend('file', db, settled));
    } finally {
      await db.drop();
    }
  }
  if (settled.backends !== 'file') {
    const db = await serverDatabase();
    if (db) {
      try {
        figures.push(await burstOnBackend('server (PostgreSQL)', db, settled));
      } finally {
        await db.drop();
      }
    }
  }
  return figures;
}

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

function numberFlag(name: string): number | undefined {
  const value = flag(name);
  return value === undefined ? undefined : Number(value);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const backends = flag('backend');
  if (backends !== undefined && !['file', 'server', 'both'].includes(backends)) throw new Error('--backend takes file, server or both');
  await benchLogin({
    quick: process.argv.includes('--quick'),
    ...(backends === undefined ? {} : { backends: backends as 'file' | 'server' | 'both' }),
    ...(numberFlag('pairs') === undefined ? {} : { pairs: numberFlag('pairs')! }),
    ...(numberFlag('quiet-seconds') === undefined ? {} : { quietSeconds: numberFlag('quiet-seconds')! }),
    ...(numberFlag('connections') === undefined ? {} : { connections: numberFlag('connections')! }),
    ...(numberFlag('logn') === undefined ? {} : { logN: numberFlag('logn')! }),
  });
}
