/**
 * The compiled binary serves Prometheus metrics with `--metrics-enabled`,
 * the token read from `SERVICE_METRICS_TOKEN_FILE`, and 404 without the
 * flag. Needs `npm run build` first.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServing } from '../support/bin.js';
import { parseScrape } from '../support/prometheus.js';

const JWT_ENV = { SERVICE_JWT_SECRET: 'bin-metrics-jwt-secret-0123456789abcdef0123' };
const workDir = mkdtempSync(join(tmpdir(), 'logkeep-bin-metrics-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

describe('the binary and /metrics', () => {
  it('serves the metrics with --metrics-enabled, behind the token from its _FILE variable', async () => {
    const tokenFile = join(workDir, 'metrics-token');
    writeFileSync(tokenFile, 'bin-scrape-token\n');
    const { bin, url } = await startServing(['--db-path', join(workDir, 'on.db'), '--metrics-enabled'], { ...JWT_ENV, SERVICE_METRICS_TOKEN_FILE: tokenFile });
    try {
      assert.equal((await fetch(`${url}/metrics`)).status, 401);
      const res = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer bin-scrape-token' } });
      assert.equal(res.status, 200);
      const scrape = parseScrape(await res.text());
      assert.ok(scrape.types.has('process_resident_memory_bytes'));
      assert.equal(scrape.value('logkeep_live_streams_open'), 0);
      assert.equal(scrape.value('logkeep_db_connections_open'), 3, 'the writer and the two default readers');
      bin.child.kill('SIGTERM');
      assert.equal((await bin.exited()).code, 0);
    } finally {
      bin.kill();
    }
  });

  it('answers 404 without the flag', async () => {
    const { bin, url } = await startServing(['--db-path', join(workDir, 'off.db')], JWT_ENV);
    try {
      const res = await fetch(`${url}/metrics`);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { error: string }).error, 'not_found');
    } finally {
      bin.kill();
    }
  });
});
