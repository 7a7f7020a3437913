/**
 * Console benchmarks in a real headless Chromium, on a database holding N
 * entries in 10 projects (filled by `bench/ingest.ts`, or here when run alone):
 * - query: from pressing Search (the search words filled in) to the first
 *   result rows painted, p50/p99 over 20 queries of five kinds (target
 *   ≤ 500 ms); ceiling: the very `GET /v1/logs` the console sent, replayed
 *   with `fetch` from Node (time to the parsed body) once the page's other
 *   requests (the chart's histogram) are done, as the next query starts;
 * - live: from the `202` of an entry ingested while the console follows
 *   live to its row painted (target ≤ 1 s); ceiling: the same entry's frame
 *   at a Node `EventSource` on the same stream.
 * Before each timed query the page shows a query matching nothing, so the
 * first row that appears is the new answer's.
 *
 * Standalone: `node --import tsx bench/console.ts [--quick]`.
 */
import { performance } from 'node:perf_hooks';
import { EventSource } from 'eventsource';
import type { Browser, Page } from 'playwright-core';
import { createBatchPool, type BatchPool } from './support/dataset.js';
import { launchBenchBrowser } from './support/browser.js';
import {
  adminLogin,
  fileDatabase,
  FINAL_PASSWORD,
  fmt,
  percentile,
  serverDatabase,
  settleServerDatabase,
  serviceSettings,
  startChild,
  type BenchOrg,
} from './support/harness.js';
import { ingestFromEmpty, type FilledDatabase } from './ingest.js';

export interface ConsoleBenchOptions {
  quick: boolean;
}

const DAY = 86_400_000;
const QUERY_TARGET_MS = 500;
const LIVE_TARGET_MS = 1000;
const RUNS_PER_KIND = 4;
const TRACERS = 20;
/** A word no generated entry holds: the blank page each timed query starts from. */
const NOTHING = 'zzqxnothing';

interface QueryKind {
  name: string;
  /** The URL parameters of run `n` besides `q`, and the words typed into the search box. */
  params: (n: number) => Record<string, string>;
  q: string;
}

function kinds(org: BenchOrg, pool: BatchPool, cycles: number): QueryKind[] {
  const project = (n: number) => String(org.projectIds[n % org.projectIds.length]!);
  const iso = (ms: number) => new Date(ms).toISOString();
  const day = (n: number) => ({ from: iso(pool.startMs + (n % cycles) * DAY), to: iso(pool.startMs + (n % cycles) * DAY + DAY - 1) });
  const history = { from: iso(pool.startMs), to: iso(pool.startMs + (cycles - 1) * DAY + pool.cycleSpanMs) };
  const tenth = pool.vocabulary[3]!;
  const middle = pool.vocabulary[300]!;
  return [
    { name: `project, one day, q=${tenth}`, params: (n) => ({ project_id: project(n), ...day(n) }), q: tenth },
    { name: `project, one day, q=${middle.slice(0, 4)}*`, params: (n) => ({ project_id: project(n), ...day(n) }), q: `${middle.slice(0, 4)}*` },
    { name: `project, history, level≥warning, q=${middle}`, params: (n) => ({ project_id: project(n), ...history, level: 'warning' }), q: middle },
    { name: `group of 10, history, q=${tenth}`, params: () => ({ group_id: String(org.groupId), ...history }), q: tenth },
    {
      name: `project, one day, context.http.status=500, q=${tenth}`,
      params: (n) => ({ project_id: project(n), ...day(n), 'context.http.status': '500' }),
      q: tenth,
    },
  ];
}

/**
 * Presses Search and resolves, in the page, after the frame that first shows
 * a result row: the time (ms), or null when the answer is empty, and when the
 * page's requests (list, histogram…) were sent and answered, from the click.
 */
const TIMED_SEARCH = `(async () => {
  const t0 = performance.now();
  document.querySelector('form.filters button[type=submit]').click();
  let sawLoading = false;
  const requests = () => performance.getEntriesByType('resource').filter((r) => r.startTime >= t0)
    .map((r) => ({ path: new URL(r.name).pathname, sent: r.startTime - t0, answered: r.responseEnd - t0 }));
  return await new Promise((resolve) => {
    const done = (rows) => { obs.disconnect(); clearTimeout(timer); requestAnimationFrame(() => setTimeout(() => resolve({ ms: rows ? performance.now() - t0 : null, requests: requests() }), 0)); };
    const check = () => {
      if (document.querySelector('.vlist .row')) return done(true);
      const status = document.querySelector('.results-bar [role=status]')?.textContent;
      if (status === 'Loading…') sawLoading = true;
      else if (sawLoading) done(false);
    };
    const obs = new MutationObserver(check);
    obs.observe(document.body, { subtree: true, childList: true, characterData: true });
    const timer = setTimeout(() => done(false), 30000);
  });
})()`;

/** Records, in the page, when each tracer row is first in the list (epoch ms, after its frame). */
/** Tells this run's tracers from a previous run's on the same database (those may still be in the last hour). */
const RUN = Date.now().toString(36);
const WATCH_TRACERS = `(() => {
  window.__tracers = {};
  const obs = new MutationObserver(() => {
    for (const el of document.querySelectorAll('.vlist .row .event')) {
      const m = /^console tracer ${RUN} (\\d+)$/.exec(el.textContent);
      if (m && !(m[1] in window.__tracers)) {
        window.__tracers[m[1]] = 0;
        requestAnimationFrame(() => setTimeout(() => { window.__tracers[m[1]] = performance.timeOrigin + performance.now(); }, 0));
      }
    }
  });
  obs.observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

const epochNow = () => performance.timeOrigin + performance.now();

async function showQuery(page: Page, params: Record<string, string>, waitFor: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(`#/explore?${new URLSearchParams(params)}`)}`);
  await page.getByText(waitFor, { exact: true }).first().waitFor({ timeout: 60_000 });
}

function line(label: string, values: number[], ceiling: number[], target: number, ceilingLabel: string): string {
  const p99 = percentile(values, 99);
  return `    ${label.padEnd(40)} p50 ${fmt(percentile(values, 50), 1).padStart(7)} p99 ${fmt(p99, 1).padStart(7)} ms (≤ ${target}: ${p99 <= target ? 'ok' : 'OVER'})   ${ceilingLabel} p50 ${fmt(percentile(ceiling, 50), 1).padStart(6)} p99 ${fmt(percentile(ceiling, 99), 1).padStart(6)} ms`;
}

/** Resolves once the page has no request in flight (or after 30 s). */
async function settled(inflight: () => number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (inflight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

async function timeQueries(
  page: Page,
  url: string,
  token: string,
  org: BenchOrg,
  filled: FilledDatabase,
  cycles: number,
  requests: string[],
  inflight: () => number,
): Promise<void> {
  const painted: number[] = [];
  const replayed: number[] = [];
  /** Per request path: when sent and answered, from the click (ms). */
  const phases = new Map<string, { sent: number[]; answered: number[] }>();
  let empty = 0;
  const perKind: string[] = [];
  for (const kind of kinds(org, filled.pool, cycles)) {
    const mine: number[] = [];
    for (let n = 0; n < RUNS_PER_KIND; n++) {
      const params = kind.params(n);
      await showQuery(page, { ...params, q: NOTHING }, '0 entries');
      await settled(inflight);
      await page.locator('#f-q').fill(kind.q);
      requests.length = 0;
      const { ms, requests: timed } = (await page.evaluate(TIMED_SEARCH)) as {
        ms: number | null;
        requests: { path: string; sent: number; answered: number }[];
      };
      for (const r of timed) {
        const phase = phases.get(r.path) ?? { sent: [], answered: [] };
        phase.sent.push(r.sent);
        // Only requests answered by the paint are listed (a resource entry is written at its end).
        phase.answered.push(r.answered);
        phases.set(r.path, phase);
      }
      if (ms === null) {
        empty += 1;
        continue;
      }
      painted.push(ms);
      mine.push(ms);
      await settled(inflight);
      // The ceiling: the same list request, from Node, to its parsed body.
      const sent =
        requests.find((r) => r.includes('/v1/logs?') && r.includes(`q=${encodeURIComponent(kind.q).replace(/%20/g, '+')}`)) ??
        requests.find((r) => r.includes('/v1/logs?'));
      if (sent) {
        const t = performance.now();
        const res = await fetch(`${url}${new URL(sent).pathname}${new URL(sent).search}`, { headers: { authorization: `Bearer ${token}` } });
        await res.json();
        replayed.push(performance.now() - t);
      }
    }
    perKind.push(`      ${kind.name.padEnd(56)} p50 ${fmt(percentile(mine, 50), 1).padStart(7)} max ${fmt(Math.max(...mine), 1).padStart(7)} ms`);
  }
  console.log(line(`submit → first rows painted (${painted.length})`, painted, replayed, QUERY_TARGET_MS, 'ceiling: same GET /v1/logs via fetch from Node'));
  for (const l of perKind) console.log(l);
  for (const [path, p] of phases) {
    console.log(
      `      ${`${path} (${p.sent.length})`.padEnd(30)} sent p50 ${fmt(percentile(p.sent, 50), 1).padStart(7)} answered p50 ${fmt(percentile(p.answered, 50), 1).padStart(7)} p99 ${fmt(percentile(p.answered, 99), 1).padStart(7)} ms after the click`,
    );
  }
  if (empty) console.log(`      (${empty} queries answered no rows and are left out)`);
}

/** A Node `EventSource` on `path` recording when each tracer's frame arrives (epoch ms); resolves once open. */
async function tracerStream(url: string, path: string, headers: Record<string, string>): Promise<{ frames: Map<number, number>; close(): void }> {
  const frames = new Map<number, number>();
  const source = new EventSource(`${url}${path}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  source.addEventListener('log', (e) => {
    const m = new RegExp(`^console tracer ${RUN} (\\d+)$`).exec((JSON.parse(e.data) as { event: string }).event);
    if (m) frames.set(Number(m[1]), epochNow());
  });
  await new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve();
    source.onerror = (err) => reject(new Error(`stream: ${err.message}`));
  });
  return { frames, close: () => source.close() };
}

async function timeLive(page: Page, url: string, token: string, org: BenchOrg): Promise<void> {
  const project = org.projectIds[0]!;
  // The page's own stream request, replayed from Node below with the same position.
  const pageStream = page.waitForRequest((r) => r.url().includes('/v1/logs/stream?'), { timeout: 60_000 });
  await showQuery(page, { project_id: String(project), range: '1h', live: '1' }, 'Live');
  await page.evaluate(WATCH_TRACERS);
  const auth = { authorization: `Bearer ${token}` };
  const plain = await tracerStream(url, `/v1/logs/stream?project_id=${project}`, auth);
  const request = await pageStream;
  const position = request.headers()['last-event-id'];
  const same = await tracerStream(url, new URL(request.url()).pathname + new URL(request.url()).search, {
    ...auth,
    ...(position ? { 'last-event-id': position } : {}),
  });
  const acked = new Map<number, number>();
  for (let n = 0; n < TRACERS; n++) {
    const res = await fetch(`${url}/v1/logs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ level: 'info', event: `console tracer ${RUN} ${n}`, timestamp: new Date().toISOString() }]),
    });
    await res.text();
    if (res.status !== 202) throw new Error(`ingest: ${res.status}`);
    acked.set(n, epochNow());
    await new Promise((r) => setTimeout(r, 250));
  }
  const deadline = Date.now() + 5000;
  let seen: Record<string, number> = {};
  while (Date.now() < deadline) {
    seen = (await page.evaluate('window.__tracers')) as Record<string, number>;
    if (Object.values(seen).filter((t) => t > 0).length === TRACERS) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  plain.close();
  same.close();
  const since = (frames: Map<number, number>) => [...acked].filter(([n]) => frames.has(n)).map(([n, at]) => frames.get(n)! - at);
  const rows = [...acked].filter(([n]) => seen[n]).map(([n, at]) => seen[n]! - at);
  console.log(
    line(`202 → live row painted (${rows.length}/${TRACERS})`, rows, since(plain.frames), LIVE_TARGET_MS, 'ceiling: 202 → frame at a Node EventSource'),
  );
  // The page's stream has the query's filters (`from` of the range) and starts at the newest entry shown (0: none).
  const viaPage = since(same.frames);
  console.log(
    `      ceiling 2: the page's own stream request from Node (its filters, Last-Event-ID ${position ?? 'none'}) p50 ${fmt(percentile(viaPage, 50), 1)} p99 ${fmt(percentile(viaPage, 99), 1)} ms (${viaPage.length}/${TRACERS})`,
  );
}

export async function consoleSuite(label: string, filled: FilledDatabase, browser: Browser): Promise<void> {
  await settleServerDatabase(filled.db);
  const child = await startChild({ kind: 'service', settings: serviceSettings(filled.db) });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const token = await adminLogin(child.url);
    const cycles = Math.max(1, Math.floor(filled.entries / (filled.pool.bodies.length * filled.pool.entries[0]!)));
    console.log(`  ${label}: ${fmt(filled.entries)} entries in 10 projects over ${cycles} days of log time`);
    const page = await context.newPage();
    const requests: string[] = [];
    let inflight = 0;
    page.on('request', (r) => {
      requests.push(r.url());
      inflight += 1;
    });
    page.on('requestfinished', () => (inflight -= 1));
    page.on('requestfailed', () => (inflight -= 1));
    const first = kinds(filled.org, filled.pool, cycles)[0]!.params(0);
    await page.goto(`${child.url}/console/#/explore?${new URLSearchParams({ ...first, q: NOTHING })}`);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill(FINAL_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('0 entries', { exact: true }).waitFor({ timeout: 60_000 });
    await timeQueries(page, child.url, token, filled.org, filled, cycles, requests, () => inflight);
    await timeLive(page, child.url, token, filled.org);
  } finally {
    await context.close();
    await child.stop();
  }
}

export async function benchConsole(_options: ConsoleBenchOptions, filled: { file: FilledDatabase; server: FilledDatabase | null }): Promise<void> {
  console.log('Console in headless Chromium');
  const browser = await launchBenchBrowser();
  if (!browser) return;
  try {
    await consoleSuite('file', filled.file, browser);
    if (filled.server) await consoleSuite('server (PostgreSQL)', filled.server, browser);
  } finally {
    await browser.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { quick: process.argv.includes('--quick') };
  const total = options.quick ? 100_000 : 1_000_000;
  const pool = createBatchPool(options.quick ? 40 : 100, 500);
  const none = { bareHttp: Number.NaN, rawInsert: Number.NaN };
  console.log(`Filling (${fmt(total)} entries per backend)`);
  const file = await ingestFromEmpty(fileDatabase(), pool, total, none, 'file', 0);
  const serverDb = process.argv.includes('--file-only') ? null : await serverDatabase();
  const server = serverDb ? await ingestFromEmpty(serverDb, pool, total, none, 'server', 0) : null;
  try {
    await benchConsole(options, { file, server });
  } finally {
    await file.db.drop();
    await server?.db.drop();
  }
}
