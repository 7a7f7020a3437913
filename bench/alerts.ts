/**
 * Alerts under load (issue targets), on both backends:
 * - Notification latency: 100 active rules on one project, 5,000 entries/s
 *   of background traffic (500 a batch, open loop), and every 200 ms one
 *   "trigger" entry that makes one rule fire; the time from that entry's
 *   `202` to its webhook request arriving at a receiver in this process.
 *   Target: p99 ≤ 2 s.
 * - What the rules cost ingestion: the saturated rate (500 a batch, 4
 *   connections) into the project the 100 rules watch against the rate into
 *   a project no rule watches, same service, same database, same bodies, in
 *   windows that take turns (none, rules, rules, none, …) so drift on a
 *   shared machine falls on both alike. The service's CPU per entry is
 *   printed too (less sensitive to other work on the machine).
 *   Target: the rules cost ≤ 10 % of the rate.
 *
 * The rules: 90 any_match rules on a marker each (quiet period 60 s, the
 * shortest allowed), which nothing but their trigger matches, so each
 * trigger notifies exactly once (`fired`; triggers rotate through them, at
 * most one per rule: a second within its quiet period would notify only
 * when the period ends); 4 any_match and 2 threshold rules that the
 * background matches (they fire, then keep counting); 3 that never match
 * and a threshold on a rare word that never reaches it.
 * Every rule sends to the same webhook receiver, which keeps the arrival
 * time of each trigger rule's request.
 *
 * The load average (`os.loadavg()`, as `uptime` prints it) is printed
 * beside the figures: other work on a shared machine moves them.
 *
 * Standalone (after `npm run build`): node --import tsx bench/alerts.ts [--quick] [--backend file|server|both]
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { mainThreadCpuMs, processCpuMs } from './support/cpu-time.js';
import { createBatchPool, type BatchPool } from './support/dataset.js';
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
  type Child,
} from './support/harness.js';
import { shots } from './ingest.js';

export const LATENCY_P99_TARGET_MS = 2_000;
export const RULES_COST_TARGET_PERCENT = 10;
const RULES = 100;
const TRIGGER_RULES = 90;
const BACKGROUND_RATE = 5_000;
const BATCH = 500;
const TRIGGER_EVERY_MS = 200;
/** How long to wait, after the background stops, for the last webhooks. */
const STRAGGLER_WAIT_MS = 10_000;
const CONNECTIONS = 4;

const marker = (i: number) => `alertmark${String(i).padStart(3, '0')}`;

/** The saved-search query of trigger rule `i`: word, word and level, or an exact field, in turn. */
function triggerQuery(i: number): string {
  if (i % 3 === 0) return `q=${marker(i)}`;
  if (i % 3 === 1) return `level=error&q=${marker(i)}`;
  return `context.alert_marker=${marker(i)}`;
}

interface RuleSpec {
  name: string;
  query: string;
  kind: 'any_match' | 'threshold';
  quiet_seconds?: number;
  window_seconds?: number;
  threshold?: number;
  /** Index of the trigger it answers, for trigger rules. */
  trigger?: number;
}

function ruleSpecs(pool: BatchPool): RuleSpec[] {
  const [common, second, third] = pool.vocabulary;
  const specs: RuleSpec[] = [];
  for (let i = 0; i < TRIGGER_RULES; i++) specs.push({ name: `trigger ${i}`, query: triggerQuery(i), kind: 'any_match', quiet_seconds: 60, trigger: i });
  // Matched by the background: they fire, then count through their quiet period or window.
  specs.push({ name: 'critical common', query: `level=critical&q=${common}`, kind: 'any_match', quiet_seconds: 60 });
  specs.push({ name: 'billing errors', query: 'level=error&category=billing', kind: 'any_match', quiet_seconds: 60 });
  specs.push({ name: 'two words', query: `q=${second}+${third}`, kind: 'any_match', quiet_seconds: 120 });
  specs.push({ name: 'slow queries', query: 'q=slow&logger=app.db.pool', kind: 'any_match', quiet_seconds: 300 });
  specs.push({ name: 'errors per minute', query: 'level=error', kind: 'threshold', window_seconds: 60, threshold: 1_000 });
  specs.push({ name: 'critical per minute', query: 'level=critical', kind: 'threshold', window_seconds: 60, threshold: 200 });
  // Never matched, or never enough.
  specs.push({ name: 'never word', query: 'level=critical&q=nosuchwordanywhere', kind: 'any_match', quiet_seconds: 60 });
  specs.push({ name: 'never host', query: 'context.host=web-99', kind: 'any_match', quiet_seconds: 60 });
  specs.push({ name: 'never prefix', query: 'q=zzyzx*', kind: 'any_match', quiet_seconds: 600 });
  // A word of the vocabulary's long tail: a few entries a second, far below the threshold.
  specs.push({ name: 'rare word per minute', query: `q=${pool.vocabulary[4_000]}`, kind: 'threshold', window_seconds: 60, threshold: 10_000 });
  if (specs.length !== RULES) throw new Error(`expected ${RULES} rules, made ${specs.length}`);
  return specs;
}

async function call(url: string, method: string, path: string, token: string, body: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** One saved search and one rule per spec on `projectId`, each sending to `hookUrl`; rule id → trigger index. */
async function createRules(url: string, org: BenchOrg, projectId: number, specs: RuleSpec[], hookUrl: string): Promise<Map<number, number>> {
  const triggerOf = new Map<number, number>();
  for (const spec of specs) {
    const search = await call(url, 'POST', '/v1/saved-searches', org.token, { name: spec.name, project_id: projectId, query: spec.query });
    const { trigger, query: _query, ...settings } = spec;
    const rule = await call(url, 'POST', '/v1/alert-rules', org.token, {
      ...settings,
      saved_search_id: search.id,
      destination: { type: 'webhook', url: hookUrl },
    });
    if (trigger !== undefined) triggerOf.set(rule.id, trigger);
  }
  return triggerOf;
}

interface Receiver {
  url: string;
  /** Arrival (performance.now()) of each webhook request, by rule id: the first of each. */
  arrivals: Map<number, number>;
  /** When the service decided each rule's first notification (its `window_end`, epoch ms), by rule id. */
  decided: Map<number, number>;
  requests: number;
  close(): Promise<void>;
}

/** Records when each rule's first webhook request has fully arrived; answers 200. */
async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<number, number>();
  const decided = new Map<number, number>();
  const receiver = { arrivals, decided, requests: 0 } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      receiver.requests += 1;
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { rule: { id: number }; notification: { window_end: string } };
      if (!arrivals.has(payload.rule.id)) {
        arrivals.set(payload.rule.id, at);
        decided.set(payload.rule.id, Date.parse(payload.notification.window_end));
      }
      res.end('{}');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

const load1 = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');

interface LatencyResult {
  sent: number;
  arrived: number;
  p50: number;
  p99: number;
  max: number;
  /** From the 202 to the decision (the notification's `window_end`), p50 and p99. */
  decidedP50: number;
  decidedP99: number;
  background: number;
}

/** Background at 5,000 entries/s for `seconds`; a trigger every 200 ms, one per trigger rule at most. */
async function measureLatency(
  child: Child,
  org: BenchOrg,
  pool: BatchPool,
  receiver: Receiver,
  triggerOf: Map<number, number>,
  seconds: number,
): Promise<LatencyResult> {
  const key = org.keys[0]!;
  const deadline = Date.now() + seconds * 1000;
  const background = load({
    url: child.url,
    next: shots(pool, [key]),
    connections: CONNECTIONS,
    entriesPerSecond: BACKGROUND_RATE,
    until: () => Date.now() > deadline,
  });
  // Triggers run from 1 s in, until a second before the background ends (or the trigger rules run out).
  const triggers = Math.min(TRIGGER_RULES, Math.floor(((seconds - 2) * 1000) / TRIGGER_EVERY_MS));
  const accepted: number[] = [];
  /** The same instants as epoch ms, to compare with the service's decision times. */
  const acceptedWall: number[] = [];
  const triggerPool = new Pool(child.url, { connections: 1, keepAliveTimeout: 60_000 });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const started = performance.now();
  for (let i = 0; i < triggers; i++) {
    const at = started + i * TRIGGER_EVERY_MS;
    const wait = at - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = JSON.stringify([
      { level: 'error', event: 'alert trigger', message: `bench trigger ${marker(i)} fired`, alert_marker: marker(i), timestamp: new Date().toISOString() },
    ]);
    const res = await triggerPool.request({
      path: '/v1/logs',
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    const text = await res.body.text();
    accepted[i] = performance.now();
    acceptedWall[i] = Date.now();
    if (res.statusCode !== 202) throw new Error(`trigger answered ${res.statusCode}: ${text.slice(0, 200)}`);
  }
  await triggerPool.close();
  const result = await background;
  const ruleOf = new Map([...triggerOf].map(([ruleId, trigger]) => [trigger, ruleId] as const));
  const arrivedAll = () => accepted.every((_, i) => receiver.arrivals.has(ruleOf.get(i)!));
  const giveUp = performance.now() + STRAGGLER_WAIT_MS;
  while (!arrivedAll() && performance.now() < giveUp) await new Promise((resolve) => setTimeout(resolve, 50));
  // A notification that never came counts as infinitely late.
  const latencies = accepted.map((t, i) => (receiver.arrivals.get(ruleOf.get(i)!) ?? Number.POSITIVE_INFINITY) - t);
  const decidedAfter = acceptedWall.map((t, i) => (receiver.decided.get(ruleOf.get(i)!) ?? Number.POSITIVE_INFINITY) - t);
  return {
    decidedP50: percentile(decidedAfter, 50),
    decidedP99: percentile(decidedAfter, 99),
    sent: triggers,
    arrived: latencies.filter(Number.isFinite).length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    background: result.rate,
  };
}

interface Tally {
  entries: number;
  seconds: number;
  cpuMs: number;
  /** Of which the main thread's (the event loop, where rules are matched). */
  mainMs: number;
  windows: number[];
}

/** Saturated windows taking turns between the project no rule watches and the one the 100 rules watch. */
async function measureCost(child: Child, org: BenchOrg, pool: BatchPool, quick: boolean): Promise<{ none: Tally; rules: Tally }> {
  // Many short windows: drift of a shared machine averages out over more turns.
  const seconds = quick ? 2 : 2.5;
  const pairs = quick ? 3 : 6;
  const tally = (): Tally => ({ entries: 0, seconds: 0, cpuMs: 0, mainMs: 0, windows: [] });
  const tallies = { none: tally(), rules: tally() };
  const keyOf = { none: org.keys[1]!, rules: org.keys[0]! };
  const window = async (kind: 'none' | 'rules') => {
    const deadline = Date.now() + seconds * 1000;
    const cpu = processCpuMs(child.pid);
    const main = mainThreadCpuMs(child.pid);
    const r = await load({ url: child.url, next: shots(pool, [keyOf[kind]]), connections: CONNECTIONS, until: () => Date.now() > deadline });
    const t = tallies[kind];
    t.cpuMs += processCpuMs(child.pid) - cpu;
    t.mainMs += mainThreadCpuMs(child.pid) - main;
    t.entries += r.entries;
    t.seconds += r.seconds;
    t.windows.push(r.rate);
  };
  // Warm-up, not counted: each project's tail brought to its bound, so every window ingests at the rate sealing sustains.
  for (const kind of ['none', 'rules'] as const) {
    const warm = Date.now() + 2000;
    await load({ url: child.url, next: shots(pool, [keyOf[kind]]), connections: CONNECTIONS, until: () => Date.now() > warm });
  }
  for (let i = 0; i < pairs; i++) {
    for (const kind of i % 2 === 0 ? (['none', 'rules'] as const) : (['rules', 'none'] as const)) await window(kind);
  }
  return tallies;
}

export interface AlertFigures {
  backend: string;
  latency: LatencyResult;
  rateNone: number;
  rateRules: number;
  costPercent: number;
  load: string;
}

async function benchOne(name: string, db: BenchDatabase, quick: boolean): Promise<AlertFigures> {
  const receiver = await startReceiver();
  const child = await startChild({ kind: 'service', settings: serviceSettings(db, { alertAllowPrivateTargets: true }) });
  try {
    const loadBefore = load1();
    const org = await createOrg(child.url, 2);
    const pool = createBatchPool(quick ? 20 : 40, BATCH);
    const triggerOf = await createRules(child.url, org, org.projectIds[0]!, ruleSpecs(pool), receiver.url);
    const latency = await measureLatency(child, org, pool, receiver, triggerOf, quick ? 10 : 25);
    const loadMid = load1();
    const p99ok = latency.arrived === latency.sent && latency.p99 <= LATENCY_P99_TARGET_MS;
    console.log(
      `  ${name}: ${RULES} rules, background ${fmt(latency.background)} entries/s; ${latency.arrived} of ${latency.sent} trigger notifications arrived; 202 → webhook p50 ${fmt(latency.p50)} ms, p99 ${fmt(latency.p99)} ms, max ${fmt(latency.max)} ms (target p99 ≤ ${fmt(LATENCY_P99_TARGET_MS)} ms): ${verdict(p99ok)}`,
    );
    console.log(
      `    of which 202 → decided (the notification recorded) p50 ${fmt(latency.decidedP50)} ms, p99 ${fmt(latency.decidedP99)} ms; load average before ${loadBefore}, after ${loadMid}; webhook requests received ${receiver.requests}`,
    );
    const { none, rules } = await measureCost(child, org, pool, quick);
    const rateNone = none.entries / none.seconds;
    const rateRules = rules.entries / rules.seconds;
    const costPercent = 100 * (1 - rateRules / rateNone);
    const cpuPer1k = (t: Tally) => (1000 * t.cpuMs) / t.entries;
    const mainPer1k = (t: Tally) => (1000 * t.mainMs) / t.entries;
    console.log(
      `  ${name}: saturated ingestion, no rule watching ${fmt(rateNone)} entries/s, ${RULES} rules watching ${fmt(rateRules)} entries/s: cost ${fmt(costPercent, 1)} % (target ≤ ${RULES_COST_TARGET_PERCENT} %): ${verdict(costPercent <= RULES_COST_TARGET_PERCENT)}`,
    );
    console.log(
      `    windows (entries/s): none ${none.windows.map((r) => fmt(r)).join(', ')}; rules ${rules.windows.map((r) => fmt(r)).join(', ')}; service CPU ${fmt(cpuPer1k(none), 1)} ms per 1k entries without rules, ${fmt(cpuPer1k(rules), 1)} with (+${fmt(100 * (cpuPer1k(rules) / cpuPer1k(none) - 1), 1)} %), of which the event loop ${fmt(mainPer1k(none), 1)} and ${fmt(mainPer1k(rules), 1)}; load average ${load1()}`,
    );
    return { backend: name, latency, rateNone, rateRules, costPercent, load: loadMid };
  } finally {
    await child.stop();
    await receiver.close();
    await db.drop();
  }
}

export async function benchAlerts(options: { quick: boolean; backends?: 'file' | 'server' | 'both' }): Promise<AlertFigures[]> {
  console.log(
    `Alerts: ${RULES} rules, webhook latency at ${fmt(BACKGROUND_RATE)} entries/s and the rules' cost to saturated ingestion (${options.quick ? 'quick' : 'full'})`,
  );
  const backends = options.backends ?? 'both';
  const figures: AlertFigures[] = [];
  if (backends !== 'server') figures.push(await benchOne('file', fileDatabase(), options.quick));
  if (backends !== 'file') {
    const db = await serverDatabase();
    if (db) figures.push(await benchOne('server', db, options.quick));
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--backend');
  await benchAlerts({ quick: process.argv.includes('--quick'), backends: at > 0 ? (process.argv[at + 1] as 'file' | 'server' | 'both') : 'both' });
}
