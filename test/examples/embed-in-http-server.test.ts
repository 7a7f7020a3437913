/**
 * examples/embed-in-http-server.ts, run for real on a SQLite file: logkeep
 * answers under `/logs` only, the host's own routes keep working, and the
 * whole path (sign-in, key, ingestion with the client, query, live stream)
 * works through the prefix. Also run as its own process, as its header says.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { main, type EmbeddingApp } from '../../examples/embed-in-http-server.js';
import { IngestClient } from 'logkeep/client';
import { silentLogger } from '../../lib/core/logger.js';
import { newTestDatabase } from '../support/backends.js';
import { ADMIN_PASSWORD, TEST_JWT_SECRET, TEST_SCRYPT_LOG_N, api } from '../support/service.js';
import { createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { assertOpen, openRawStream } from '../support/sse.js';

describe('example: embed in an http server', () => {
  let app: EmbeddingApp;
  before(async () => {
    const database = await newTestDatabase('file');
    app = await main(
      { ...database.config, jwtSecret: TEST_JWT_SECRET, bootstrapAdminPassword: ADMIN_PASSWORD, rateLimitEnabled: false },
      { port: 0, service: { logger: silentLogger, passwordHashLogN: TEST_SCRYPT_LOG_N } },
    );
  });
  after(() => app.close());

  it("serves logkeep under /logs and the host's routes elsewhere", async () => {
    const home = await api(app.url, 'GET', '/');
    assert.deepEqual([home.status, home.body], [200, { app: 'hello', logs: '/logs' }]);
    const health = await api(app.url, 'GET', '/logs/healthz');
    assert.deepEqual([health.status, health.body], [200, { status: 'ok' }]);
    // Outside the prefix, logkeep's paths are the host's business.
    for (const path of ['/healthz', '/v1/logs', '/logsx/healthz']) {
      const res = await api(app.url, 'GET', path);
      assert.deepEqual([res.status, res.body], [404, { app: 'no such page' }], path);
    }
  });

  it('takes a newcomer from sign-in to a live stream of shipped entries, all under the prefix', async () => {
    const base = `${app.url}/logs`;
    const admin = await signInAdmin(base);
    const groupId = await createGroup(base, admin.token, 'embedded');
    const projectId = await createProject(base, admin.token, groupId, 'web');
    const { secret } = await createKey(base, admin.token, projectId);

    const stream = assertOpen(await openRawStream(base, `/v1/logs/stream?project_id=${projectId}`, { token: admin.token }));
    try {
      const client = new IngestClient({ url: base, secretKey: secret });
      await client.log({ level: 'info', event: 'hello from the host app', request_id: 'r-1' });
      await client.close();
      const [live] = await stream.waitForLogs(1);
      assert.equal(live.event, 'hello from the host app');
      const page = await api(base, 'GET', `/v1/logs?project_id=${projectId}&request_id=r-1`, { token: admin.token });
      assert.equal(page.status, 200);
      assert.deepEqual(
        page.body.items.map((e: { id: number }) => e.id),
        [live.id],
      );
    } finally {
      stream.close();
    }
  });

  it('runs as its own process: prints where it listens, serves, and stops on SIGTERM', async () => {
    const database = await newTestDatabase('file');
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/embed-in-http-server.ts', database.config.dbPath!], {
      env: { ...process.env, SERVICE_JWT_SECRET: TEST_JWT_SECRET, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 30_000;
      while (!/app on (\S+)\//.test(output)) {
        if (Date.now() > deadline) assert.fail(`no "app on" line: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.match(output, /first administrator 'admin', temporary password: \S{24}/);
      const url = /app on (\S+)\//.exec(output)![1]!;
      const health = await api(url, 'GET', '/logs/healthz');
      assert.equal(health.status, 200);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });
});
