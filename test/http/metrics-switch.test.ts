/**
 * Whether `GET /metrics` is served, on both backends: off by default (404
 * exactly like a path no route serves), and when embedded under a base
 * path, served there and nowhere else, with each service's numbers its own.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { api, startService } from '../support/service.js';
import { assertStatus } from '../support/actors.js';
import { parseScrape } from '../support/prometheus.js';

const TOKEN = 'metrics-token-0123456789';

describeEachBackend('GET /metrics on and off', (backend: BackendName) => {
  it('is off by default: 404 exactly like a path no route serves', async () => {
    const off = await startService(backend);
    try {
      const metrics = await api(off.url, 'GET', '/metrics', { token: TOKEN });
      const unknown = await api(off.url, 'GET', '/no-such-path');
      assertStatus(metrics, 404, 'not_found');
      assert.deepEqual(metrics.body, unknown.body);
    } finally {
      await off.stop({ dropDatabase: true });
    }
  });

  it('serves under the base path when embedded, and two services in one process count apart', async () => {
    const mounted = await startService(backend, { settings: { metricsEnabled: true }, basePath: '/logs' });
    const plain = await startService(backend, { settings: { metricsEnabled: true } });
    try {
      assertStatus(await api(plain.url, 'GET', '/no-such-path'), 404, 'not_found');
      // No token configured: anyone may read.
      const res = await fetch(`${mounted.url}/logs/metrics`);
      assert.equal(res.status, 200);
      const s = parseScrape(await res.text());
      assert.equal(s.sum('logkeep_http_requests_total', { route: 'unmatched' }), 0, "the other service's request is not counted here");
      assert.equal((await fetch(`${mounted.url}/metrics`)).status, 404);
      const other = parseScrape(await (await fetch(`${plain.url}/metrics`)).text());
      assert.equal(other.sum('logkeep_http_requests_total', { route: 'unmatched', status: '404' }), 1);
    } finally {
      await mounted.stop({ dropDatabase: true });
      await plain.stop({ dropDatabase: true });
    }
  });
});
