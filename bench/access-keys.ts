/**
 * Access keys against access tokens on the query path: the same
 * `GET /v1/logs` page (50 entries of one project) asked with an access
 * token (a JWT: a signature check and one user read) and with an access key
 * (a hash lookup, the user and their grants read fresh), over 4 keep-alive
 * connections per credential, in many short alternating windows (token,
 * key, key, token, …) so a drift of the machine, shared with other work,
 * falls on both alike; samples pooled per credential.
 *
 * Target: the key's throughput at least 90 % of the token's (within the
 * noise of a shared 2-core machine, "no more than a JWT's"), printed beside
 * the token's of the same run.
 *
 * Standalone (after `npm run build`): node --import tsx bench/access-keys.ts [--quick] [--backend file|server|both]
 */
import { Pool } from 'undici';
import { createOrg, fileDatabase, fmt, percentile, serverDatabase, serviceSettings, startChild, verdict, type BenchDatabase } from './support/harness.js';

export const KEY_SHARE_TARGET = 0.9;
const CONNECTIONS = 4;

interface Window {
  requests: number;
  seconds: number;
  latencies: number[];
}

async function window(pool: Pool, path: string, bearer: string, seconds: number): Promise<Window> {
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  async function worker(): Promise<void> {
    while (performance.now() < until) {
      const t = performance.now();
      const res = await pool.request({ path, method: 'GET', headers: { authorization: `Bearer ${bearer}` } });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET ${path} answered ${res.statusCode}: ${text.slice(0, 200)}`);
      latencies.push(performance.now() - t);
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return { requests: latencies.length, seconds: (performance.now() - started) / 1000, latencies };
}

async function benchOne(name: string, db: BenchDatabase, quick: boolean): Promise<void> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  try {
    const org = await createOrg(child.url, 1);
    const projectId = org.projectIds[0]!;
    const entries = Array.from({ length: 500 }, (_, i) => ({
      level: 'info',
      event: `bench entry ${i}`,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    }));
    const ingest = await fetch(`${child.url}/v1/logs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify(entries),
    });
    if (ingest.status !== 202) throw new Error(`ingest answered ${ingest.status}`);
    const created = await fetch(`${child.url}/v1/access-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        label: 'bench',
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        scope: { permissions: ['read'], group_ids: [org.groupId] },
      }),
    });
    const key = ((await created.json()) as { secret: string }).secret;
    const path = `/v1/logs?project_id=${projectId}&limit=50`;
    // Short windows, many of them: a burst of other work on the machine lands in one window of each kind, not in a whole side.
    const seconds = quick ? 0.5 : 1;
    const pairs = quick ? 8 : 20;
    // Connections stay open across windows (each credential its own), so no window pays for opening them.
    const pools = {
      token: new Pool(child.url, { connections: CONNECTIONS, keepAliveTimeout: 60_000 }),
      key: new Pool(child.url, { connections: CONNECTIONS, keepAliveTimeout: 60_000 }),
    };
    const bearers = { token: org.token, key };
    // Warm-up, not counted.
    await window(pools.token, path, bearers.token, 1);
    await window(pools.key, path, bearers.key, 1);
    const pooled = { token: [] as Window[], key: [] as Window[] };
    for (let i = 0; i < pairs; i++) {
      const order = i % 2 === 0 ? (['token', 'key'] as const) : (['key', 'token'] as const);
      for (const kind of order) pooled[kind].push(await window(pools[kind], path, bearers[kind], seconds));
    }
    await Promise.all([pools.token.close(), pools.key.close()]);
    const figures = (ws: Window[]) => {
      const latencies = ws.flatMap((w) => w.latencies);
      const rate = ws.reduce((n, w) => n + w.requests, 0) / ws.reduce((s, w) => s + w.seconds, 0);
      return { rate, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
    };
    const token = figures(pooled.token);
    const withKey = figures(pooled.key);
    const share = withKey.rate / token.rate;
    console.log(`  ${name}: access token ${fmt(token.rate)} req/s (p50 ${fmt(token.p50, 1)} ms, p99 ${fmt(token.p99, 1)} ms)`);
    console.log(`  ${name}: access key   ${fmt(withKey.rate)} req/s (p50 ${fmt(withKey.p50, 1)} ms, p99 ${fmt(withKey.p99, 1)} ms)`);
    console.log(`  ${name}: key/token ${fmt(share * 100)} % (target ≥ ${fmt(KEY_SHARE_TARGET * 100)} %): ${verdict(share >= KEY_SHARE_TARGET)}`);
  } finally {
    await child.stop();
    await db.drop();
  }
}

export async function benchAccessKeys(options: { quick: boolean; backends?: 'file' | 'server' | 'both' }): Promise<void> {
  console.log(`access keys on the query path (GET /v1/logs, 50 entries, ${CONNECTIONS} connections)`);
  const backends = options.backends ?? 'both';
  if (backends !== 'server') await benchOne('file', fileDatabase(), options.quick);
  if (backends !== 'file') {
    const db = await serverDatabase();
    if (db) await benchOne('server', db, options.quick);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--backend');
  await benchAccessKeys({ quick: process.argv.includes('--quick'), backends: at > 0 ? (process.argv[at + 1] as 'file' | 'server' | 'both') : 'both' });
}
