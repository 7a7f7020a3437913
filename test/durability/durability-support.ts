/**
 * Shared by the durability tests: the built `logkeep` started on a given
 * database, a project and key made through the API, a concurrent ingestion
 * load that records exactly which entries were acknowledged (202), and the
 * checks on the database afterwards: every acknowledged entry stored whole,
 * each request's entries all or none, counters equal to the rows, every
 * entry findable through the search index, and (on SQLite) the file's and
 * the FTS5 index's own integrity checks.
 */
import assert from 'node:assert/strict';
import { open as openSqliteFile } from 'sqlite';
import sqlite3 from 'sqlite3';
import type { DatabaseConfig } from '../../lib/core/config.js';
import { silentLogger } from '../../lib/core/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { LogSelection } from '../../lib/storage/types-logs.js';
import { ADMIN_FINAL_PASSWORD, createGroup, createKey, createProject, signIn, signInAdmin } from '../support/actors.js';
import { freePort, startBin, waitForHealthz, type RunningBin } from '../support/bin.js';
import { ADMIN_PASSWORD, TEST_JWT_SECRET, api } from '../support/service.js';

export interface LogkeepProcess {
  bin: RunningBin;
  url: string;
}

/** Starts `logkeep serve` on `database` (a fresh port each time) and waits for /healthz. */
export async function startLogkeep(database: DatabaseConfig): Promise<LogkeepProcess> {
  const port = await freePort();
  const args = ['serve', '--http-host', '127.0.0.1', '--http-port', String(port), '--no-rate-limit-enabled', '--log-level', 'warn'];
  const env: Record<string, string> = { SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD };
  if (database.dbBackend === 'file') {
    args.push('--db-path', database.dbPath as string);
  } else {
    args.push(
      '--db-backend',
      'server',
      '--db-server-host',
      database.dbServerHost as string,
      '--db-server-port',
      String(database.dbServerPort),
      '--db-server-database',
      database.dbServerDatabase as string,
      '--db-server-username',
      database.dbServerUsername as string,
      '--db-server-ssl-mode',
      'disable',
    );
    env.SERVICE_DB_SERVER_PASSWORD = database.dbServerPassword ?? '';
  }
  const bin = startBin(args, { env });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthz(url, 30_000);
  } catch (err) {
    bin.kill();
    throw err;
  }
  return { bin, url };
}

export interface IngestTarget {
  projectId: number;
  secret: string;
}

/** On the first start: the admin's password replaced, a group, a project and a key. */
export async function prepareProject(url: string): Promise<IngestTarget & { adminToken: string }> {
  const admin = await signInAdmin(url);
  const groupId = await createGroup(url, admin.token, 'durability');
  const projectId = await createProject(url, admin.token, groupId, 'durability', { retention_days: 30 });
  const { secret } = await createKey(url, admin.token, projectId, 'durability');
  return { projectId, secret, adminToken: admin.token };
}

/** After a restart: the admin signs in with the password set on the first start. */
export async function adminTokenAfterRestart(url: string): Promise<string> {
  return (await signIn(url, 'admin', ADMIN_FINAL_PASSWORD)).token;
}

/** The entry a marker stands for: the stored body must be exactly its compact JSON. */
export function entryFor(marker: string): Record<string, unknown> {
  return { level: 'info', event: 'durability check', timestamp: '2026-01-01T00:00:00.000Z', marker, pad: 'x'.repeat(marker.length * 3) };
}

/** `c3r17e4` → `c3r17`: the request an entry came in. */
function requestOf(marker: string): string {
  return marker.slice(0, marker.lastIndexOf('e'));
}

export interface LoadOptions {
  clients: number;
  batchSize: number;
  /** true: a client stops at its first network error (the process was killed); false: it retries. */
  stopOnNetworkError: boolean;
  /** Pause after a failed request before the next (retrying clients). */
  retryDelayMs?: number;
}

export interface RequestOutcome {
  request: string;
  status: number | 'network-error';
  /** The error code of a non-202 answer. */
  error?: string;
  ms: number;
}

/**
 * Concurrent clients, each sending one batch at a time until `stop()`.
 * `acked` holds the markers of every entry of every request answered 202
 * with all entries accepted.
 */
export class IngestLoad {
  readonly acked = new Set<string>();
  readonly outcomes: RequestOutcome[] = [];
  inFlight = 0;
  private stopped = false;
  private readonly clients: Promise<void>[] = [];

  constructor(
    private readonly url: string,
    private readonly target: IngestTarget,
    private readonly options: LoadOptions,
  ) {}

  start(): this {
    for (let c = 0; c < this.options.clients; c++) this.clients.push(this.client(c));
    return this;
  }

  /** No new requests after this; resolves when every client's last request has settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.clients);
  }

  /** Resolves once at least `entries` entries are acknowledged. */
  async waitForAcked(entries: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.acked.size < entries) {
      if (Date.now() > deadline) throw new Error(`only ${this.acked.size} entries acknowledged within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private async client(c: number): Promise<void> {
    for (let r = 0; !this.stopped; r++) {
      const request = `c${c}r${r}`;
      const markers = Array.from({ length: this.options.batchSize }, (_, i) => `${request}e${i}`);
      const started = Date.now();
      this.inFlight += 1;
      let status: number;
      let text: string;
      try {
        const res = await fetch(`${this.url}/v1/logs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.target.secret}`, 'content-type': 'application/json' },
          body: JSON.stringify(markers.map(entryFor)),
        });
        status = res.status;
        text = await res.text();
      } catch {
        this.outcomes.push({ request, status: 'network-error', ms: Date.now() - started });
        if (this.options.stopOnNetworkError) return;
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 50));
        continue;
      } finally {
        this.inFlight -= 1;
      }
      const body = JSON.parse(text) as { accepted?: number; rejected?: unknown[]; error?: string };
      if (status === 202) {
        assert.equal(body.accepted, markers.length, text);
        for (const m of markers) this.acked.add(m);
        this.outcomes.push({ request, status, ms: Date.now() - started });
      } else {
        this.outcomes.push({ request, status, ms: Date.now() - started, ...(body.error === undefined ? {} : { error: body.error }) });
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs ?? 50));
      }
    }
  }
}

/** GET /v1/projects/:id's usage counters. */
export async function projectUsage(url: string, token: string, projectId: number): Promise<{ entry_count: number; total_bytes: number }> {
  const res = await api(url, 'GET', `/v1/projects/${projectId}`, { token });
  assert.equal(res.status, 200, res.text);
  return { entry_count: res.body.entry_count, total_bytes: res.body.total_bytes };
}

export interface StoredCheck {
  stored: number;
  bytes: number;
}

/**
 * Opens the database (the service must be stopped, or at least idle) and
 * checks: every acknowledged entry is stored; every stored entry is whole
 * (its body is exactly what was sent) and its request's entries are all
 * there; the project's counters equal the rows; the search index finds
 * every stored entry (by a word all of them hold, and a few by an
 * exact-match filter on their marker); on SQLite, integrity_check passes,
 * each entry is in the tail or in one sealed block, and the tail counts
 * and filter shards match.
 */
export async function verifyStoredEntries(database: DatabaseConfig, projectId: number, acked: ReadonlySet<string>, batchSize: number): Promise<StoredCheck> {
  const storage = await openStorage(database, { logger: silentLogger });
  const markers = new Set<string>();
  const ids: number[] = [];
  let bytes = 0;
  try {
    const selection: LogSelection = { projectIds: [projectId], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };
    let beforeId: number | undefined;
    for (;;) {
      const rows = await storage.queryLogs(selection, { limit: 5000, ...(beforeId === undefined ? {} : { beforeId }) });
      for (const row of rows) {
        const marker = (JSON.parse(row.body) as { marker: string }).marker;
        assert.equal(row.body, JSON.stringify(entryFor(marker)), `entry ${row.id} is stored whole`);
        assert.ok(!markers.has(marker), `entry ${marker} is stored once`);
        markers.add(marker);
        ids.push(row.id);
        bytes += Buffer.byteLength(row.body, 'utf8');
      }
      if (rows.length < 5000) break;
      beforeId = rows[rows.length - 1]!.id;
    }
    const missing = [...acked].filter((m) => !markers.has(m));
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged entries are missing`);
    const perRequest = new Map<string, number>();
    for (const m of markers) perRequest.set(requestOf(m), (perRequest.get(requestOf(m)) ?? 0) + 1);
    for (const [request, count] of perRequest) assert.equal(count, batchSize, `request ${request} is stored whole or not at all`);
    const project = await storage.getProject(projectId);
    assert.ok(project);
    assert.deepEqual({ entries: project.entryCount, bytes: project.totalBytes }, { entries: markers.size, bytes }, 'counters equal the stored rows');

    // Indexed in the same transaction: every stored entry is found by a word all of them hold...
    const byWord: number[] = [];
    beforeId = undefined;
    for (;;) {
      const rows = await storage.queryLogs({ ...selection, words: ['durability'] }, { limit: 5000, ...(beforeId === undefined ? {} : { beforeId }) });
      byWord.push(...rows.map((r) => r.id));
      if (rows.length < 5000) break;
      beforeId = rows[rows.length - 1]!.id;
    }
    assert.deepEqual(
      byWord.sort((a, b) => a - b),
      [...ids].sort((a, b) => a - b),
      'the search index finds every stored entry',
    );
    // ...and some by their own marker (first, last and a few between, in stored order).
    const sample = ids.length === 0 ? [] : [0, 1, 2, 3, 4].map((i) => Math.floor((i * (ids.length - 1)) / 4));
    const markerOf = [...markers];
    for (const i of new Set(sample)) {
      const marker = markerOf[i]!;
      const rows = await storage.queryLogs({ ...selection, exact: [{ path: ['marker'], value: marker }] }, { limit: 10 });
      assert.deepEqual(
        rows.map((r) => r.id),
        [ids[i]!],
        `marker ${marker} is found by its exact-match filter`,
      );
    }
  } finally {
    await storage.close();
  }
  if (database.dbBackend === 'file') await checkSqliteIntegrity(database.dbPath as string, ids);
  return { stored: markers.size, bytes };
}

async function checkSqliteIntegrity(path: string, entryIds: readonly number[]): Promise<void> {
  const db = await openSqliteFile({ filename: path, driver: sqlite3.Database });
  try {
    await db.exec('PRAGMA busy_timeout = 5000');
    const rows = await db.all<{ integrity_check: string }[]>('PRAGMA integrity_check');
    assert.deepEqual(
      rows.map((r) => r.integrity_check),
      ['ok'],
    );
    // Every stored entry is in exactly one place: a tail row or a sealed block (never both).
    const tail = (await db.all<{ id: number }[]>('SELECT id FROM log_entries ORDER BY id')).map((r) => r.id);
    const blocks = await db.all<{ first_id: number; last_id: number; entries: number }[]>('SELECT first_id, last_id, entries FROM log_sealed ORDER BY last_id');
    const sealedCount = blocks.reduce((n, b) => n + b.entries, 0);
    assert.equal(tail.length + sealedCount, entryIds.length, 'tail rows and sealed entries add up to the stored entries');
    for (const b of blocks) assert.ok(!tail.some((id) => id >= b.first_id && id <= b.last_id), `no tail row lies inside block ${b.first_id}–${b.last_id}`);
    // The tail counts equal the tail rows; each block has its 64 filter shards.
    const counted = await db.get<{ n: number }>('SELECT COALESCE(SUM(entries), 0) AS n FROM log_tails');
    assert.equal(counted?.n, tail.length, 'log_tails counts the tail rows');
    const shards = await db.get<{ n: number }>('SELECT count(*) AS n FROM log_filter_shards');
    assert.equal(shards?.n, blocks.length * 64, 'every block has its filter shards');
  } finally {
    await db.close();
  }
}
