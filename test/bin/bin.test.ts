/**
 * The `logkeep` binary as a process:
 * exit 78 for every configuration problem before anything is touched,
 * `--print-config`, `--help`, `create-admin`, and real starts on an SQLite
 * file and on PostgreSQL that answer /healthz and stop cleanly on a signal.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import { openStorage } from '../../lib/storage/open-storage.js';
import { SCHEMA_VERSION } from '../../lib/storage/storage.js';
import { CONFIG_DEFAULTS, type DatabaseConfig } from '../../lib/core/config.js';
import { SETTINGS } from '../../lib/config-sources.js';
import { getRequest, rawConnect } from '../support/raw-http.js';
import { silentLogger } from '../../lib/core/logger.js';
import { PG, createThrowawayDatabase, endPostgresAdmin, postgresSkipReason, type ThrowawayDatabase } from '../support/postgres.js';
import { assertBinBuilt, runBin, startServing, type BinResult } from '../support/bin.js';

const JWT_SECRET = 'bin-test-jwt-secret-0123456789abcdef0123456789';
const JWT_ENV = { SERVICE_JWT_SECRET: JWT_SECRET };
const EXIT_CONFIG = 78;
/** The generated-password block both `serve` and `create-admin` print. */
const GENERATED_PASSWORD = /TEMPORARY password[^\n]*\n\n {4}(\S+)\n/;

const workDir = mkdtempSync(join(tmpdir(), 'logkeep-bin-test-'));
let dbCounter = 0;
/** A path for a database file that does not exist yet. */
function newDbPath(): string {
  dbCounter += 1;
  return join(workDir, `db-${dbCounter}.db`);
}

const skipPostgres = (await postgresSkipReason()) ?? false;

before(() => assertBinBuilt());
after(() => {
  rmSync(workDir, { recursive: true, force: true });
  endPostgresAdmin();
});

function assertConfigExit(result: BinResult, ...patterns: RegExp[]): void {
  assert.equal(result.code, EXIT_CONFIG, `expected exit ${EXIT_CONFIG}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  for (const pattern of patterns) assert.match(result.stderr, pattern);
}

/** Counts the non-overlapping occurrences of `needle` in `text`. */
function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** `--print-config` output as name → [value, source]. */
function printedRows(stdout: string): Map<string, string[]> {
  return new Map(
    stdout
      .trim()
      .split('\n')
      .map((line) => {
        const [name, ...rest] = line.trim().split(/\s{2,}/);
        return [name as string, rest];
      }),
  );
}

async function login(baseUrl: string, username: string, password: string): Promise<Response> {
  return fetch(`${baseUrl}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
}

async function assertHealthy(url: string): Promise<void> {
  const res = await fetch(`${url}/healthz`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'ok' });
}

describe('configuration problems exit 78 before any port or database is touched', () => {
  it('a missing JWT secret, and no database file is created', async () => {
    const dbPath = newDbPath();
    const result = await runBin(['--db-path', dbPath]);
    assertConfigExit(result, /SERVICE_JWT_SECRET .*is required/);
    assert.ok(!existsSync(dbPath), 'the database file was not created');
  });

  it('a missing --db-path', async () => {
    assertConfigExit(await runBin([], { env: JWT_ENV }), /--db-path is required when --db-backend is file/);
  });

  it('a bad boolean, from a flag or a variable', async () => {
    const dbPath = newDbPath();
    assertConfigExit(await runBin(['--db-path', dbPath, '--rate-limit-enabled=maybe'], { env: JWT_ENV }), /--rate-limit-enabled: 'maybe' is not a boolean/);
    assertConfigExit(
      await runBin(['--db-path', dbPath], { env: { ...JWT_ENV, SERVICE_BOOTSTRAP_ADMIN_ENABLED: 'on' } }),
      /SERVICE_BOOTSTRAP_ADMIN_ENABLED: 'on' is not a boolean/,
    );
    assert.ok(!existsSync(dbPath));
  });

  it('a bad integer', async () => {
    assertConfigExit(await runBin(['--db-path', newDbPath(), '--http-port', '80k'], { env: JWT_ENV }), /--http-port: '80k' is not a plain integer/);
  });

  it('an unknown flag', async () => {
    assertConfigExit(await runBin(['--db-path', newDbPath(), '--no-such-flag'], { env: JWT_ENV }), /unknown option --no-such-flag/);
  });

  it('a secret set both directly and as _FILE, without printing either value', async () => {
    const file = join(workDir, 'jwt-both');
    writeFileSync(file, 'the-file-secret-value\n');
    const result = await runBin(['--db-path', newDbPath()], { env: { ...JWT_ENV, SERVICE_JWT_SECRET_FILE: file } });
    assertConfigExit(result, /SERVICE_JWT_SECRET and SERVICE_JWT_SECRET_FILE are both set/);
    assert.ok(!(result.stdout + result.stderr).includes(JWT_SECRET));
    assert.ok(!(result.stdout + result.stderr).includes('the-file-secret-value'));
  });

  it('an unreadable _FILE names the variable', async () => {
    const result = await runBin(['--db-path', newDbPath()], { env: { SERVICE_JWT_SECRET_FILE: join(workDir, 'absent') } });
    assertConfigExit(result, /SERVICE_JWT_SECRET_FILE: cannot read the file/);
  });

  it('the server backend without its settings lists every missing one', async () => {
    const result = await runBin(['--db-backend', 'server'], { env: JWT_ENV });
    assertConfigExit(
      result,
      /--db-server-host is required/,
      /--db-server-database is required/,
      /--db-server-username is required/,
      /SERVICE_DB_SERVER_PASSWORD .*is required/,
    );
  });

  it('a short bootstrap password names the variable, never the value', async () => {
    const result = await runBin(['--db-path', newDbPath()], { env: { ...JWT_ENV, SERVICE_BOOTSTRAP_ADMIN_PASSWORD: 'Sh0rt!x' } });
    assertConfigExit(result, /SERVICE_BOOTSTRAP_ADMIN_PASSWORD must be at least 8 characters/);
    assert.ok(!(result.stdout + result.stderr).includes('Sh0rt!x'));
  });

  it('several problems are reported together', async () => {
    const result = await runBin(['--http-port', 'x', '--bogus'], {});
    assertConfigExit(result, /--http-port: 'x'/, /unknown option --bogus/, /SERVICE_JWT_SECRET/, /--db-path is required/);
  });

  it('an unknown SERVICE_ variable only warns', async () => {
    const result = await runBin(['--db-path', newDbPath(), '--print-config'], { env: { ...JWT_ENV, SERVICE_NOT_A_SETTING: '1' } });
    assert.equal(result.code, 0);
    assert.match(result.stderr, /unknown environment variable SERVICE_NOT_A_SETTING is ignored/);
  });

  it('an unreachable database server', async () => {
    const result = await runBin(
      [
        '--db-backend',
        'server',
        '--db-server-host',
        '127.0.0.1',
        '--db-server-port',
        '1',
        '--db-server-database',
        'logkeep',
        '--db-server-username',
        'logkeep',
        '--db-server-ssl-mode',
        'disable',
      ],
      { env: { ...JWT_ENV, SERVICE_DB_SERVER_PASSWORD: 'pw' } },
    );
    assertConfigExit(result, /cannot start/);
  });

  it('a database file that cannot be opened', async () => {
    const result = await runBin(['--db-path', join(workDir, 'no-such-dir', 'x.db')], { env: JWT_ENV });
    assertConfigExit(result, /cannot start/);
  });

  it('a database with a newer schema version names both versions', async () => {
    const dbPath = newDbPath();
    const database: DatabaseConfig = {
      dbBackend: 'file',
      dbPath,
      dbServerHost: null,
      dbServerPort: 5432,
      dbServerDatabase: null,
      dbServerUsername: null,
      dbServerPassword: null,
      dbServerPoolSize: 1,
      dbServerSslMode: 'disable',
      dbReadPoolSize: CONFIG_DEFAULTS.dbReadPoolSize,
    };
    await (await openStorage(database, { logger: silentLogger })).close();
    const db = await open({ filename: dbPath, driver: sqlite3.Database });
    await db.run('UPDATE schema_version SET version = ?', [999]);
    await db.close();
    const result = await runBin(['--db-path', dbPath], { env: JWT_ENV });
    assertConfigExit(result, /999/, new RegExp(`\\(${SCHEMA_VERSION}\\)`));
  });
});

describe('--print-config and --help', () => {
  it('prints every setting with its value and source, secrets as ***, and exits 0 without starting', async () => {
    const dbPath = newDbPath();
    const secretFile = join(workDir, 'jwt-file');
    writeFileSync(secretFile, `${JWT_SECRET}\n`);
    const result = await runBin(['--print-config', '--db-path', dbPath, '--http-port', '9002'], {
      env: {
        SERVICE_JWT_SECRET_FILE: secretFile,
        SERVICE_HTTP_PORT: '9001',
        SERVICE_HTTP_HOST: '127.0.0.2',
        SERVICE_BOOTSTRAP_ADMIN_PASSWORD: 'bootstrap-password-value',
      },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!existsSync(dbPath), 'nothing was started');
    assert.ok(!result.stdout.includes(JWT_SECRET) && !result.stdout.includes('bootstrap-password-value'));
    const rows = printedRows(result.stdout);
    assert.equal(rows.size, SETTINGS.length);
    // Flag over environment over default.
    assert.deepEqual(rows.get('--http-port'), ['9002', 'cli']);
    assert.deepEqual(rows.get('--http-host'), ['127.0.0.2', 'env (SERVICE_HTTP_HOST)']);
    assert.deepEqual(rows.get('--db-server-port'), ['5432', 'default']);
    assert.deepEqual(rows.get('--db-path'), [dbPath, 'cli']);
    assert.deepEqual(rows.get('SERVICE_JWT_SECRET'), ['***', 'env (SERVICE_JWT_SECRET_FILE)']);
    assert.deepEqual(rows.get('SERVICE_BOOTSTRAP_ADMIN_PASSWORD'), ['***', 'env (SERVICE_BOOTSTRAP_ADMIN_PASSWORD)']);
    assert.deepEqual(rows.get('SERVICE_DB_SERVER_PASSWORD'), ['unset', 'default']);
  });

  it('--help lists the commands, every option and the secrets, and exits 0', async () => {
    const result = await runBin(['--help']);
    assert.equal(result.code, 0);
    for (const text of ['create-admin', '--http-port', '--no-rate-limit-enabled', '--print-config', 'SERVICE_JWT_SECRET', 'SERVICE_HTTP_PORT']) {
      assert.ok(result.stdout.includes(text), `--help mentions ${text}`);
    }
    const createAdmin = await runBin(['create-admin', '--help']);
    assert.equal(createAdmin.code, 0);
    assert.match(createAdmin.stdout, /--username/);
    assert.doesNotMatch(createAdmin.stdout, /--http-host|--jwt-issuer|--print-config/);
    const version = await runBin(['--version']);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^logkeep \d+\.\d+\.\d+/);
  });
});

describe('serve and create-admin on an SQLite file', () => {
  const dbPath = newDbPath();
  let bootstrapPassword = '';
  let alicePassword = '';

  it('starts, prints the generated admin password once, answers /healthz, and exits 0 on SIGTERM', async () => {
    const { bin, url } = await startServing(['--db-path', dbPath], JWT_ENV);
    try {
      await assertHealthy(url);
      const output = bin.stdout() + bin.stderr();
      const match = output.match(GENERATED_PASSWORD);
      assert.ok(match, `a generated password is printed:\n${output}`);
      bootstrapPassword = match[1] as string;
      assert.equal(occurrences(output, bootstrapPassword), 1, 'the password is printed exactly once');
      assert.match(output, /first administrator 'admin'/);
      const res = await login(url, 'admin', bootstrapPassword);
      assert.equal(res.status, 200, "the printed password is the administrator's");
      bin.child.kill('SIGTERM');
      const result = await bin.exited();
      assert.equal(result.code, 0, result.stderr);
      assert.equal(occurrences(result.stdout + result.stderr, bootstrapPassword), 1);
    } finally {
      bin.kill();
    }
  });

  it('serves with the configured header limit and connection cap', async () => {
    const { bin, url } = await startServing(['--db-path', newDbPath(), '--http-max-header-bytes', '2048'], { ...JWT_ENV, SERVICE_HTTP_MAX_CONNECTIONS: '1' });
    try {
      const conn = await rawConnect(url);
      conn.write(getRequest('/healthz', { 'X-Pad': 'a'.repeat(3000) }));
      await conn.waitClosed(10_000);
      assert.match(conn.received(), /^HTTP\/1\.1 431 /);
      // The one slot is free again once the server has seen that close.
      let held = await rawConnect(url);
      for (let attempt = 0; ; attempt++) {
        held.write(getRequest('/healthz'));
        try {
          await held.waitFor((t) => t.includes('{"status":"ok"}'), 10_000, 'the health answer');
          break;
        } catch (err) {
          if (attempt >= 20) throw err;
          held = await rawConnect(url);
        }
      }
      const refused = await rawConnect(url);
      await refused.waitClosed(10_000);
      assert.equal(refused.receivedBytes(), 0);
      held.destroy();
    } finally {
      bin.kill();
    }
  });

  it('create-admin works without the JWT secret and prints a generated password once', async () => {
    const result = await runBin(['create-admin', '--username', 'alice', '--db-path', dbPath]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Created administrator 'alice'/);
    const match = result.stdout.match(GENERATED_PASSWORD);
    assert.ok(match, result.stdout);
    alicePassword = match[1] as string;
    assert.equal(occurrences(result.stdout + result.stderr, alicePassword), 1);
  });

  it('create-admin with a taken username exits 1 with a message', async () => {
    const result = await runBin(['create-admin', '--username', 'alice', '--password', 'another-password', '--db-path', dbPath]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /alice.*taken/);
  });

  it('create-admin keeps number-like --username and --password exactly as typed', async () => {
    const result = await runBin(['create-admin', '--username', '007', '--password', '00123456', '--db-path', dbPath]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Created administrator '007'/);
    assert.doesNotMatch(result.stdout, /TEMPORARY password/);
  });

  it('create-admin reports configuration problems with exit 78', async () => {
    assertConfigExit(await runBin(['create-admin', '--db-path', dbPath]), /--username is required/);
    assertConfigExit(await runBin(['create-admin', '--username', 'bob']), /--db-path is required/);
  });

  it('restarts without printing a password, the created administrators log in, and SIGINT exits 0', async () => {
    const { bin, url } = await startServing(['--db-path', dbPath], JWT_ENV);
    try {
      await assertHealthy(url);
      assert.doesNotMatch(bin.stdout() + bin.stderr(), /TEMPORARY password/);
      assert.equal((await login(url, 'alice', alicePassword)).status, 200);
      assert.equal((await login(url, '007', '00123456')).status, 200);
      assert.equal((await login(url, 'admin', bootstrapPassword)).status, 200);
      bin.child.kill('SIGINT');
      const result = await bin.exited();
      assert.equal(result.code, 0, result.stderr);
    } finally {
      bin.kill();
    }
  });
});

describe('serve and create-admin on PostgreSQL', { skip: skipPostgres }, () => {
  let database: ThrowawayDatabase | null = null;
  let env: Record<string, string> = {};
  let args: string[] = [];

  before(async () => {
    database = await createThrowawayDatabase();
    const jwtFile = join(workDir, 'pg-jwt');
    const passwordFile = join(workDir, 'pg-password');
    const bootstrapFile = join(workDir, 'pg-bootstrap');
    writeFileSync(jwtFile, `${JWT_SECRET}\n`);
    writeFileSync(passwordFile, `${PG.password}\r\n`);
    writeFileSync(bootstrapFile, 'configured-admin-pw\n');
    env = {
      SERVICE_JWT_SECRET_FILE: jwtFile,
      SERVICE_DB_SERVER_PASSWORD_FILE: passwordFile,
      SERVICE_BOOTSTRAP_ADMIN_PASSWORD_FILE: bootstrapFile,
    };
    args = [
      '--db-backend',
      'server',
      '--db-server-host',
      PG.host,
      '--db-server-port',
      String(PG.port),
      '--db-server-database',
      database.name,
      '--db-server-username',
      PG.user,
      '--db-server-ssl-mode',
      'disable',
    ];
  });

  after(async () => {
    await database?.drop();
  });

  it('starts with _FILE secrets, answers /healthz, uses the configured bootstrap password, and exits 0 on SIGTERM', async () => {
    const { bin, url } = await startServing(args, env);
    try {
      await assertHealthy(url);
      assert.doesNotMatch(bin.stdout() + bin.stderr(), /TEMPORARY password/);
      assert.ok(!(bin.stdout() + bin.stderr()).includes('configured-admin-pw'));
      assert.equal((await login(url, 'admin', 'configured-admin-pw')).status, 200, 'one trailing newline was stripped from the file');
      bin.child.kill('SIGTERM');
      const result = await bin.exited();
      assert.equal(result.code, 0, result.stderr);
    } finally {
      bin.kill();
    }
  });

  it('create-admin needs only the database settings', async () => {
    const result = await runBin(['create-admin', '--username', 'carol', '--password', 'carol-password', ...args], {
      env: { SERVICE_DB_SERVER_PASSWORD_FILE: env.SERVICE_DB_SERVER_PASSWORD_FILE },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Created administrator 'carol'/);
  });
});
