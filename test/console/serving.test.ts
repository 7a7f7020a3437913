/**
 * How the web console is served: security headers on every answer, cache
 * lifetimes, the redirects, the off switch, a base path, and that no
 * request path (`..`, encoded or not) reaches a file outside the bundle.
 * The bundle is the one `npm run build` wrote to dist/console.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { request } from 'node:http';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function assertSecurityHeaders(res: Response, what: string): void {
  assert.equal(res.headers.get('content-security-policy'), CSP, what);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer', what);
}

/** A GET sent exactly as written (fetch would normalise the dots away), body not decoded. */
function rawGet(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/`, { path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const get = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init });

describeEachBackend('console serving', (backend) => {
  let svc: RunningService;
  let off: RunningService;
  let mounted: RunningService;
  before(async () => {
    svc = await startService(backend);
    off = await startService(backend, { settings: { consoleEnabled: false } });
    mounted = await startService(backend, { basePath: '/logs' });
  });
  after(async () => {
    await svc.stop({ dropDatabase: true });
    await off.stop({ dropDatabase: true });
    await mounted.stop({ dropDatabase: true });
  });

  it('serves index.html no-cache and hashed bundles immutable, all with the security headers', async () => {
    const html = await get(`${svc.url}/console/`);
    assert.equal(html.status, 200);
    assert.equal(html.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(html.headers.get('cache-control'), 'no-cache');
    assertSecurityHeaders(html, 'index');
    const text = await html.text();
    // No inline script or style: only references to the hashed files.
    assert.doesNotMatch(text, /<script>|<style|style=/);
    const js = /src="(app-[A-Z0-9]+\.js)"/.exec(text)?.[1];
    const css = /href="(app-[A-Z0-9]+\.css)"/.exec(text)?.[1];
    assert.ok(js && css, text);
    for (const [name, type] of [
      [js, 'text/javascript; charset=utf-8'],
      [css, 'text/css; charset=utf-8'],
    ] as const) {
      const res = await get(`${svc.url}/console/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(res.headers.get('content-type'), type);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assertSecurityHeaders(res, name);
      assert.ok((await res.arrayBuffer()).byteLength > 0);
    }
    // Asked for gzip, the same bytes come compressed.
    const zipped = await rawGet(svc.url, `/console/${js}`, { 'Accept-Encoding': 'gzip' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    const plain = await rawGet(svc.url, `/console/${js}`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(gunzipSync(zipped.body), plain.body);
  });

  it('redirects / and /console to /console/, and 404s unknown or escaping paths with the headers', async () => {
    for (const [path, status] of [
      ['/', 302],
      ['/console', 308],
    ] as const) {
      const res = await get(`${svc.url}${path}`);
      assert.equal(res.status, status, path);
      assert.equal(res.headers.get('location'), '/console/', path);
      assertSecurityHeaders(res, path);
    }
    const escapes = [
      '/console/nope.js',
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/..%2fpackage.json',
      '/console/..%2F..%2Fpackage.json',
      '/console/%2e%2e%2fpackage.json',
      '/console/..%5cpackage.json',
      '/console/dist/console/index.html',
      '/console/index.html/',
      '/console//etc/passwd',
    ];
    for (const path of escapes) {
      const res = await get(`${svc.url}${path}`);
      assert.equal(res.status, 404, path);
      const body = (await res.json()) as { error: string };
      assert.equal(body.error, 'not_found', path);
    }
    // Sent raw (fetch would normalise the dots away), the answer is the same.
    for (const path of ['/console/../package.json', '/console/./../../package.json', '/console/%2e%2e/%2e%2e/package.json', '/console/..\\package.json']) {
      const raw = await rawGet(svc.url, path);
      assert.equal(raw.status, 404, path);
      assert.doesNotMatch(raw.body.toString('utf8'), /"name":\s*"logkeep"/, path);
    }
    const post = await get(`${svc.url}/console/`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 404);
    assertSecurityHeaders(post, 'POST');
    // Nothing else outside /v1 is served, and /v1 and /healthz are unchanged.
    for (const path of ['/index.html', '/consoles/', '/app.js']) assert.equal((await get(`${svc.url}${path}`)).status, 404, path);
    const health = await get(`${svc.url}/healthz`);
    assert.deepEqual(await health.json(), { status: 'ok' });
    assert.equal(health.headers.get('content-security-policy'), null);
  });

  it('is switched off by consoleEnabled: false', async () => {
    for (const path of ['/', '/console', '/console/', '/console/index.html']) {
      const res = await get(`${off.url}${path}`);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('content-security-policy'), null, path);
    }
    assert.equal((await get(`${off.url}/healthz`)).status, 200);
  });

  it('lives under the base path when mounted', async () => {
    const html = await get(`${mounted.url}/logs/console/`);
    assert.equal(html.status, 200);
    assertSecurityHeaders(html, 'mounted index');
    for (const [path, location] of [
      ['/logs/console', '/logs/console/'],
      ['/logs/', '/logs/console/'],
      ['/logs', '/logs/console/'],
    ] as const) {
      const res = await get(`${mounted.url}${path}`);
      assert.equal(res.headers.get('location'), location, path);
    }
    for (const path of ['/console/', '/', '/logsconsole/']) assert.equal((await get(`${mounted.url}${path}`)).status, 404, path);
  });
});
