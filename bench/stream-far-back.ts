/**
 * Live streams opened far back with a filter nothing matches yet (what the
 * console does when it follows a time range whose first page is empty: it
 * streams from position 0). Over 1M stored entries, while old-dated batches
 * keep arriving in the same project, each trial opens a stream
 * `from=<now>` with `since_id=0`, waits two seconds, then sends one entry
 * dated now, and measures its 202 → frame at a real `eventsource` client.
 * Ceiling of the same run: the same filter opened without a position (it
 * starts at the newest entry stored, so it never reads the history), as a
 * feed of its own.
 *
 * Standalone: `node --import tsx bench/stream-far-back.ts [--quick]`.
 */
import { performance } from 'node:perf_hooks';
import { EventSource } from 'eventsource';
import { Pool } from 'undici';
import { fillBothBackends, type FilledDatabase } from './ingest.js';
import { adminLogin, fmt, percentile, serviceSettings, settleServerDatabase, startChild } from './support/harness.js';

/** Entries per second of old-dated background batches into the streams' project. */
const BACKGROUND_RATE = 2_000;
const WAIT_AFTER_OPEN_MS = 2_000;
/** The console's target: a new entry painted within a second of its 202. */
const TARGET_MS = 1_000;

export interface FarBackResult {
  farBack: number[];
  ceiling: number[];
}

/** `trials` trials against a service over `filled`, the entry sent `waitMs` after the streams open; `nodeArgs` go to the service's process. */
export async function farBackLatency(filled: FilledDatabase, trials: number, nodeArgs: string[] = [], waitMs = WAIT_AFTER_OPEN_MS): Promise<FarBackResult> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(filled.db) }, { nodeArgs });
  const http = new Pool(child.url, { connections: 2, keepAliveTimeout: 60_000 });
  const result: FarBackResult = { farBack: [], ceiling: [] };
  let running = true;
  try {
    const token = await adminLogin(child.url);
    const projectId = filled.org.projectIds[0]!;
    const key = filled.org.keys[0]!;
    const authFetch: typeof fetch = (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${token}` } });
    const post = async (body: Buffer | string) => {
      const res = await http.request({ path: '/v1/logs', method: 'POST', body, headers: { authorization: `Bearer ${key}` } });
      await res.body.text();
      if (res.statusCode !== 202) throw new Error(`ingest answered ${res.statusCode}`);
    };
    const background = (async () => {
      const started = performance.now();
      let sent = 0;
      for (let n = 0; running; n++) {
        const i = n % filled.pool.bodies.length;
        await post(filled.pool.body(i, 100 + Math.floor(n / filled.pool.bodies.length)));
        sent += filled.pool.entries[i]!;
        const wait = started + (sent / BACKGROUND_RATE) * 1000 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    })();
    for (let t = 0; t < trials; t++) {
      const from = new Date().toISOString();
      const query = (at: string) => `project_id=${projectId}&from=${encodeURIComponent(at)}`;
      const frames = [new Map<string, number>(), new Map<string, number>()];
      // The ceiling's `from` is 1 ms earlier (the same entries match): another feed, so it never waits behind the other's reads.
      const sources = [`${query(from)}&since_id=0`, query(new Date(Date.parse(from) - 1).toISOString())].map((q, i) => {
        const source = new EventSource(`${child.url}/v1/logs/stream?${q}`, { fetch: authFetch });
        source.addEventListener('log', (e) => frames[i]!.set((JSON.parse(e.data) as { event: string }).event, performance.now()));
        return source;
      });
      await Promise.all(
        sources.map(
          (s) =>
            new Promise<void>((resolve, reject) => {
              s.onopen = () => resolve();
              s.onerror = (err) => reject(new Error(err.message));
            }),
        ),
      );
      await new Promise((r) => setTimeout(r, waitMs));
      const event = `far back tracer ${t}`;
      await post(JSON.stringify([{ level: 'info', event, timestamp: new Date().toISOString() }]));
      const acked = performance.now();
      const deadline = acked + 30_000;
      while (frames.some((f) => !f.has(event)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      const [farBack, ceiling] = frames.map((f) => (f.get(event) ?? Number.NaN) - acked);
      result.farBack.push(Math.max(0, farBack!));
      result.ceiling.push(Math.max(0, ceiling!));
      for (const s of sources) s.close();
    }
    running = false;
    await background;
  } finally {
    running = false;
    await http.close();
    await child.stop();
  }
  return result;
}

export function printFarBack(label: string, r: FarBackResult): void {
  const line = (xs: number[]) => `p50 ${fmt(percentile(xs, 50), 1)} ms, p99 ${fmt(percentile(xs, 99), 1)} ms, max ${fmt(Math.max(...xs), 1)} ms`;
  const worst = Math.max(...r.farBack);
  console.log(
    `  ${label}, since_id=0: ${line(r.farBack)} over ${r.farBack.length} trials — target max < ${fmt(TARGET_MS)} ms: ${worst < TARGET_MS ? 'PASS' : 'FAIL'}`,
  );
  console.log(`    ceiling, the same filter without a position: ${line(r.ceiling)}`);
}

/** Both filled databases (from the ingestion benchmark); adds ~5,000 entries per trial to the first project of each. */
export async function benchFarBack(options: { quick: boolean }, filled: { file: FilledDatabase; server: FilledDatabase | null }): Promise<void> {
  console.log(`Live streams from position 0, filter matching nothing yet (background ${fmt(BACKGROUND_RATE)} entries/s into the same project)`);
  for (const db of [filled.file, filled.server]) {
    if (!db) continue;
    await settleServerDatabase(db.db);
    const backend = db.db.settings.dbBackend === 'server' ? 'server (PostgreSQL)' : 'file';
    printFarBack(`${backend}, ${fmt(db.entries)} entries`, await farBackLatency(db, options.quick ? 5 : 20));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  const filled = await fillBothBackends(quick);
  try {
    await benchFarBack({ quick }, filled);
  } finally {
    await filled.file.db.drop();
    await filled.server?.db.drop();
  }
}
