/**
 * The binary's own log settings (the `--log-*` rows of the configuration
 * table): `--log-file` receives every line (JSON with `--log-format json`)
 * and none carries a secret the requests did; the file rotates by
 * `--log-max-file-bytes` keeping `--log-max-files` rotated files; the last
 * lines reach the file before a SIGTERM exit; an unwritable file exits 78.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBinBuilt, freePort, runBin, startBin, startServing, waitForHealthz, type RunningBin } from '../support/bin.js';

const JWT_SECRET = 'bin-logging-jwt-secret-0123456789abcdef0123';
const BOOTSTRAP_PASSWORD = 'Bootstrap-Secret-Pass-5151';
const workDir = mkdtempSync(join(tmpdir(), 'logkeep-bin-logging-'));

before(() => assertBinBuilt());
after(() => rmSync(workDir, { recursive: true, force: true }));

function newDir(name: string): string {
  const dir = join(workDir, name);
  return mkdtempSync(`${dir}-`);
}

async function startWithLogFile(dir: string, extra: string[]): Promise<{ bin: RunningBin; url: string }> {
  const port = await freePort();
  const bin = startBin(
    ['serve', '--http-host', '127.0.0.1', '--http-port', String(port), '--db-path', join(dir, 'db.sqlite'), '--log-file', join(dir, 'logkeep.log'), ...extra],
    { env: { SERVICE_JWT_SECRET: JWT_SECRET, SERVICE_BOOTSTRAP_ADMIN_PASSWORD: BOOTSTRAP_PASSWORD, SERVICE_RATE_LIMIT_ENABLED: 'false' } },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthz(url);
  } catch (err) {
    bin.kill();
    throw err;
  }
  return { bin, url };
}

async function form(url: string, path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

describe('logkeep --log-file', () => {
  it('writes JSON lines to the file, one per request, with no secret, and flushes them before exiting on SIGTERM', async () => {
    const dir = newDir('json');
    const { bin, url } = await startWithLogFile(dir, ['--log-format', 'json', '--log-level', 'debug']);
    const secrets = [BOOTSTRAP_PASSWORD, JWT_SECRET, 'Wrong-Guess-Secret-2727'];
    let requests = 0;
    try {
      const login = await form(url, '/v1/auth/token', { grant_type: 'password', username: 'admin', password: BOOTSTRAP_PASSWORD });
      requests += 1;
      assert.equal(login.status, 200);
      const tokens = (await login.json()) as { access_token: string; refresh_token: string };
      secrets.push(tokens.access_token, tokens.refresh_token, tokens.access_token.split('.')[2]!);
      const me = await fetch(`${url}/v1/users/me?secret_in_query=${encodeURIComponent(BOOTSTRAP_PASSWORD)}`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      requests += 1;
      await me.arrayBuffer();
      const wrong = await form(url, '/v1/auth/token', { grant_type: 'password', username: 'admin', password: 'Wrong-Guess-Secret-2727' });
      requests += 1;
      assert.equal(wrong.status, 400);
      const refreshed = await form(url, '/v1/auth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      requests += 1;
      assert.equal(refreshed.status, 200);
      const again = (await refreshed.json()) as { access_token: string; refresh_token: string };
      secrets.push(again.access_token, again.refresh_token);
    } finally {
      bin.child.kill('SIGTERM');
    }
    const result = await bin.exited(20_000);
    assert.equal(result.code, 0, result.stderr);

    const text = readFileSync(join(dir, 'logkeep.log'), 'utf8');
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: string; msg: string; path?: string });
    // The healthz polls before the first request also count as requests.
    const requestLines = lines.filter((l) => l.msg === 'request');
    assert.ok(requestLines.length >= requests, `${requestLines.length} request lines for at least ${requests} requests`);
    assert.equal(requestLines.filter((l) => l.path !== '/healthz').length, requests);
    assert.ok(requestLines.every((l) => l.level === 'info' && !String(l.path).includes('?')));
    assert.ok(lines.some((l) => /listening on/.test(l.msg)));
    assert.equal(lines.at(-1)?.msg, 'logkeep stopped', 'the last line reached the file before exit');
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `the log file contains a secret (${secret.slice(0, 10)}…)`);
      assert.ok(!result.stdout.includes(secret) && !result.stderr.includes(secret), `the console shows a secret (${secret.slice(0, 10)}…)`);
    }
    assert.ok(!text.includes('Bearer'), 'no Authorization header value');
    assert.ok(!/ INFO: request/.test(result.stdout), 'request lines go to the file, not the console');
  });

  it('rotates the file by --log-max-file-bytes and keeps --log-max-files rotated files', async () => {
    const dir = newDir('rotate');
    const { bin, url } = await startWithLogFile(dir, ['--log-max-file-bytes', '2000', '--log-max-files', '2']);
    try {
      for (let i = 0; i < 80; i++) await (await fetch(`${url}/healthz`)).arrayBuffer();
    } finally {
      bin.child.kill('SIGTERM');
    }
    const result = await bin.exited(20_000);
    assert.equal(result.code, 0, result.stderr);
    const logs = readdirSync(dir)
      .filter((n) => n.startsWith('logkeep.log'))
      .sort();
    assert.deepEqual(logs, ['logkeep.log', 'logkeep.log.1', 'logkeep.log.2'], result.stderr);
    for (const name of ['logkeep.log.1', 'logkeep.log.2']) {
      const lines = readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean);
      assert.ok(lines.length > 5, `${name} holds ${lines.length} lines`);
      // Console format in the file: one readable line per record.
      const odd = lines.filter((l) => !/^\[\d{4}-\d\d-\d\dT[\d:.]+Z\] (INFO|WARN|DEBUG|ERROR): /.test(l));
      assert.deepEqual(odd, [], `${name}: lines that are not one record each`);
    }
  });

  it('exits 78 when the log file cannot be written, before opening the database', async () => {
    const dir = newDir('unwritable');
    const result = await runBin(['--db-path', join(dir, 'db.sqlite'), '--log-file', join(dir, 'no-such-dir', 'logkeep.log')], {
      env: { SERVICE_JWT_SECRET: JWT_SECRET },
    });
    assert.equal(result.code, 78, result.stderr);
    assert.match(result.stderr, /--log-file: cannot write the log file/);
    assert.ok(!existsSync(join(dir, 'db.sqlite')), 'the database was not created');
  });
});

describe('logkeep on the console', () => {
  it('logs one line per request on stdout by default, unlike the library embedded without a logger', async () => {
    const dir = newDir('console');
    const { bin, url } = await startServing(['--db-path', join(dir, 'db.sqlite')], {
      SERVICE_JWT_SECRET: JWT_SECRET,
      SERVICE_BOOTSTRAP_ADMIN_PASSWORD: BOOTSTRAP_PASSWORD,
    });
    try {
      await (await fetch(`${url}/no-such-route`)).arrayBuffer();
      await bin.waitForOutput(/ INFO: request\b.*\/no-such-route/);
    } finally {
      bin.child.kill('SIGTERM');
    }
    const result = await bin.exited(20_000);
    assert.equal(result.code, 0, result.stderr);
    const line = result.stdout.split('\n').find((l) => l.includes('/no-such-route'));
    assert.match(line ?? '', /^\[\d{4}-\d\d-\d\dT[\d:.]+Z\] INFO: request \{.*"status":404\b/);
  });
});
