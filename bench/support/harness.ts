/**
 * Shared benchmark machinery: forking the process under test, a throwaway
 * PostgreSQL database, an organisation made through the HTTP API, an HTTP
 * loader (undici pool) and percentile arithmetic.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pgPromise from 'pg-promise';
import { Pool } from 'undici';
import type { LogServiceSettings } from '../../lib/core/config.js';
import type { ChildMode } from './serve-child.js';

export const JWT_SECRET = 'bench-secret-0123456789abcdef0123456789abcdef';
export const ADMIN_PASSWORD = 'bench-admin-password-1';
export const FINAL_PASSWORD = 'bench-admin-password-2';

export interface Child {
  url: string;
  /** The forked process's id (for CPU accounting, see cpu-time.ts). */
  pid: number;
  /** Peak RSS since the previous call, and the current RSS (bytes). */
  rss(): Promise<{ peak: number; now: number; atPeak: Record<string, unknown> }>;
  /** The service's `process.memoryUsage()` now. */
  memory(): Promise<NodeJS.MemoryUsage>;
  /** The service's event-loop delay since the previous call (ms; the loop's own 5 ms sampling tick subtracted). */
  loopDelay(): Promise<{ p50: number; p99: number; max: number }>;
  stop(): Promise<void>;
}

/** Forks the process under test and waits until it listens; `nodeArgs` go to its `node`. */
export function startChild(mode: ChildMode, options: { nodeArgs?: string[] } = {}): Promise<Child> {
  const script = fileURLToPath(new URL('./serve-child.ts', import.meta.url));
  const child: ChildProcess = fork(script, [], {
    execArgv: [
      '--import',
      'tsx',
      ...(options.nodeArgs ?? []),
      ...(process.env.LOGKEEP_BENCH_NODE_ARGS ? process.env.LOGKEEP_BENCH_NODE_ARGS.split(' ') : []),
      ...(process.env.LOGKEEP_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.LOGKEEP_BENCH_CPU_PROF}`] : []),
    ],
    // As the bin does: a libuv pool of 8 for sqlite3 (password hashes run in a process of their own).
    env: { ...process.env, LOGKEEP_BENCH_CHILD: JSON.stringify(mode), UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiters: ((m: any) => void)[] = [];
  child.on('message', (m: any) => {
    const w = waiters.shift();
    if (w) w(m);
  });
  const next = () => new Promise<any>((resolve) => waiters.push(resolve));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`benchmark child exited with ${code}`)));
    next().then((ready: { url: string }) => {
      child.removeAllListeners('exit');
      resolve({
        url: ready.url,
        pid: child.pid!,
        async rss() {
          const reply = next();
          child.send({ type: 'rss' });
          return reply;
        },
        async memory() {
          const reply = next();
          child.send({ type: 'memory' });
          return reply;
        },
        async loopDelay() {
          const reply = next();
          child.send({ type: 'loop' });
          return reply;
        },
        async stop() {
          const done = new Promise<void>((r) => child.once('exit', () => r()));
          child.send({ type: 'stop' });
          await done;
        },
      });
    }, reject);
  });
}

// ---- databases -------------------------------------------------------------------

export interface BenchDatabase {
  settings: Partial<LogServiceSettings>;
  drop(): Promise<void>;
}

export function fileDatabase(): BenchDatabase {
  const dir = mkdtempSync(join(process.env.LOGKEEP_BENCH_DIR ?? tmpdir(), 'logkeep-bench-'));
  return {
    settings: { dbBackend: 'file', dbPath: join(dir, 'bench.db') },
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const PG = {
  host: process.env.LOGKEEP_BENCH_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.LOGKEEP_BENCH_PG_PORT ?? 5432),
  user: process.env.LOGKEEP_BENCH_PG_USER ?? 'postgres',
  password: process.env.LOGKEEP_BENCH_PG_PASSWORD ?? 'postgres',
  adminDatabase: process.env.LOGKEEP_BENCH_PG_DATABASE ?? 'test',
};

/** A fresh PostgreSQL database, or null (with the reason printed) when none is reachable. */
export type BackendChoice = 'file' | 'server';

/** Runs `bench` on a fresh database of each chosen backend (the server one only when PostgreSQL answers), dropping it after. */
export async function onEachBackend(backends: readonly BackendChoice[], bench: (name: BackendChoice, db: BenchDatabase) => Promise<void>): Promise<void> {
  for (const name of backends) {
    const db = name === 'file' ? fileDatabase() : await serverDatabase();
    if (!db) continue;
    try {
      await bench(name, db);
    } finally {
      await db.drop();
    }
  }
}

/** The backends a standalone benchmark names with `--backend file|server|both` (both by default). */
export function backendsFromArgv(argv: readonly string[]): BackendChoice[] {
  const at = argv.indexOf('--backend');
  const which = at > 0 ? argv[at + 1] : 'both';
  return which === 'file' || which === 'server' ? [which] : ['file', 'server'];
}

export async function serverDatabase(): Promise<BenchDatabase | null> {
  const pgp = pgPromise({ noWarnings: true });
  const admin = pgp({ ...PG, database: PG.adminDatabase, max: 1 });
  const name = `logkeep_bench_${process.pid}_${Date.now() % 100000}`;
  try {
    await admin.none('CREATE DATABASE $1:name', [name]);
  } catch (err) {
    console.log(`  (server backend skipped: ${err instanceof Error ? err.message : String(err)})`);
    await admin.$pool.end();
    return null;
  }
  return {
    settings: {
      dbBackend: 'server',
      dbServerHost: PG.host,
      dbServerPort: PG.port,
      dbServerDatabase: name,
      dbServerUsername: PG.user,
      dbServerPassword: PG.password,
      dbServerSslMode: 'disable',
    },
    // Each pool ends by itself: pgp.end() ends every pool of the process
    // (pg-promise keeps one registry), other databases' included.
    async drop() {
      await admin
        .none('DROP DATABASE IF EXISTS $1:name WITH (FORCE)', [name])
        .catch((err) => console.log(`  (could not drop ${name}: ${err instanceof Error ? err.message : String(err)})`));
      await admin.$pool.end();
    },
  };
}

/**
 * What autovacuum would have done by now on a PostgreSQL whose autovacuum
 * is off (as on the test server here): planner statistics and the
 * visibility map for the freshly loaded table. Says what it did; does
 * nothing on the file backend or when autovacuum is on.
 */
export async function settleServerDatabase(db: BenchDatabase): Promise<void> {
  const s = db.settings;
  if (s.dbBackend !== 'server') return;
  const pgp = pgPromise({ noWarnings: true });
  const conn = pgp({
    host: s.dbServerHost!,
    port: s.dbServerPort!,
    database: s.dbServerDatabase!,
    user: s.dbServerUsername!,
    password: s.dbServerPassword!,
    max: 1,
  });
  try {
    const { autovacuum } = await conn.one<{ autovacuum: string }>('SHOW autovacuum');
    if (autovacuum === 'on') return;
    const started = Date.now();
    await conn.none('VACUUM (ANALYZE) log_entries, log_sealed, log_filter_shards, log_rollup');
    console.log(
      `    (autovacuum is off on this server: ran VACUUM (ANALYZE) log_entries, log_sealed, log_filter_shards, log_rollup once, as autovacuum would, in ${fmt((Date.now() - started) / 1000, 1)} s)`,
    );
  } finally {
    await conn.$pool.end();
  }
}

/** How many people sign in at once in the benchmarks' login bursts. */
export const LOGIN_BURST = 20;

/**
 * Service settings for a benchmark run on `db`. Without a rate limit, and
 * with room for a whole login burst in the queue of password checks (by
 * default 16 wait behind the one running, and the last 3 of 20 would be
 * refused with 503 at once): a burst then costs 20 full hashes.
 */
export function serviceSettings(db: BenchDatabase, extra: Partial<LogServiceSettings> = {}): LogServiceSettings {
  return {
    ...db.settings,
    jwtSecret: JWT_SECRET,
    bootstrapAdminPassword: ADMIN_PASSWORD,
    rateLimitEnabled: false,
    passwordHashMaxWaiting: LOGIN_BURST - 1,
    ...extra,
  } as LogServiceSettings;
}

// ---- HTTP client ---------------------------------------------------------------------

async function call(url: string, method: string, path: string, token: string | null, body?: unknown, form?: Record<string, string>): Promise<any> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    payload = new URLSearchParams(form).toString();
  } else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(url + path, { method, headers, body: payload });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Signs in; with `retries`, a 503 (password checks busy, on a loaded machine) is retried after the 5 s it asks for. */
export async function login(url: string, username: string, password: string, retries = 0): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await call(url, 'POST', '/v1/auth/token', null, undefined, { grant_type: 'password', username, password })).access_token;
    } catch (err) {
      if (attempt >= retries || !(err instanceof Error) || !err.message.includes(': 503 ')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  }
}

/** The bootstrap admin, its temporary password replaced; returns a token. */
export async function adminToken(url: string): Promise<string> {
  const first = await login(url, 'admin', ADMIN_PASSWORD, SETUP_LOGIN_RETRIES);
  await call(url, 'POST', '/v1/auth/change-password', first, { current_password: ADMIN_PASSWORD, new_password: FINAL_PASSWORD });
  return login(url, 'admin', FINAL_PASSWORD, SETUP_LOGIN_RETRIES);
}

/** Sign-ins a benchmark needs to set up retry a 503 this many times; those it measures (login bursts) do not. */
export const SETUP_LOGIN_RETRIES = 5;

export function adminLogin(url: string, retries = 0): Promise<string> {
  return login(url, 'admin', FINAL_PASSWORD, retries);
}

/** An access token lives 15 minutes: long runs ask this for one, signed in again every 10 minutes. */
export type TokenSource = () => Promise<string>;

export async function adminTokens(url: string): Promise<TokenSource> {
  let token = await adminLogin(url, SETUP_LOGIN_RETRIES);
  let at = performance.now();
  return async () => {
    if (performance.now() - at > 10 * 60_000) {
      token = await adminLogin(url, SETUP_LOGIN_RETRIES);
      at = performance.now();
    }
    return token;
  };
}

export interface BenchOrg {
  token: string;
  groupId: number;
  projectIds: number[];
  keys: string[];
}

/** One group with `projects` projects and one key each, through the API. */
export async function createOrg(url: string, projects: number): Promise<BenchOrg> {
  const token = await adminToken(url);
  const group = await call(url, 'POST', '/v1/groups', token, { name: 'bench' });
  const projectIds: number[] = [];
  const keys: string[] = [];
  for (let i = 0; i < projects; i++) {
    const project = await call(url, 'POST', `/v1/groups/${group.id}/projects`, token, { name: `p${i}`, retention_days: 3650 });
    projectIds.push(project.id);
    keys.push((await call(url, 'POST', `/v1/projects/${project.id}/secret-keys`, token, { label: 'bench' })).secret);
  }
  return { token, groupId: group.id, projectIds, keys };
}

// ---- loading ---------------------------------------------------------------------------

/** One request to send: a body, how many entries it holds, and the key to send it with. */
export interface Shot {
  body: Buffer;
  entries: number;
  key: string;
  /** Headers beyond the key, e.g. another Content-Type or a Content-Encoding (default: a JSON array). */
  headers?: Record<string, string>;
  /** Another ingestion route (default `/v1/logs`), whose answer `accepted` reads (throwing when it is not a success). */
  path?: string;
  accepted?: (status: number, text: string) => number;
}

export interface LoadOptions {
  url: string;
  /** The next request to send (called once per request). */
  next: () => Shot;
  connections: number;
  /** Stop when this many entries were sent, or when `until()` turns true. */
  totalEntries?: number;
  until?: () => boolean;
  /**
   * Open loop: send this many entries per second on a fixed schedule instead
   * of as fast as answers come back. Latency then counts from each request's
   * scheduled time, so a stall shows in it even while every connection waits.
   */
  entriesPerSecond?: number;
  /** Called after every response with the running total of accepted entries. */
  onProgress?: (accepted: number) => void;
}

export interface LoadResult {
  entries: number;
  requests: number;
  seconds: number;
  rate: number;
  latencies: number[];
}

/** Sends bodies over `connections` keep-alive connections until told to stop. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  let sent = 0;
  let accepted = 0;
  let requests = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const done = () => (options.totalEntries !== undefined && sent >= options.totalEntries) || (options.until?.() ?? false);
  let scheduled = started;
  async function worker(): Promise<void> {
    while (!done()) {
      const shot = options.next();
      sent += shot.entries;
      let t = performance.now();
      if (options.entriesPerSecond) {
        const slot = scheduled;
        scheduled += (shot.entries / options.entriesPerSecond) * 1000;
        if (slot > t) await new Promise((resolve) => setTimeout(resolve, slot - t));
        if (done()) break; // the deadline passed while waiting for this slot
        t = slot;
      }
      const res = await pool.request({
        path: shot.path ?? '/v1/logs',
        method: 'POST',
        body: shot.body,
        headers: { authorization: `Bearer ${shot.key}`, 'content-type': 'application/json', ...shot.headers },
      });
      const text = await res.body.text();
      latencies.push(performance.now() - t);
      if (shot.accepted) accepted += shot.accepted(res.statusCode, text);
      else {
        if (res.statusCode !== 202) throw new Error(`ingest answered ${res.statusCode}: ${text.slice(0, 200)}`);
        accepted += (JSON.parse(text) as { accepted: number }).accepted;
      }
      requests += 1;
      options.onProgress?.(accepted);
    }
  }
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { entries: accepted, requests, seconds, rate: accepted / seconds, latencies };
}

// ---- numbers ------------------------------------------------------------------------------

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function verdict(ok: boolean): string {
  return ok ? 'meets target' : 'BELOW TARGET';
}
