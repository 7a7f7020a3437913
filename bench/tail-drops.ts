/**
 * `logkeep tail` through a flaky network: the built program follows a
 * project while 2,000 entries/s are ingested, its connection is cut 1,000
 * times (100 with `--quick`) by a TCP relay standing in for the network, and
 * the service is stopped and started again twice on the same database.
 *
 * Target: every stored entry printed exactly once, in order (each
 * reconnection resumes after the last entry printed), checked against the
 * project's entries read back by `GET /v1/logs`: a batch whose answer a
 * restart cut off is sent again, as any client would, and is stored twice.
 * Printed beside it: the rate reached, how many times the program
 * connected, and how far behind it was when the ingestion stopped.
 *
 * Standalone (after `npm run build`): node --import tsx bench/tail-drops.ts [--quick] [--backend file|server|both]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createOrg,
  fmt,
  serviceSettings,
  startChild,
  verdict,
  type BenchDatabase,
  type Child,
  onEachBackend,
  backendsFromArgv,
  type BackendChoice,
} from './support/harness.js';

const BIN = fileURLToPath(new URL('../dist/bin/logkeep.cjs', import.meta.url));
const RATE = 2_000;
const TICK_MS = 50;
const PER_TICK = (RATE * TICK_MS) / 1000;

/** A TCP relay to the current service: `cut()` drops every connection through it, as a network failure would. */
class FlakyRelay {
  private readonly pairs = new Set<[Socket, Socket]>();
  private readonly server = createServer((client) => {
    const upstream = connect(this.upstreamPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    this.opened++;
    for (const resolve of this.waiters.splice(0)) resolve();
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  opened = 0;
  private waiters: (() => void)[] = [];
  constructor(public upstreamPort: number) {}
  /** Resolves when a connection is open through the relay. */
  connected(): Promise<void> {
    if (this.pairs.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }
  cut(): void {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }
  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Every stored entry's id in the project, ascending (pages of `GET /v1/logs`). */
async function storedIds(url: string, token: string, projectId: number): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ project_id: String(projectId), limit: '1000' });
    if (cursor) query.set('cursor', cursor);
    const res = await fetch(`${url}/v1/logs?${query}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`GET /v1/logs answered ${res.status}`);
    const page = (await res.json()) as { items: { id: number }[]; next_cursor: string | null };
    for (const item of page.items) ids.push(item.id);
    cursor = page.next_cursor;
  } while (cursor);
  return ids.sort((a, b) => a - b);
}

const portOf = (url: string) => Number(new URL(url).port);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function benchOne(name: string, db: BenchDatabase, quick: boolean): Promise<void> {
  const settings = serviceSettings(db, { sseHeartbeatIntervalSeconds: 1 });
  let child: Child = await startChild({ kind: 'service', settings });
  const relay = new FlakyRelay(portOf(child.url));
  const configDir = mkdtempSync(join(tmpdir(), 'logkeep-tail-bench-'));
  try {
    const org = await createOrg(child.url, 1);
    const projectId = org.projectIds[0]!;
    const created = await fetch(`${child.url}/v1/access-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        label: 'tail bench',
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        scope: { permissions: ['read', 'tail'], group_ids: [org.groupId] },
      }),
    });
    if (created.status !== 201) throw new Error(`creating the access key answered ${created.status}`);
    const key = ((await created.json()) as { secret: string }).secret;
    const drops = quick ? 100 : 1_000;
    const relayUrl = await relay.listen();

    const env: NodeJS.ProcessEnv = { ...process.env, LOGKEEP_URL: relayUrl, LOGKEEP_KEY: key, LOGKEEP_CONFIG: join(configDir, 'config.json') };
    delete env.LOGKEEP_PROFILE;
    const tail = spawn(process.execPath, [BIN, 'tail', '--project', String(projectId), '--since-id', '0', '--ndjson'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const printedIds: number[] = [];
    let pending = '';
    let stderr = '';
    tail.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    tail.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim() !== '') printedIds.push((JSON.parse(line) as { id: number }).id);
        nl = pending.indexOf('\n');
      }
    });
    const exited = new Promise<number | null>((resolve) => tail.on('close', (code) => resolve(code)));

    // Ingestion straight to the service (not through the relay), paced at RATE until the cuts are done; it waits out the restarts.
    // A batch whose answer a restart cut off is sent again, as any client would: what was stored is the reference, not what was sent.
    let restarting: Promise<void> | null = null;
    let cutting = true;
    let batches = 0;
    const started = performance.now();
    const ingest = (async () => {
      let tick = 0;
      while (cutting) {
        await restarting;
        const entries = Array.from({ length: PER_TICK }, (_, i) => ({ level: 'info', event: `live ${tick}.${i}`, timestamp: new Date().toISOString() }));
        const res = await fetch(`${child.url}/v1/logs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.keys[0]}`, 'content-type': 'application/json' },
          body: JSON.stringify(entries),
        }).catch(() => null);
        if (res?.status !== 202) {
          await sleep(20);
          continue;
        }
        batches++;
        tick++;
        const due = started + tick * TICK_MS - performance.now();
        if (due > 0) await sleep(due);
      }
    })();

    // Each cut drops a live connection: wait for the program to be connected, let entries flow a moment, cut.
    // Two restarts, a third and two thirds of the way.
    const restartAt = new Set([Math.floor(drops / 3), Math.floor((2 * drops) / 3)]);
    for (let d = 0; d < drops; d++) {
      await relay.connected();
      await sleep(50 + Math.random() * 100);
      relay.cut();
      if (restartAt.has(d)) {
        restarting = (async () => {
          await child.stop();
          child = await startChild({ kind: 'service', settings });
          relay.upstreamPort = portOf(child.url);
        })();
        await restarting;
        restarting = null;
      }
    }
    cutting = false;
    await ingest;
    const seconds = (performance.now() - started) / 1000;
    const stored = await storedIds(child.url, org.token, projectId);
    const behindAtEnd = stored.length - printedIds.length;
    const deadline = Date.now() + 60_000;
    while (printedIds.length < stored.length && Date.now() < deadline) await sleep(50);
    tail.kill('SIGINT');
    const code = await exited;
    const once = new Set(printedIds).size === printedIds.length;
    const inOrder = printedIds.every((id, i) => i === 0 || id > printedIds[i - 1]!);
    const all = printedIds.length === stored.length && printedIds.every((id, i) => id === stored[i]);
    const exact = once && inOrder && all;
    console.log(
      `  ${name}: ${fmt(stored.length)} entries stored (${fmt(batches)} batches acknowledged) at ${fmt(stored.length / seconds)}/s (paced for ${fmt(RATE)}/s) over ${fmt(seconds, 1)} s, ${fmt(drops)} connections cut, 2 restarts; ` +
        `tail connected ${fmt(relay.opened)} times and was ${fmt(behindAtEnd)} entries behind when ingestion stopped`,
    );
    console.log(
      `    printed ${fmt(printedIds.length)} of ${fmt(stored.length)}: ${once ? 'none twice' : 'SOME TWICE'}, ${inOrder ? 'in order' : 'OUT OF ORDER'}, ` +
        `${all ? 'none missing' : 'SOME MISSING'} (exit ${String(code)}): every entry exactly once, in order ${verdict(exact)}`,
    );
    if (!exact) console.log(`    tail stderr (end): ${stderr.slice(-800)}`);
  } finally {
    await relay.close();
    await child.stop().catch(() => undefined);
    rmSync(configDir, { recursive: true, force: true });
  }
}

export async function benchTailDrops({ quick, backends = ['file', 'server'] }: { quick: boolean; backends?: BackendChoice[] }): Promise<void> {
  console.log(`\n== logkeep tail across ${quick ? 100 : 1000} dropped connections and 2 restarts, ${RATE} entries/s ingested`);
  await onEachBackend(backends, (name, db) => benchOne(name, db, quick));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchTailDrops({ quick: process.argv.includes('--quick'), backends: backendsFromArgv(process.argv) });
}
