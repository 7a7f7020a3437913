/**
 * The service's edges, on both backends over a real socket: health, routes
 * not served, CORS, the general envelope and credentials on user routes.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';

const ORIGIN = 'https://app.example.com';

describeEachBackend('smoke', (backend) => {
  let svc: RunningService;
  before(async () => {
    svc = await startService(backend, { settings: { corsAllowedOrigins: [ORIGIN, 'https://other.example.com'] } });
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('GET /healthz answers 200 {status: ok} without credentials', async () => {
    const res = await api(svc.url, 'GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('answers 404 not_found in the general envelope for routes it does not serve', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v2/logs'],
      ['PUT', '/v1/users'],
      ['POST', '/healthz'],
      ['POST', '/v1/auth/register'],
      ['POST', '/v1/auth/verify-email'],
      ['POST', '/v1/auth/verify-email/resend'],
      ['POST', '/v1/auth/password-reset'],
      ['POST', '/v1/auth/password-reset/confirm'],
    ] as const) {
      const res = await api(svc.url, method, path, method === 'GET' ? {} : { json: { username: 'x', password: 'y' } });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.error, 'not_found');
      assert.equal(typeof res.body.message, 'string');
      assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
    }
  });

  it('answers a CORS preflight from an allowed origin with 204 and the fixed headers, before authentication', async () => {
    const res = await api(svc.url, 'OPTIONS', '/v1/users', {
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-custom' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, POST, PATCH, DELETE, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-headers'), 'Authorization, Content-Type');
    assert.equal(res.headers.get('vary'), 'Origin');
  });

  it('adds Access-Control-Allow-Origin and Vary to every response for an allowed origin, errors included', async () => {
    const ok = await api(svc.url, 'GET', '/healthz', { headers: { origin: ORIGIN } });
    assert.equal(ok.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(ok.headers.get('vary'), 'Origin');
    assert.equal(ok.headers.get('access-control-allow-methods'), null);
    const missing = await api(svc.url, 'GET', '/v1/nothing', { headers: { origin: ORIGIN } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('access-control-allow-origin'), ORIGIN);
  });

  it('treats an origin that matches no configured value like no origin (exact, case-sensitive)', async () => {
    for (const origin of ['https://APP.example.com', 'https://evil.example.com', 'https://app.example.com/']) {
      const pre = await api(svc.url, 'OPTIONS', '/v1/users', { headers: { origin, 'access-control-request-method': 'GET' } });
      assert.equal(pre.headers.get('access-control-allow-origin'), null, origin);
      assert.notEqual(pre.status, 204, origin);
      const res = await api(svc.url, 'GET', '/healthz', { headers: { origin } });
      assert.equal(res.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(res.headers.get('vary'), null, origin);
    }
  });

  it('answers 401 unauthorized on a user route without a credential, with a project key, or with a bad token', async () => {
    for (const authorization of [undefined, 'Bearer slk_abcdef', 'Bearer not.a.jwt', 'Basic YWRtaW46eA==', 'Bearer']) {
      const res = await api(svc.url, 'GET', '/v1/users', { headers: authorization ? { authorization } : {} });
      assert.equal(res.status, 401, String(authorization));
      assert.deepEqual(res.body, { error: 'unauthorized', message: res.body.message });
    }
  });
});

describeEachBackend('smoke without CORS origins', (backend) => {
  let svc: RunningService;
  before(async () => {
    svc = await startService(backend);
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('sends no CORS headers at all when no origin is configured', async () => {
    const res = await api(svc.url, 'GET', '/healthz', { headers: { origin: ORIGIN } });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    const pre = await api(svc.url, 'OPTIONS', '/healthz', { headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } });
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    assert.equal(pre.status, 404);
  });
});
