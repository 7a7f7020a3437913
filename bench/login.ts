/**
 * Login benchmark: password-grant logins per second with the DEFAULT scrypt
 * cost (or `--logn N`), and what a burst of logins does to everything else:
 * `/healthz` (the event loop) and an authenticated `GET /v1/users` (a
 * SQLite read on the libuv pool that the hashes share, D35).
 *
 *   node --import tsx bench/login.ts [--logins 40] [--clients 8] [--logn 17]
 *
 * Prints figures; not part of `npm test`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createLogService } from '../lib/service.js';
import { silentLogger } from '../lib/core/logger.js';
import { DEFAULT_MAX_CONCURRENT_HASHES, DEFAULT_SCRYPT_LOG_N, SCRYPT_P, SCRYPT_R, createPasswordHasher } from '../lib/auth/passwords.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const LOGINS = flag('logins', 40);
const CLIENTS = flag('clients', 8);
const LOG_N = flag('logn', DEFAULT_SCRYPT_LOG_N);
const PROBE_INTERVAL_MS = 20;
const PASSWORD = 'bench-password-1';
const NEW_PASSWORD = 'bench-password-2';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  return `n=${s.length} p50=${percentile(s, 50).toFixed(1)} ms p99=${percentile(s, 99).toFixed(1)} ms max=${(s[s.length - 1] ?? NaN).toFixed(1)} ms`;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'logkeep-bench-login-'));
  const service = await createLogService(
    { dbBackend: 'file', dbPath: join(dir, 'bench.db'), jwtSecret: 'bench-secret-0123456789abcdef0123456789', bootstrapAdminPassword: PASSWORD, rateLimitEnabled: false },
    { logger: silentLogger, passwordHashLogN: LOG_N },
  );
  const server = createServer(service.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const loginOnce = async (password: string) => {
    const res = await fetch(`${base}/v1/auth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password', username: 'admin', password }) });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || !body.access_token) throw new Error(`login failed: ${res.status}`);
    return body.access_token;
  };

  try {
    console.log(`logkeep login benchmark: scrypt logN=${LOG_N} r=${SCRYPT_R} p=${SCRYPT_P}, hash concurrency cap ${DEFAULT_MAX_CONCURRENT_HASHES}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`);

    // One hash alone, outside HTTP.
    const hasher = createPasswordHasher({ logN: LOG_N });
    const stored = await hasher.hash(PASSWORD);
    const single: number[] = [];
    for (let i = 0; i < 3; i++) single.push(await timed(() => hasher.verify(stored, PASSWORD)));
    console.log(`single verify:             ${summary(single)}`);

    // The bootstrap admin must change its password before GET /v1/users answers.
    const first = await loginOnce(PASSWORD);
    const changed = await fetch(`${base}/v1/auth/change-password`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first}` },
      body: JSON.stringify({ current_password: PASSWORD, new_password: NEW_PASSWORD }),
    });
    if (changed.status !== 200) throw new Error(`password change failed: ${changed.status}`);
    const token = await loginOnce(NEW_PASSWORD);

    const healthz = () => fetch(`${base}/healthz`).then((r) => r.arrayBuffer());
    const listUsers = () => fetch(`${base}/v1/users?limit=1`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer());

    const idleHealth: number[] = [];
    const idleRead: number[] = [];
    for (let i = 0; i < 100; i++) {
      idleHealth.push(await timed(healthz));
      idleRead.push(await timed(listUsers));
    }

    // The burst: CLIENTS concurrent clients share LOGINS logins; meanwhile probe both paths.
    const burstHealth: number[] = [];
    const burstRead: number[] = [];
    let running = true;
    const probe = (async () => {
      while (running) {
        burstHealth.push(await timed(healthz));
        burstRead.push(await timed(listUsers));
        await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
      }
    })();
    let remaining = LOGINS;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (remaining > 0) {
          remaining--;
          await loginOnce(NEW_PASSWORD);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    running = false;
    await probe;

    console.log(`logins:                    ${LOGINS} in ${seconds.toFixed(2)} s with ${CLIENTS} clients = ${(LOGINS / seconds).toFixed(2)} logins/s`);
    console.log(`/healthz idle:             ${summary(idleHealth)}`);
    console.log(`/healthz during burst:     ${summary(burstHealth)}`);
    console.log(`GET /v1/users idle:        ${summary(idleRead)}`);
    console.log(`GET /v1/users during burst: ${summary(burstRead)}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
