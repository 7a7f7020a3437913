/**
 * What only the `server` backend has: opening and migrating PostgreSQL
 * (also two processes at once), refusal of a newer schema, fast failure on
 * an unreachable server, the three TLS modes, surviving dropped idle
 * connections, and keeping pg-promise/pg state per storage. The verbs
 * themselves are covered for both backends by storage.test.ts.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import pgPromise from 'pg-promise';
import { silentLogger, type ServiceLogger } from '../../lib/core/logger.js';
import { migrate, POSTGRES_MIGRATIONS, type MigrationTask } from '../../lib/storage/postgres/migrations.js';
import { openPostgresStorage } from '../../lib/storage/postgres/postgres-storage.js';
import type { PostgresStorageOptions } from '../../lib/storage/postgres/connection.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { SCHEMA_VERSION, type IngestReport, type Storage } from '../../lib/storage/storage.js';
import { SchemaTooNewError, StorageConflict, StorageUnavailableError } from '../../lib/core/errors.js';
import { PG, createThrowawayDatabase, endPostgresAdmin, postgresSkipReason, type ThrowawayDatabase } from '../support/postgres.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { assertV2Histograms, v2Entries } from '../support/schema-v2.js';

/**
 * A self-signed certificate for `localhost` only (not 127.0.0.1), valid
 * 2000–2099, used by the TLS-terminating proxy below. Test material only.
 */
const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBbzCCARSgAwIBAgIBATAKBggqhkjOPQQDAjAUMRIwEAYDVQQDDAlsb2NhbGhv
c3QwIBcNMDAwMTAxMDAwMDAwWhgPMjA5OTEyMzEyMzU5NTlaMBQxEjAQBgNVBAMM
CWxvY2FsaG9zdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOScKIVL8aR0+eLG
O1dprOHbCRYSqTWC3NZfy90w/a/jAfa7U0001pZ2UdCerB5SvHZxokJMKrDRk4UN
125uMNijVTBTMBQGA1UdEQQNMAuCCWxvY2FsaG9zdDAPBgNVHRMBAf8EBTADAQH/
MAsGA1UdDwQEAwIChDAdBgNVHQ4EFgQUW/ilWLAh0lkgmrZRpj11YyYpepkwCgYI
KoZIzj0EAwIDSQAwRgIhAO1SGAVKX8SVgdukg1euQiayt55ebgksQzzFIzgJKQ2g
AiEAlHOA1LpNmBFwv742Jq5xBkNVJ/KYOaB9NlU7PW66ltg=
-----END CERTIFICATE-----
`;
const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgRZvr5NvpxF9b5OHZ
qVHWKbjT4ak79bC1NL8cgDYvr7ShRANCAATknCiFS/GkdPnixjtXaazh2wkWEqk1
gtzWX8vdMP2v4wH2u1NNNNaWdlHQnqweUrx2caJCTCqw0ZOFDddubjDY
-----END PRIVATE KEY-----
`;

/** The PostgreSQL protocol's SSLRequest code. */
const SSL_REQUEST_CODE = 80877103;

const unavailable = await postgresSkipReason();

const databases: ThrowawayDatabase[] = [];
const rawPgp = pgPromise({ noWarnings: true });
after(async () => {
  // In parallel: each DROP DATABASE waits for a checkpoint, and concurrent ones share it.
  await Promise.all(databases.map((db) => db.drop()));
  rawPgp.end();
  endPostgresAdmin();
});

async function newDatabase(): Promise<ThrowawayDatabase> {
  const db = await createThrowawayDatabase();
  databases.push(db);
  return db;
}

let shared: Promise<ThrowawayDatabase> | null = null;
/** One database for the cases that need any logkeep database, not an empty one (creating and dropping cost ~1 s each). */
function sharedDatabase(): Promise<ThrowawayDatabase> {
  shared ??= newDatabase();
  return shared;
}

function options(database: string, overrides: Partial<PostgresStorageOptions> = {}): PostgresStorageOptions {
  return { host: PG.host, port: PG.port, database, user: PG.user, password: PG.password, poolSize: 2, sslMode: 'disable', logger: silentLogger, ...overrides };
}

/** A plain connection to a test database, outside any storage, for setting up states. */
function rawConnection(database: string) {
  return rawPgp({ host: PG.host, port: PG.port, user: PG.user, password: PG.password, database, max: 1, application_name: 'logkeep-test' });
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A TLS-terminating stand-in for a PostgreSQL server with TLS: answers the
 * SSLRequest with 'S', completes the handshake with the test certificate,
 * then relays the decrypted protocol to the real (plain) server.
 */
async function startTlsProxy(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((raw) => {
    sockets.add(raw);
    raw.on('close', () => sockets.delete(raw));
    raw.once('data', (first) => {
      raw.pause();
      if (first.length !== 8 || first.readInt32BE(4) !== SSL_REQUEST_CODE) {
        raw.destroy();
        return;
      }
      raw.write('S');
      const secure = new TLSSocket(raw, { isServer: true, key: TEST_TLS_KEY, cert: TEST_TLS_CERT });
      const upstream = connect(PG.port, PG.host);
      sockets.add(upstream);
      const end = () => {
        secure.destroy();
        upstream.destroy();
      };
      for (const s of [secure, upstream]) {
        s.on('error', end);
        s.on('close', end);
      }
      secure.pipe(upstream).pipe(secure);
    });
  });
  // No host: dual-stack where available, so `localhost` reaches it however it resolves.
  await new Promise<void>((resolve) => server.listen(0, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env, encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

async function rejectsWith<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof type, `expected ${type.name}, got ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    return err;
  }
  assert.fail(`expected ${type.name}, but it resolved`);
}

describe('postgres backend', { skip: unavailable ?? false }, () => {
  it('migrates an empty database to SCHEMA_VERSION, reopens it unchanged, and closes idempotently', async () => {
    const db = await newDatabase();
    const first = await openPostgresStorage(options(db.name));
    assert.equal(first.backend, 'server');
    assert.equal(await first.schemaVersion(), SCHEMA_VERSION);
    const user = await first.write((tx) =>
      tx.insertUser({
        username: 'Ann',
        passwordHash: 'h',
        displayName: null,
        email: null,
        mustChangePassword: false,
        isPrimaryAdmin: true,
        createdAt: 1_700_000_000_123,
      }),
    );
    await first.close();
    await first.close();

    const second = await openPostgresStorage(options(db.name));
    try {
      assert.equal(await second.schemaVersion(), SCHEMA_VERSION);
      // bigint columns arrive as numbers, not strings.
      assert.deepEqual(await second.getUserById(user.id), user);
      assert.equal(typeof user.id, 'number');
      assert.equal(user.createdAt, 1_700_000_000_123);
      assert.equal(await second.countUsers(), 1);
    } finally {
      await second.close();
    }
  });

  it('migrates a version-2 database holding entries: the rollup it fills (minutes and hours) counts what the entries count', async () => {
    const db = await newDatabase();
    const raw = rawConnection(db.name);
    const entries = v2Entries();
    const projectIds = await raw.tx(async (t) => {
      for (const step of POSTGRES_MIGRATIONS.filter((m) => m.version <= 2)) await step.up(t);
      await t.none('UPDATE schema_version SET version = 2');
      const group = await t.one<{ id: string }>(`INSERT INTO org_groups (name, name_lower, created_at) VALUES ('g', 'g', 1) RETURNING id`);
      const projects = await t.many<{ id: string }>(
        `INSERT INTO projects (group_id, name, name_lower, retention_days, created_at) VALUES ($1, 'p', 'p', 30, 1), ($1, 'q', 'q', 30, 1) RETURNING id`,
        [group.id],
      );
      const ids = projects.map((p) => Number(p.id)).sort((a, b) => a - b) as [number, number];
      await t.none(
        `INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body)
         SELECT p, 1, ts, level, 2, '{}' FROM unnest($1::bigint[], $2::bigint[], $3::smallint[]) AS x(p, ts, level)`,
        [entries.map((e) => ids[e.project]), entries.map((e) => e.ts), entries.map((e) => e.level)],
      );
      return ids;
    });
    const storage = await openPostgresStorage(options(db.name));
    try {
      assert.equal(await storage.schemaVersion(), SCHEMA_VERSION);
      await assertV2Histograms(storage, projectIds, entries);
    } finally {
      await storage.close();
    }
  });

  it('lets two storages open the same empty database at once', async () => {
    const db = await newDatabase();
    const opened = await Promise.all([openPostgresStorage(options(db.name)), openPostgresStorage(options(db.name)), openPostgresStorage(options(db.name))]);
    try {
      for (const storage of opened) assert.equal(await storage.schemaVersion(), SCHEMA_VERSION);
      const raw = rawConnection(db.name);
      assert.equal((await raw.one<{ n: number }>('SELECT count(*)::int AS n FROM schema_version')).n, 1);
    } finally {
      await Promise.all(opened.map((s) => s.close()));
    }
  });

  it('runs appended steps on an older database in place, after which this build refuses it as newer', async () => {
    const db = await newDatabase();
    await (await openPostgresStorage(options(db.name))).close();
    const raw = rawConnection(db.name);
    const step = { version: SCHEMA_VERSION + 1, up: async (t: MigrationTask) => void (await t.none('CREATE TABLE step_two (x INTEGER)')) };
    assert.equal(await migrate(raw, [...POSTGRES_MIGRATIONS, step]), SCHEMA_VERSION + 1);
    assert.equal((await raw.one<{ version: number }>('SELECT version FROM schema_version')).version, SCHEMA_VERSION + 1);
    assert.equal((await raw.one<{ n: number }>('SELECT count(*)::int AS n FROM step_two')).n, 0);
    // Running the steps again changes nothing.
    assert.equal(await migrate(raw, [...POSTGRES_MIGRATIONS, step]), SCHEMA_VERSION + 1);

    const err = await rejectsWith(openPostgresStorage(options(db.name)), SchemaTooNewError);
    assert.equal(err.databaseVersion, SCHEMA_VERSION + 1);
    assert.equal(err.supportedVersion, SCHEMA_VERSION);
    assert.match(err.message, new RegExp(`${SCHEMA_VERSION + 1}.*${SCHEMA_VERSION}`));
  });

  it('fails fast with StorageUnavailableError when nothing listens, or the database is missing', async () => {
    const started = Date.now();
    const err = await rejectsWith(openPostgresStorage(options('postgres', { port: await closedPort() })), StorageUnavailableError);
    assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
    assert.match(err.message, /cannot connect to PostgreSQL/);
    await rejectsWith(openPostgresStorage(options('logkeep_no_such_database')), StorageUnavailableError);
  });

  it('bounds the connection attempt when the server never answers', async () => {
    // A listener that accepts and stays silent: the startup handshake never completes.
    const accepted: Socket[] = [];
    const silent = createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      await rejectsWith(
        openPostgresStorage(options('postgres', { port: (silent.address() as AddressInfo).port, connectTimeoutMs: 300 })),
        StorageUnavailableError,
      );
      assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
    } finally {
      for (const socket of accepted) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('sslMode require against the local server: works if it has TLS, else StorageUnavailableError (not a crash)', async () => {
    const db = await sharedDatabase();
    let storage: Storage;
    try {
      storage = await openPostgresStorage(options(db.name, { sslMode: 'require' }));
    } catch (err) {
      assert.ok(err instanceof StorageUnavailableError, String(err));
      assert.match(err.message, /SSL/i);
      return;
    }
    assert.equal(await storage.schemaVersion(), SCHEMA_VERSION);
    await storage.close();
  });

  it('sslMode require accepts an untrusted certificate; verify-full refuses it', async () => {
    const db = await sharedDatabase();
    const proxy = await startTlsProxy();
    try {
      const storage = await openPostgresStorage(options(db.name, { host: 'localhost', port: proxy.port, sslMode: 'require' }));
      try {
        // The proxy only speaks TLS to its clients: answering at all proves the handshake.
        assert.equal(await storage.schemaVersion(), SCHEMA_VERSION);
      } finally {
        await storage.close();
      }
      const err = await rejectsWith(
        openPostgresStorage(options(db.name, { host: 'localhost', port: proxy.port, sslMode: 'verify-full' })),
        StorageUnavailableError,
      );
      assert.match(err.message, /certificate/i);
    } finally {
      await proxy.close();
    }
  });

  it('verify-full accepts a trusted certificate for the right host name only', async () => {
    const db = await sharedDatabase();
    const proxy = await startTlsProxy();
    const dir = mkdtempSync(join(tmpdir(), 'logkeep-tls-'));
    try {
      const caFile = join(dir, 'ca.pem');
      writeFileSync(caFile, TEST_TLS_CERT);
      // Trust can only be extended at process start (NODE_EXTRA_CA_CERTS), hence a child process.
      const storageModule = fileURLToPath(new URL('../../lib/storage/postgres/postgres-storage.ts', import.meta.url));
      const script = `
        import { openPostgresStorage } from ${JSON.stringify(storageModule)};
        const base = ${JSON.stringify({ ...options(db.name), logger: undefined, port: proxy.port, sslMode: 'verify-full' })};
        const logger = { debug() {}, info() {}, warn() {}, error() {} };
        const results = {};
        for (const host of ['localhost', '127.0.0.1']) {
          try { const s = await openPostgresStorage({ ...base, host, logger }); results[host] = 'ok'; await s.close(); }
          catch (err) { results[host] = err.name + ': ' + err.message; }
        }
        console.log(JSON.stringify(results));`;
      // Asynchronous: the proxy runs on this process's event loop.
      const child = await runNode(['--import', 'tsx', '--input-type=module', '-e', script], { ...process.env, NODE_EXTRA_CA_CERTS: caFile });
      assert.equal(child.status, 0, child.stderr);
      const results = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, string>;
      assert.equal(results.localhost, 'ok');
      assert.match(results['127.0.0.1'] ?? '', /^StorageUnavailableError: .*(altnames|host|IP)/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await proxy.close();
    }
  });

  it('logs dropped idle connections and keeps working', async () => {
    const db = await sharedDatabase();
    const warnings: string[] = [];
    const logger: ServiceLogger = { ...silentLogger, warn: (msg) => void warnings.push(msg) };
    const storage = await openPostgresStorage(options(db.name, { logger }));
    try {
      // Two idle clients in the pool.
      await Promise.all([storage.countUsers(), storage.countUsers()]);
      const raw = rawConnection(db.name);
      const killed = await raw.any(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'logkeep' AND datname = $1`, [db.name]);
      assert.ok(killed.length > 0);
      for (let i = 0; i < 100 && warnings.length < killed.length; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(warnings.length, killed.length, 'each lost idle connection was logged');
      assert.equal(typeof (await storage.countUsers()), 'number');
    } finally {
      await storage.close();
    }
  });

  it('keeps a transaction usable after a StorageConflict, as SQLite does', async () => {
    const db = await sharedDatabase();
    const storage = await openPostgresStorage(options(db.name));
    try {
      const newUser = (username: string, isPrimaryAdmin = false) => ({
        username,
        passwordHash: 'h',
        displayName: null,
        email: null,
        mustChangePassword: false,
        isPrimaryAdmin,
        createdAt: 1,
      });
      const usersBefore = await storage.countUsers();
      const groupsBefore = (await storage.listGroups({ limit: 1000, visibility: { all: true } })).length;
      const caught = await storage.write(async (tx) => {
        // The shared database may already have its primary admin.
        const primary = (await tx.hasPrimaryAdmin()) ? [] : [newUser('the-primary', true)];
        for (const u of primary) await tx.insertUser(u);
        await tx.insertUser(newUser('conflict-a'));
        const conflicts: string[] = [];
        for (const attempt of [newUser('conflict-a'), newUser('conflict-b', true)]) {
          try {
            await tx.insertUser(attempt);
          } catch (err) {
            assert.ok(err instanceof StorageConflict);
            conflicts.push(err.constraint);
          }
        }
        await tx.insertGroup('after the conflict', 2);
        return { conflicts, inserted: primary.length + 1 };
      });
      assert.deepEqual(caught.conflicts, ['username', 'primary_admin']);
      assert.equal(await storage.countUsers(), usersBefore + caught.inserted);
      assert.equal((await storage.listGroups({ limit: 1000, visibility: { all: true } })).length, groupsBefore + 1);
    } finally {
      await storage.close();
    }
  });

  it('keeps quotes and backslashes in values literal even where standard_conforming_strings is off', async () => {
    const db = await sharedDatabase();
    const raw = rawConnection(db.name);
    await raw.none('ALTER DATABASE $1:name SET standard_conforming_strings = off', [db.name]);
    try {
      const storage = await openPostgresStorage(options(db.name));
      try {
        const tricky = `q\\'x'); DROP TABLE users; --\\`;
        const user = await storage.write((tx) =>
          tx.insertUser({
            username: `${tricky}${Date.now()}`,
            passwordHash: 'h',
            displayName: tricky,
            email: null,
            mustChangePassword: false,
            isPrimaryAdmin: false,
            createdAt: 1,
          }),
        );
        assert.equal(user.displayName, tricky);
        assert.equal((await storage.getUserByUsername(user.username))?.id, user.id);
        assert.equal(
          (await storage.listUsers({ limit: 5, usernameContains: "Q\\'X'" })).some((u) => u.id === user.id),
          true,
        );
      } finally {
        await storage.close();
      }
    } finally {
      await raw.none('ALTER DATABASE $1:name RESET standard_conforming_strings', [db.name]);
    }
  });

  it("reports each project's last id before the transaction, read once the project is locked (also across storages)", async () => {
    const db = await newDatabase();
    const first = await openPostgresStorage(options(db.name));
    const second = await openPostgresStorage(options(db.name));
    try {
      const group = await first.write((tx) => tx.insertGroup('g', 0));
      const newProject = (name: string) =>
        first.write((tx) => tx.insertProject({ groupId: group.id, name, retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: 0 }));
      const p = await newProject('p');
      const q = await newProject('q');
      const request = (projectId: number, n: number) =>
        encodeRequest(
          projectId,
          0,
          entriesFromValues(Array.from({ length: n }, (_, i) => ({ level: 'info', timestamp: '2025-01-01T00:00:00Z', event: `e ${i}` }))).entries,
        );
      const ids = (outcomes: { id?: number }[]) => outcomes.map((o) => o.id!);
      const ingest = async (storage: Storage, projectIds: number[]) => {
        const report: IngestReport = {};
        const outcomes = await storage.write((tx) =>
          tx.ingestLogs(
            projectIds.map((id) => request(id, 2)),
            report,
          ),
        );
        return { ids: outcomes.map((o) => ids(o as { id?: number }[])), report };
      };
      const none = await ingest(first, [p.id]);
      assert.deepEqual([...none.report.lastIdsBefore!], [[p.id, 0]], 'a project without entries: 0');
      const viaSecond = await ingest(second, [p.id, q.id]);
      assert.deepEqual(
        new Map(viaSecond.report.lastIdsBefore!),
        new Map([
          [p.id, none.ids[0]![1]],
          [q.id, 0],
        ]),
      );
      const viaFirst = await ingest(first, [q.id]);
      assert.deepEqual([...viaFirst.report.lastIdsBefore!], [[q.id, viaSecond.ids[1]![1]]], "the other storage's entries count");

      // A transaction that waited for another one's lock sees that one's entries.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let holding!: () => void;
      const holds = new Promise<void>((resolve) => (holding = resolve));
      const blocker = first.write(async (tx) => {
        const outcomes = await tx.ingestLogs([request(p.id, 3)]);
        holding();
        await held;
        return ids(outcomes[0] as { id?: number }[]);
      });
      await holds;
      const waiter = ingest(second, [p.id]);
      // The waiter is blocked on the project's row until the blocker commits.
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      const blockerIds = await blocker;
      const waited = await waiter;
      assert.deepEqual([...waited.report.lastIdsBefore!], [[p.id, blockerIds.at(-1)]]);
      assert.ok(waited.ids[0]![0]! > blockerIds.at(-1)!);
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('stores entry bodies as text and touches no process-wide pg state', async () => {
    const db = await sharedDatabase();
    const a = await openPostgresStorage(options(db.name));
    const b: Storage = await openPostgresStorage(options(db.name));
    try {
      const raw = rawConnection(db.name);
      const type = await raw.one<{ t: string }>(
        `SELECT data_type AS t FROM information_schema.columns WHERE table_name = 'log_entries' AND column_name = 'body'`,
      );
      assert.equal(type.t, 'text');
      // int8 is parsed per pool: pg's global parser still yields strings.
      assert.equal(rawPgp.pg.types.getTypeParser(20, 'text')('42'), '42');
      // Closing one storage leaves the other's pool alone.
      await a.close();
      assert.equal(typeof (await b.countUsers()), 'number');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
