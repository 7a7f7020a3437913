/**
 * Embedded without a logger, the library stays quiet: a request prints
 * nothing on the host's console, and a warning is one line on stderr. A
 * logger passed in receives every line, the request line at `info` included.
 * The embedding runs in a child process, so its real console is what is read.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TEST_SCRYPT_LOG_N } from '../support/service.js';

const workDir = mkdtempSync(join(tmpdir(), 'logkeep-embedded-logging-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

const LONG_SECRET = 'embedded-logging-secret-0123456789abcdef';

/**
 * An application embedding logkeep: one /healthz and one unknown route,
 * then a clean stop. With a logger, it prints what its logger received at
 * `info` as one JSON line, after the service has stopped.
 */
const EMBEDDER = `
import { createServer } from 'node:http';
import { createLogService } from 'logkeep';
const [dbPath, jwtSecret, logN, withLogger] = process.argv.slice(1);
const received = [];
const logger = { debug() {}, info: (msg, fields) => received.push({ msg, ...fields }), warn() {}, error() {} };
const logs = await createLogService({ dbPath, jwtSecret }, { passwordHashLogN: Number(logN), ...(withLogger === 'yes' ? { logger } : {}) });
const server = createServer(logs.handler);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = 'http://127.0.0.1:' + server.address().port;
for (const path of ['/healthz', '/no-such-route']) await (await fetch(base + path)).arrayBuffer();
await new Promise((resolve) => server.close(resolve));
await logs.close();
if (withLogger === 'yes') console.log(JSON.stringify(received));
`;

function embed(name: string, jwtSecret: string, withLogger: boolean): { stdout: string; stderr: string } {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', EMBEDDER, join(workDir, `${name}.db`), jwtSecret, String(TEST_SCRYPT_LOG_N), withLogger ? 'yes' : 'no'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(result.status, 0, `the embedding application failed:\n${result.stderr}`);
  return { stdout: result.stdout, stderr: result.stderr };
}

describe('the library embedded without a logger', () => {
  it('prints nothing for requests', () => {
    const { stdout, stderr } = embed('quiet', LONG_SECRET, false);
    assert.equal(stdout, '');
    assert.equal(stderr, '');
  });

  it('prints a warning as one line on stderr', () => {
    const { stdout, stderr } = embed('short-secret', 'short', false);
    assert.equal(stdout, '');
    assert.equal(stderr, 'logkeep: the JWT signing secret is shorter than 32 bytes; use a longer random value\n');
  });
});

describe('the library embedded with a logger', () => {
  it('gives it one request line per request at info', () => {
    const { stdout } = embed('with-logger', LONG_SECRET, true);
    const received = JSON.parse(stdout) as { msg: string; path?: string; status?: number }[];
    const requests = received.filter((line) => line.msg === 'request').map((line) => [line.path, line.status]);
    assert.deepEqual(requests, [
      ['/healthz', 200],
      ['/no-such-route', 404],
    ]);
  });
});
