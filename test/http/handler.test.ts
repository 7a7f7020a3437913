/**
 * The handler's own rules, with a test route table over a real socket:
 * body limits enforced while reading (413), both envelopes, path ids,
 * `no-store` routes, project keys checked before the route runs, internals
 * never leaking from a 500, and the base path for embedding.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { boolean, object, string } from 'superstruct';
import { createHandler } from '../../lib/http/handler.js';
import { route, type Route } from '../../lib/http/route.js';
import { getHealthz } from '../../lib/http/site-handlers.js';
import { LogServiceError } from '../../lib/core/errors.js';
import { normalizeConfig } from '../../lib/core/config.js';
import { silentLogger } from '../../lib/core/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { Storage } from '../../lib/storage/storage.js';
import { createCursorCodec } from '../../lib/core/pagination.js';
import { createAccessTokenService } from '../../lib/auth/access-tokens.js';
import type { ServiceDeps } from '../../lib/http/service-deps.js';
import { newTestDatabase, type TestDatabase } from '../support/backends.js';
import { api } from '../support/service.js';

/** How many times the project-key route's own function ran. */
let keyedCalls = 0;

const routes: Route[] = [
  route({ method: 'GET', path: '/healthz', auth: 'none', handle: getHealthz }),
  route({ method: 'GET', path: '/files/*', auth: 'none', handle: async (ctx) => ({ status: 200, body: { path: ctx.path, base: ctx.basePath } }) }),
  {
    method: 'POST',
    path: '/v1/private',
    auth: 'none',
    envelope: 'general',
    noStore: true,
    async handle(ctx) {
      const body = await ctx.json(object({ fail: boolean() }));
      if (body.fail) throw new LogServiceError('invalid_request', 'Asked to fail.');
      return { status: 200, body: {} };
    },
  },
  {
    method: 'POST',
    path: '/v1/keyed',
    auth: 'project-key',
    envelope: 'general',
    async handle(ctx) {
      keyedCalls++;
      return { status: 202, body: { project_id: ctx.key.projectId } };
    },
  },
  {
    method: 'POST',
    path: '/v1/echo',
    auth: 'none',
    envelope: 'general',
    async handle(ctx) {
      const body = await ctx.json(object({ name: string() }));
      return { status: 201, body };
    },
  },
  {
    method: 'POST',
    path: '/v1/big',
    auth: 'none',
    envelope: 'general',
    bodyLimit: 'ingest',
    async handle(ctx) {
      const body = await ctx.rawJson();
      return { status: 202, body: { length: Array.isArray(body) ? body.length : -1 } };
    },
  },
  {
    method: 'POST',
    path: '/v1/oauth',
    auth: 'none',
    envelope: 'oauth',
    async handle(ctx) {
      const form = await ctx.form();
      if (!form.get('grant_type')) throw new LogServiceError('invalid_request', 'grant_type is required');
      throw new LogServiceError('too_many_requests', 'Retry in 7 seconds.', { headers: { 'Retry-After': '7' } });
    },
  },
  {
    method: 'GET',
    path: '/v1/things/:thingId',
    auth: 'none',
    envelope: 'general',
    async handle(ctx) {
      return { status: 200, body: { id: ctx.params.thingId } };
    },
  },
  {
    method: 'GET',
    path: '/v1/crash',
    auth: 'none',
    envelope: 'general',
    async handle() {
      throw new Error('SELECT secret FROM internals -- at /srv/app/lib/x.ts:12');
    },
  },
];

/** A GET with the request target exactly as given (fetch would normalise it first). */
function rawGet(baseUrl: string, target: string): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: target, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('request handler', () => {
  let server: Server;
  let url: string;
  let storage: Storage;
  let db: TestDatabase;
  let prefixed: Server;
  let prefixedUrl: string;

  before(async () => {
    db = await newTestDatabase('file');
    storage = await openStorage(db.config, { logger: silentLogger });
    const config = normalizeConfig({ ...db.config, jwtSecret: 'x'.repeat(40), maxIngestBodyBytes: 4096 });
    const deps: ServiceDeps = {
      config,
      storage,
      cursors: createCursorCodec(config.jwtSecret),
      accessTokens: createAccessTokenService(config.jwtSecret, config.jwtIssuer),
      logger: silentLogger,
      now: Date.now,
    } as ServiceDeps;
    server = createServer(createHandler(deps, routes));
    prefixed = createServer(createHandler(deps, routes, { basePath: '/logs/' }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => prefixed.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    prefixedUrl = `http://127.0.0.1:${(prefixed.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    prefixed.closeAllConnections();
    await new Promise((r) => server.close(r));
    await new Promise((r) => prefixed.close(r));
    await storage.close();
    await db.cleanup();
  });

  it('parses JSON whatever the content type and validates it into {field, reason}', async () => {
    const ok = await api(url, 'POST', '/v1/echo', { raw: '{"name":"a","extra":1}', headers: { 'content-type': 'text/plain' } });
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.body, { name: 'a' });
    const missing = await api(url, 'POST', '/v1/echo', { json: {} });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.details, { field: 'name', reason: 'required' });
    const wrongType = await api(url, 'POST', '/v1/echo', { json: { name: 5 } });
    assert.deepEqual(wrongType.body.details, { field: 'name', reason: 'invalid' });
    for (const raw of ['{', '[1,2]', '"text"', '']) {
      const res = await api(url, 'POST', '/v1/echo', { raw });
      assert.equal(res.status, 400, raw);
      assert.equal(res.body.error, 'invalid_request', raw);
    }
  });

  it('answers 413 payload_too_large for a JSON body over 1 MiB, declared or streamed', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    const res = await api(url, 'POST', '/v1/echo', { raw: big });
    assert.equal(res.status, 413);
    assert.equal(res.body.error, 'payload_too_large');
    // Chunked (no Content-Length): the limit is enforced while reading.
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(100_000)));
        controller.close();
      },
    });
    const chunked = await fetch(`${url}/v1/echo`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal(((await chunked.json()) as { error: string }).error, 'payload_too_large');
    const exact = await api(url, 'POST', '/v1/echo', { raw: JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 20) }) });
    assert.equal(exact.status, 201);
  });

  it('uses the configured ingestion limit on routes that ask for it', async () => {
    const small = await api(url, 'POST', '/v1/big', { raw: JSON.stringify(new Array(100).fill(1)) });
    assert.equal(small.status, 202);
    const large = await api(url, 'POST', '/v1/big', { raw: JSON.stringify(new Array(3000).fill(1)) });
    assert.equal(large.status, 413);
  });

  it('writes RFC 6749 bodies on oauth routes, but 429 in the general envelope with Retry-After', async () => {
    const bad = await api(url, 'POST', '/v1/oauth', { form: {} });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'invalid_request', error_description: 'grant_type is required' });
    const limited = await api(url, 'POST', '/v1/oauth', { form: { grant_type: 'password' } });
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { error: 'too_many_requests', message: 'Retry in 7 seconds.' });
    assert.equal(limited.headers.get('retry-after'), '7');
  });

  it('marks every response of a no-store route, errors included, and only of that route', async () => {
    const answers = [
      await api(url, 'POST', '/v1/private', { json: { fail: false } }),
      await api(url, 'POST', '/v1/private', { json: { fail: true } }),
      await api(url, 'POST', '/v1/private', { raw: JSON.stringify({ fail: 'x'.repeat(1024 * 1024) }) }),
    ];
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 400, 413],
    );
    for (const res of answers) {
      assert.equal(res.headers.get('cache-control'), 'no-store', String(res.status));
      assert.equal(res.headers.get('pragma'), 'no-cache', String(res.status));
    }
    const plain = await api(url, 'POST', '/v1/echo', { json: { name: 'a' } });
    assert.equal(plain.headers.get('cache-control'), null);
  });

  it('answers 401 on a project-key route without a known key, before the route runs', async () => {
    const bearers = [undefined, 'Bearer', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x', 'Bearer slk_not-a-real-key', 'Basic slk_abc'];
    for (const authorization of bearers) {
      const res = await api(url, 'POST', '/v1/keyed', { raw: '[]', headers: authorization === undefined ? {} : { authorization } });
      assert.equal(res.status, 401, authorization);
      assert.equal(res.body.error, 'unauthorized', authorization);
    }
    assert.equal(keyedCalls, 0);
  });

  it('answers 400 for a path id that is not a positive integer', async () => {
    assert.deepEqual((await api(url, 'GET', '/v1/things/42')).body, { id: 42 });
    for (const id of ['0', '-1', 'abc', '1.5', '01', '99999999999999999999']) {
      const res = await api(url, 'GET', `/v1/things/${id}`);
      assert.equal(res.status, 400, id);
      assert.deepEqual(res.body.details, { field: 'thingId', reason: 'invalid' });
    }
  });

  it('hides internals behind 500 internal_error', async () => {
    const res = await api(url, 'GET', '/v1/crash');
    assert.equal(res.status, 500);
    assert.equal(res.body.error, 'internal_error');
    assert.doesNotMatch(res.text, /SELECT|internals|\.ts|at /);
  });

  it('reads a target starting with / as a path, never a host, and answers 400 (not 500) for a target that is no URL', async () => {
    assert.deepEqual((await rawGet(url, '/v1/things/7')).body, { id: 7 });
    // Absolute form, which proxies may send, is still served.
    assert.deepEqual((await rawGet(url, 'http://localhost/v1/things/7')).body, { id: 7 });
    for (const target of ['//evil.example/v1/things/7', '/\\evil.example/v1/things/7', '//x:99999/v1/things/7', '//[/v1/things/7', '//%zz/v1/things/7', '//']) {
      const res = await rawGet(url, target);
      assert.equal(res.status, 404, target);
      assert.equal(res.body.error, 'not_found', target);
    }
    for (const target of ['http://x:99999/v1/things/7', 'http://[::1/v1/things/7']) {
      const res = await rawGet(url, target);
      assert.equal(res.status, 400, target);
      assert.equal(res.body.error, 'invalid_request', target);
    }
  });

  it('serves every route under a base path when embedded', async () => {
    assert.equal((await api(prefixedUrl, 'GET', '/logs/healthz')).status, 200);
    assert.deepEqual((await api(prefixedUrl, 'GET', '/logs/v1/things/7')).body, { id: 7 });
    assert.equal((await api(prefixedUrl, 'GET', '/v1/things/7')).status, 404);
    assert.equal((await api(prefixedUrl, 'GET', '/logsv1/things/7')).status, 404);
  });

  it('matches a path ending in /* with any rest, and hands the route the path without the base path', async () => {
    assert.deepEqual((await api(prefixedUrl, 'GET', '/logs/files')).body, { path: '/files', base: '/logs' });
    assert.deepEqual((await api(prefixedUrl, 'GET', '/logs/files/a/b.js')).body, { path: '/files/a/b.js', base: '/logs' });
    assert.deepEqual((await api(url, 'GET', '/files/')).body, { path: '/files/', base: '' });
    assert.equal((await api(url, 'GET', '/filesx')).status, 404);
    assert.equal((await api(url, 'POST', '/files/a')).status, 404);
  });
});
