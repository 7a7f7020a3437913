/**
 * The client commands of the built `logkeep` program, run as processes
 * against a real service (cli-{sign-in,data,tail}-{file,server}.test.ts): `login` (a 0600 file, profiles,
 * a password sign-in kept as a rotating refresh token), `query` (table,
 * NDJSON, JSON, paging, errors in words with their exit codes), `ingest`
 * (NDJSON, JSON arrays and standard input, in batches, every rejection named
 * by its line), `export` (gzip, resumable by cursor) and `tail`, which
 * prints every stored entry exactly once, in order, at 2,000 entries/s
 * across 200 dropped connections and two restarts of the service.
 */
import { after, before, it as test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describeEachBackend, newTestDatabase, type BackendName, type TestDatabase } from '../support/backends.js';
import { ADMIN_PASSWORD, TEST_JWT_SECRET, TEST_SCRYPT_LOG_N, api } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject, signInAdmin, type TestActor } from '../support/actors.js';
import { freePort, runBin, startBin, type BinResult } from '../support/bin.js';
import { createLogService, type LogService } from '../../lib/index.js';
import { silentLogger } from '../../lib/core/logger.js';

const EXIT = { ok: 0, usage: 2, unauthorized: 3, forbidden: 4, notFound: 5, partial: 6 };
const entry = (event: string, extra: Record<string, unknown> = {}) => ({ level: 'info', event, timestamp: '2026-01-01T00:00:00Z', ...extra });

/** A service on a fixed port that can be stopped and started again on the same database (for `tail`). */
class RestartableService {
  private server: Server | null = null;
  private service: LogService | null = null;
  url = '';
  constructor(
    private readonly database: TestDatabase,
    private readonly port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }
  async start(): Promise<void> {
    this.service = await createLogService(
      { ...this.database.config, jwtSecret: TEST_JWT_SECRET, bootstrapAdminPassword: ADMIN_PASSWORD, rateLimitEnabled: false, sseHeartbeatIntervalSeconds: 1 },
      { logger: silentLogger, passwordHashLogN: TEST_SCRYPT_LOG_N },
    );
    const server = createServer(this.service.handler);
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }
  /** Cuts every open connection, as a network failure would; the service keeps running. */
  dropConnections(): void {
    this.server?.closeAllConnections();
  }
  /** A graceful stop: streams end with `server_shutdown`, then the port closes. */
  async stop(): Promise<void> {
    const server = this.server!;
    this.service!.beginShutdown();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await this.service!.close();
    this.server = null;
  }
}

/** POST a JSON body on a new connection (no keep-alive pool); resolves with the status. */
function postOnFreshConnection(target: string, token: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

type CliPart = 'sign-in' | 'data' | 'tail';

/**
 * The suite on one backend, in three parts: `sign-in` (login, query, errors),
 * `data` (ingest, export) and `tail`, a file each, so each stays within the
 * runner's time per file however busy the machine (every case starts the
 * program as a process). The `data` part runs on LOGKEEP_URL/LOGKEEP_KEY.
 */
export function cliSuite(only: BackendName, part: CliPart): void {
  describeEachBackend(`logkeep client commands, ${part}`, (backend) => cliCases(backend, part), [only]);
}

function cliCases(backend: BackendName, part: CliPart): void {
  /** A case of this file's part only. */
  const it = (name: string, part_: CliPart, fn: () => Promise<void>) => (part_ === part ? test(name, fn) : undefined);
  let database: TestDatabase;
  let svc: RestartableService;
  let url: string;
  let dir: string;
  let admin: TestActor;
  let owner: TestActor;
  let groupG: number;
  let projectA: number;
  let projectC: number;
  /** read, tail and ingest on G, for `owner`. */
  let key: string;
  let configFile: string;

  const newAccessKey = async (token: string, scope: Record<string, unknown>) => {
    const res = await api(url, 'POST', '/v1/access-keys', {
      token,
      json: { label: 'cli', expires_at: new Date(Date.now() + 86_400_000).toISOString(), scope },
    });
    assertStatus(res, 201);
    return res.body.secret as string;
  };
  /** Runs the bin with the test's config file and no LOGKEEP_* from outside. */
  const cli = (args: string[], options: { env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {}): Promise<BinResult> =>
    runBin(args, {
      env: {
        LOGKEEP_CONFIG: configFile,
        LOGKEEP_URL: part === 'data' ? url : undefined,
        LOGKEEP_KEY: part === 'data' ? key : undefined,
        LOGKEEP_PROFILE: undefined,
        NO_COLOR: '1',
        ...options.env,
      },
      ...(options.input === undefined ? {} : { input: options.input }),
      timeoutMs: options.timeoutMs ?? 60_000,
    });
  const ingestDirect = async (projectKey: string, entries: unknown[]) => {
    const res = await api(url, 'POST', '/v1/logs', { token: projectKey, json: entries });
    assertStatus(res, 202);
  };

  before(async () => {
    database = await newTestDatabase(backend);
    svc = new RestartableService(database, await freePort());
    await svc.start();
    url = svc.url;
    dir = mkdtempSync(join(tmpdir(), 'logkeep-cli-'));
    configFile = join(dir, 'config', 'logkeep.json');
    admin = await signInAdmin(url);
    groupG = await createGroup(url, admin.token, 'G');
    projectA = await createProject(url, admin.token, groupG, 'A');
    const otherGroup = await createGroup(url, admin.token, 'H');
    projectC = await createProject(url, admin.token, otherGroup, 'C');
    owner = await createActor(url, admin.token, `cli-owner-${backend}`, { grants: [{ role: 'owner', scope_type: 'group', scope_id: groupG }] });
    key = await newAccessKey(owner.token, { permissions: ['read', 'tail', 'ingest'], group_ids: [groupG] });
    const secret = (await createKey(url, admin.token, projectA)).secret;
    await ingestDirect(
      secret,
      Array.from({ length: 260 }, (_, i) => entry(`seed ${i}`, { level: i % 10 === 0 ? 'error' : 'info', request_id: `r${i}` })),
    );
  });
  after(async () => {
    await svc.stop().catch(() => undefined);
    await database.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('login stores the URL and key in a file created 0600, per profile', 'sign-in', async () => {
    const stored = await cli(['login', '--url', url, '--key-stdin'], { input: `${key}\n` });
    assert.equal(stored.code, EXIT.ok, stored.stderr);
    assert.equal(statSync(configFile).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'config')).mode & 0o777, 0o700);
    const other = await cli(['login', '--url', `${url}/`, '--key', key, '--profile', 'second']);
    assert.equal(other.code, EXIT.ok, other.stderr);
    assert.deepEqual(JSON.parse(readFileSync(configFile, 'utf8')), { profiles: { default: { url, key }, second: { url, key } } });

    const bad = await cli(['login', '--url', url, '--key', 'not-a-key']);
    assert.equal(bad.code, EXIT.usage);
    assert.match(bad.stderr, /lka_/);
    const missing = await cli(['query', '--project', String(projectA), '--profile', 'nobody']);
    assert.equal(missing.code, EXIT.unauthorized);
    assert.match(missing.stderr, /logkeep login/);
  });

  it('query prints a table, NDJSON or JSON, pages past 200 and names the cursor to continue', 'sign-in', async () => {
    const table = await cli(['query', '--project', String(projectA), '--level', 'error', '--limit', '5']);
    assert.equal(table.code, EXIT.ok, table.stderr);
    assert.match(table.stdout, /seed 250/);
    assert.match(table.stdout, /ERROR/);
    assert.ok(!table.stdout.includes('\u001b['), 'no colour codes with NO_COLOR or off a terminal');
    assert.match(table.stderr, /continue with --cursor \S+/);

    const ndjson = await cli(['query', '--project', String(projectA), '--ndjson', '--limit', '250']);
    assert.equal(ndjson.code, EXIT.ok, ndjson.stderr);
    const lines = ndjson.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 250, 'two pages');
    assert.deepEqual(
      lines.slice(0, 2).map((e) => e.event),
      ['seed 259', 'seed 258'],
    );
    assert.ok(
      lines.every((e, i) => i === 0 || e.id < lines[i - 1].id),
      'newest first',
    );

    const json = await cli(['query', '--project', String(projectA), '--json', '--limit', '3', '--request-id', 'r7']);
    const body = JSON.parse(json.stdout);
    assert.deepEqual([body.items.length, body.items[0].event, body.next_cursor], [1, 'seed 7', null]);

    const rest = await cli([
      'query',
      '--project',
      String(projectA),
      '--ndjson',
      '--limit',
      '100',
      '--cursor',
      /--cursor (\S+)/.exec(table.stderr)![1]!,
      '--level',
      'error',
    ]);
    assert.equal(rest.stdout.trim().split('\n').length, 21, 'the cursor continues the same query');
  });

  it('says errors in words with the HTTP code, and exits with the documented code', 'sign-in', async () => {
    const forbidden = await cli(['query', '--project', String(projectC)]);
    assert.equal(forbidden.code, EXIT.forbidden);
    assert.match(forbidden.stderr, /HTTP 403 forbidden: No role of yours covers this project\./);
    const notFound = await cli(['query', '--project', '999999']);
    assert.equal(notFound.code, EXIT.notFound);
    assert.match(notFound.stderr, /HTTP 404 not_found/);
    const invalid = await cli(['query', '--project', String(projectA), '--level', 'loud']);
    assert.equal(invalid.code, 7);
    assert.match(invalid.stderr, /HTTP 400 invalid_request: level must be one of .* \(field: level\)/);
    const usage = await cli(['query', '--project', '1', '--group', '2']);
    assert.equal(usage.code, EXIT.usage);
    const unknownFlag = await cli(['query', '--colour']);
    assert.equal(unknownFlag.code, EXIT.usage);
    const revoked = await cli(['query', '--project', String(projectA)], { env: { LOGKEEP_URL: url, LOGKEEP_KEY: `lka_${'x'.repeat(43)}` } });
    assert.equal(revoked.code, EXIT.unauthorized);
    assert.match(revoked.stderr, /HTTP 401 unauthorized/);
    const unreachable = await cli(['query', '--project', '1'], { env: { LOGKEEP_URL: 'http://127.0.0.1:1', LOGKEEP_KEY: key } });
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /cannot reach http:\/\/127\.0\.0\.1:1/);
  });

  it('login with a password keeps a rotating refresh token, never the password', 'sign-in', async () => {
    const res = await cli(['login', '--url', url, '--username', owner.username, '--password-stdin', '--profile', 'person'], { input: `${owner.password}\n` });
    assert.equal(res.code, EXIT.ok, res.stderr);
    const first = JSON.parse(readFileSync(configFile, 'utf8')).profiles.person;
    assert.ok(typeof first.refreshToken === 'string' && first.key === undefined);
    assert.ok(!readFileSync(configFile, 'utf8').includes(owner.password));
    const query = await cli(['query', '--project', String(projectA), '--limit', '1', '--ndjson', '--profile', 'person']);
    assert.equal(query.code, EXIT.ok, query.stderr);
    assert.notEqual(JSON.parse(readFileSync(configFile, 'utf8')).profiles.person.refreshToken, first.refreshToken, 'rotated and stored');
    const wrong = await cli(['login', '--url', url, '--username', owner.username, '--password-stdin', '--profile', 'x'], { input: 'wrong-password\n' });
    assert.equal(wrong.code, EXIT.unauthorized);
    assert.match(wrong.stderr, /invalid_grant/);
  });

  it('ingest sends NDJSON, JSON arrays and standard input in batches, naming every rejection by its line', 'data', async () => {
    const projectB = await createProject(url, admin.token, groupG, `ingest-${backend}`);
    const ndjsonFile = join(dir, 'entries.ndjson');
    const many = Array.from({ length: 2500 }, (_, i) => JSON.stringify(entry(`bulk ${i}`)));
    writeFileSync(
      ndjsonFile,
      [...many.slice(0, 10), 'not json', JSON.stringify({ level: 'loud', event: 'x', timestamp: '2026-01-01T00:00:00Z' }), '', ...many.slice(10)].join('\n'),
    );
    const res = await cli(['ingest', '--project', String(projectB), ndjsonFile]);
    assert.equal(res.code, EXIT.partial, res.stderr);
    assert.match(res.stdout, /^accepted 2500, rejected 2$/m);
    assert.match(res.stderr, new RegExp(`${ndjsonFile.replace(/[.]/g, '\\.')}:11: validation_error: the line is not JSON`));
    assert.match(res.stderr, new RegExp(`${ndjsonFile.replace(/[.]/g, '\\.')}:12: validation_error: `));

    const arrayFile = join(dir, 'entries.json');
    writeFileSync(arrayFile, JSON.stringify([entry('from an array'), entry('again')]));
    const fromArray = await cli(['ingest', '-p', String(projectB), arrayFile]);
    assert.equal(fromArray.code, EXIT.ok, fromArray.stderr);
    assert.match(fromArray.stdout, /^accepted 2, rejected 0$/m);
    const fromStdin = await cli(['ingest', '-p', String(projectB)], { input: `${JSON.stringify(entry('from stdin'))}\n` });
    assert.equal(fromStdin.code, EXIT.ok, fromStdin.stderr);

    const count = await cli(['query', '--project', String(projectB), '--ndjson', '--limit', '5000']);
    assert.equal(count.stdout.trim().split('\n').length, 2503);
    const refused = await cli(['ingest', '-p', String(projectC)], { input: `${JSON.stringify(entry('x'))}\n` });
    assert.equal(refused.code, EXIT.forbidden);
    assert.match(refused.stderr, /HTTP 403 forbidden/);
  });

  it('export writes every entry as NDJSON (gzip on request) and resumes from a printed cursor', 'data', async () => {
    const file = join(dir, 'export.ndjson.gz');
    const res = await cli(['export', '--project', String(projectA), '--gzip', '--output', file]);
    assert.equal(res.code, EXIT.ok, res.stderr);
    assert.match(res.stderr, /exported 260 entries/);
    const lines = gunzipSync(readFileSync(file))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((e) => e.event),
      Array.from({ length: 260 }, (_, i) => `seed ${259 - i}`),
    );

    const first = await cli(['query', '--project', String(projectA), '--ndjson', '--limit', '60']);
    const cursor = /--cursor (\S+)/.exec(first.stderr)![1]!;
    const resumed = await cli(['export', '--project', String(projectA), '--cursor', cursor]);
    const rest = resumed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      rest.map((e) => e.event),
      Array.from({ length: 200 }, (_, i) => `seed ${199 - i}`),
    );
  });

  it('tail prints every stored entry exactly once, in order, at 2,000 entries/s across 200 dropped connections and two restarts', 'tail', async () => {
    const projectT = await createProject(url, admin.token, groupG, `tail-${backend}`);
    const secret = (await createKey(url, admin.token, projectT)).secret;
    // From the project's first entry on (`--since-id 0`), so nothing depends on when the stream opens.
    const tail = startBin(['tail', '--project', String(projectT), '--since-id', '0', '--ndjson'], {
      env: { LOGKEEP_CONFIG: configFile, LOGKEEP_URL: url, LOGKEEP_KEY: key, LOGKEEP_PROFILE: undefined },
      timeoutMs: 110_000,
    });
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Complete lines only: the last one may still be arriving.
    const printedIds = () => {
      const out = tail.stdout();
      return out
        .slice(0, out.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => (JSON.parse(l) as { id: number }).id);
    };
    const waitUntil = async (ready: () => boolean, what: string) => {
      const deadline = Date.now() + 30_000;
      while (!ready()) {
        if (Date.now() > deadline) throw new Error(`${what}: tail printed ${printedIds().length}\n${tail.stderr()}`);
        await sleep(10);
      }
    };
    try {
      // 100 entries every 50 ms, each batch on a connection of its own; a batch whose answer a cut or a
      // restart lost is sent again, as any client would, so the stored entries (read back below) are the reference.
      let ingesting = true;
      let restarting: Promise<void> | null = null;
      let batch = 0;
      const ingestion = (async () => {
        const started = Date.now();
        while (ingesting) {
          await restarting;
          const entries = Array.from({ length: 100 }, (_, i) => entry(`live ${batch}.${i}`));
          const status = await postOnFreshConnection(`${url}/v1/logs`, secret, entries).catch(() => 0);
          if (status !== 202) {
            await sleep(20);
            continue;
          }
          batch++;
          await sleep(Math.max(0, started + batch * 50 - Date.now()));
        }
      })();
      for (let drop = 0; drop < 200; drop++) {
        // Each cut falls on a stream that is delivering: something new was printed since the last one.
        const seen = printedIds().length;
        await waitUntil(() => printedIds().length > seen, `after ${drop} cuts`);
        svc.dropConnections();
        if (drop === 66 || drop === 133) {
          restarting = (async () => {
            await svc.stop();
            await svc.start();
          })();
          await restarting;
          restarting = null;
        }
      }
      ingesting = false;
      await ingestion;
      const readStored = async (): Promise<number[]> => {
        const ids: number[] = [];
        let cursor: string | null = null;
        do {
          const res = await api(url, 'GET', `/v1/logs?project_id=${projectT}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
            token: admin.token,
          });
          assertStatus(res, 200);
          for (const item of res.body.items as { id: number }[]) ids.push(item.id);
          cursor = res.body.next_cursor as string | null;
        } while (cursor);
        return ids.sort((a, b) => a - b);
      };
      // A batch whose connection was cut may still be committing (its client gave up and sent it again):
      // the stored entries are those of two reads half a second apart that agree.
      let stored = await readStored();
      for (let i = 0; i < 20; i++) {
        await sleep(500);
        const again = await readStored();
        if (again.length === stored.length) break;
        stored = again;
      }
      assert.ok(stored.length >= 10_000, `the cuts spanned a real flow of entries (${stored.length})`);
      await waitUntil(() => printedIds().length >= stored.length, 'catching up');
      assert.deepEqual(printedIds(), stored, 'each stored entry exactly once, in order');
    } finally {
      tail.kill();
    }
  });
}
