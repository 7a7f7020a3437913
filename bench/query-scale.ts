/**
 * Queries as the database grows (issue: sealed storage), on each backend:
 * one database filled over HTTP (500 per batch, 10 projects) to 1M
 * entries, sealed (bench/support/seal.ts) and queried, then filled on to
 * 10M, sealed and queried again; each query's p50/p99 at both sizes and how
 * it grew. Targets at 10M: a rare id (`request_id` with one match) p99
 * ≤ 50 ms; a one-word `q` found in about 1 % of entries p99 ≤ 100 ms for
 * the first page.
 *
 * The batches replay bench/support/dataset.ts's pool, so its request ids
 * repeat once per cycle: every 20th request is instead one entry with a
 * request id of its own (a needle), and the rare-id query looks those up,
 * spread over the whole history.
 *
 * Past the first stage the database grows by copies of its sealed blocks
 * (bench/support/grow-sealed.ts: ids and times shifted, the texts the
 * same, so a needle is found once per copy: 10 matches at 10M, all on the
 * first page, the whole history still searched); `--over-http` ingests
 * them instead (about an hour per backend on 2 shared cores).
 *
 * Opt-in from `npm run bench` (`--ten-million` or
 * `LOGKEEP_BENCH_TEN_MILLION=1`).
 *
 * Standalone: `node --import tsx bench/query-scale.ts [--entries=N] [--first=N] [--backend=file|server] [--over-http]`.
 */
import { Pool } from 'undici';
import { createBatchPool, type BatchPool } from './support/dataset.js';
import {
  adminTokens,
  createOrg,
  fileDatabase,
  fmt,
  load,
  percentile,
  serverDatabase,
  serviceSettings,
  settleServerDatabase,
  startChild,
  type BenchDatabase,
  type BenchOrg,
  type Shot,
} from './support/harness.js';
import { growByCopies } from './support/grow-sealed.js';
import { sealDatabase } from './support/seal.js';
import { timeQueries, type QueryCase } from './query.js';

const BATCH = 500;
/** One request in this many is a needle: one entry with a request id of its own. */
const NEEDLE_EVERY = 20;
const RUNS = 100;
const RARE_ID_TARGET_MS = 50;
const ONE_PERCENT_WORD_TARGET_MS = 100;
const DAY = 86_400_000;

interface Needle {
  requestId: string;
  projectId: number;
}

/** The vocabulary word whose share of the pool's entries (as a word of `message`) is closest to `share`. */
export function wordWithShare(pool: BatchPool, share: number): { word: string; share: number } {
  const counts = new Map<string, number>();
  let entries = 0;
  for (const body of pool.bodies) {
    for (const e of JSON.parse(body.toString('utf8')) as { message?: string }[]) {
      entries += 1;
      for (const w of new Set((e.message ?? '').split(' '))) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  let best = { word: '', share: Number.POSITIVE_INFINITY };
  for (const [word, n] of counts) if (Math.abs(n / entries - share) < Math.abs(best.share - share)) best = { word, share: n / entries };
  return best;
}

/** The pool's batches in cycles (timestamps one day later per cycle), every NEEDLE_EVERY-th request a needle. */
function shotsWithNeedles(pool: BatchPool, org: BenchOrg, needles: Needle[], from: number): () => Shot {
  let n = from;
  return () => {
    const i = n % pool.bodies.length;
    const cycle = Math.floor(n / pool.bodies.length);
    const project = n % org.keys.length;
    n += 1;
    if (n % NEEDLE_EVERY === 0) {
      const [entry] = JSON.parse(pool.body(i, cycle).toString('utf8')) as Record<string, unknown>[];
      const requestId = `fe${needles.length.toString(16).padStart(14, '0')}`;
      needles.push({ requestId, projectId: org.projectIds[project]! });
      return { body: Buffer.from(JSON.stringify([{ ...entry, request_id: requestId }])), entries: 1, key: org.keys[project]! };
    }
    return { body: pool.body(i, cycle), entries: BATCH, key: org.keys[project]! };
  };
}

function cases(org: BenchOrg, pool: BatchPool, needles: Needle[], word: string, cycles: number): QueryCase[] {
  const p = (n: number) => `project_id=${org.projectIds[n % org.projectIds.length]}`;
  const rare = pool.vocabulary[4900]!;
  const instant = (n: number) => pool.startMs + (n % cycles) * DAY + Math.floor(0.37 * pool.cycleSpanMs);
  return [
    { name: 'newest page', kind: 'single', params: p },
    {
      name: 'request_id, 1 match per 1M',
      kind: 'single',
      params: (n) => {
        // Spread over the whole history: needle k of every tenth.
        const needle = needles[Math.floor(((n % 100) / 100) * needles.length)]!;
        return `project_id=${needle.projectId}&request_id=${needle.requestId}`;
      },
    },
    { name: `q=${word} (~1 % of entries)`, kind: 'single', params: (n) => `${p(n)}&q=${word}` },
    { name: `q=${rare} (rare word)`, kind: 'single', params: (n) => `${p(n)}&q=${rare}` },
    { name: 'level=critical', kind: 'single', params: (n) => `${p(n)}&level=critical` },
    { name: 'context.user.id=57 (common word)', kind: 'single', params: (n) => `${p(n)}&context.user.id=57` },
    { name: 'q matching nothing', kind: 'nothing', params: (n) => `${p(n)}&q=zzqx${n}` },
    {
      name: 'from/to: 1 minute',
      kind: 'range',
      params: (n) => `${p(n)}&from=${new Date(instant(n)).toISOString()}&to=${new Date(instant(n) + 60_000).toISOString()}`,
    },
  ];
}

interface Stage {
  entries: number;
  p50: Map<string, number>;
  p99: Map<string, number>;
}

/** Seals, settles and runs each case RUNS times (after one unmeasured run per project). */
async function measure(db: BenchDatabase, all: QueryCase[], entries: number): Promise<Stage> {
  await sealDatabase(db, '    ');
  await settleServerDatabase(db);
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  const tokens = await adminTokens(child.url);
  const client = new Pool(child.url, { connections: 1 });
  const stage: Stage = { entries, p50: new Map(), p99: new Map() };
  try {
    for (const c of all) {
      await timeQueries(tokens, c, 10, client, 1000);
      const lat = await timeQueries(tokens, c, RUNS, client);
      stage.p50.set(c.name, percentile(lat, 50));
      stage.p99.set(c.name, percentile(lat, 99));
    }
  } finally {
    await client.close();
    await child.stop();
  }
  return stage;
}

/** Fills on from `from` requests until `total` entries are stored; returns the requests sent. */
async function fill(db: BenchDatabase, org: BenchOrg, pool: BatchPool, needles: Needle[], from: number, stored: number, total: number): Promise<number> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  let sent = from;
  const next = shotsWithNeedles(pool, org, needles, from);
  const started = performance.now();
  const result = await load({
    url: child.url,
    connections: 4,
    totalEntries: total - stored,
    next: () => {
      sent += 1;
      return next();
    },
  });
  await child.stop();
  console.log(`    filled ${fmt(stored)} → ${fmt(stored + result.entries)} at ${fmt(result.rate)} entries/s (${fmt((performance.now() - started) / 1000)} s)`);
  return sent;
}

export interface ScaleOptions {
  entries: number;
  first: number;
  backends: ('file' | 'server')[];
  /** Fill the rest over HTTP too, instead of copying the first stage's sealed blocks. */
  overHttp?: boolean;
}

export async function benchQueryScale(options: ScaleOptions): Promise<void> {
  const pool = createBatchPool(100, BATCH);
  const { word, share } = wordWithShare(pool, 0.01);
  const { loadavg } = await import('node:os');
  console.log(
    `Queries as the database grows (${fmt(options.first)} → ${fmt(options.entries)} entries in 10 projects, sealed before measuring, ${RUNS} runs per query, limit 50; load average ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')})`,
  );
  console.log(`  q=${word} is in ${fmt(100 * share, 2)} % of the entries; one request in ${NEEDLE_EVERY} is a needle (one entry, a request id of its own)`);
  for (const backend of options.backends) {
    const db = backend === 'file' ? fileDatabase() : await serverDatabase();
    if (!db) continue;
    try {
      console.log(`  ${backend}:`);
      const boot = await startChild({ kind: 'service', settings: serviceSettings(db) });
      const org = await createOrg(boot.url, 10);
      await boot.stop();
      const needles: Needle[] = [];
      const perCycle = pool.bodies.length * BATCH;
      const sent = await fill(db, org, pool, needles, 0, 0, options.first);
      const all = (entries: number) => cases(org, pool, needles, word, Math.max(1, Math.floor(entries / perCycle)));
      const small = await measure(db, all(options.first), options.first);
      // Printed now too: the second stage takes as long again.
      for (const [name, p99] of small.p99)
        console.log(`    at ${fmt(options.first)}: ${name.padEnd(34)} p50 ${fmt(small.p50.get(name)!, 1)} ms, p99 ${fmt(p99, 1)} ms`);
      let grown: number;
      if (options.overHttp) {
        await fill(db, org, pool, needles, sent, options.first, options.entries);
        grown = options.entries;
      } else {
        const started = performance.now();
        grown = await growByCopies(db, Math.round(options.entries / options.first) - 1);
        console.log(
          `    grown to ${fmt(grown)} entries by copying the sealed blocks (bench/support/grow-sealed.ts) in ${fmt((performance.now() - started) / 1000)} s`,
        );
      }
      const large = await measure(db, all(grown), grown);
      print(small, large, word);
    } finally {
      await db.drop();
    }
  }
}

function print(small: Stage, large: Stage, word: string): void {
  const targets = new Map([
    ['request_id, 1 match per 1M', RARE_ID_TARGET_MS],
    [`q=${word} (~1 % of entries)`, ONE_PERCENT_WORD_TARGET_MS],
  ]);
  console.log(`    ${''.padEnd(34)} ${`at ${fmt(small.entries)}`.padStart(22)} ${`at ${fmt(large.entries)}`.padStart(22)}   p99 growth`);
  for (const [name, p99] of large.p99) {
    const before = small.p99.get(name)!;
    const target = targets.get(name);
    const judged = target === undefined ? '' : `  (≤ ${target} at ${fmt(large.entries)}: ${p99 <= target ? 'met' : 'MISSED'})`;
    const cell = (s: Stage) => `${fmt(s.p50.get(name)!, 1)} / ${fmt(s.p99.get(name)!, 1)} ms`.padStart(22);
    console.log(`    ${name.padEnd(34)} ${cell(small)} ${cell(large)}   × ${fmt(p99 / before, 2)}${judged}`);
  }
  console.log('    (p50 / p99 per cell)');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const backend = arg('backend');
  await benchQueryScale({
    entries: Number(arg('entries') ?? 10_000_000),
    first: Number(arg('first') ?? 1_000_000),
    backends: backend === 'file' || backend === 'server' ? [backend] : ['file', 'server'],
    overHttp: process.argv.includes('--over-http'),
  });
}
