import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { clientIp } from '../../lib/core/client-ip.js';
import { createRouter } from '../../lib/http/router.js';
import type { Route } from '../../lib/http/route.js';

function fakeReq(remote: string, xff?: string): IncomingMessage {
  return { socket: { remoteAddress: remote }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } } as unknown as IncomingMessage;
}

describe('client address', () => {
  it('uses the socket address unless trusted hops are configured', () => {
    assert.equal(clientIp(fakeReq('10.0.0.1', '1.2.3.4'), 0), '10.0.0.1');
  });
  it('takes the N-th address from the right of X-Forwarded-For', () => {
    assert.equal(clientIp(fakeReq('10.0.0.1', '1.1.1.1, 2.2.2.2, 3.3.3.3'), 1), '3.3.3.3');
    assert.equal(clientIp(fakeReq('10.0.0.1', '1.1.1.1, 2.2.2.2, 3.3.3.3'), 2), '2.2.2.2');
  });
  it('falls back to the socket address when the header has fewer hops', () => {
    assert.equal(clientIp(fakeReq('10.0.0.1', '1.1.1.1'), 2), '10.0.0.1');
    assert.equal(clientIp(fakeReq('10.0.0.1'), 1), '10.0.0.1');
  });
});

describe('router', () => {
  const route = (method: Route['method'], path: string): Route => ({ method, path, auth: 'none', envelope: 'general', handle: async () => ({ status: 200 }) });
  const router = createRouter([
    route('GET', '/v1/users'),
    route('DELETE', '/v1/users/me'),
    route('DELETE', '/v1/users/:id'),
    route('GET', '/v1/teams/:teamId/members'),
  ]);

  it('matches literal segments before parameters in table order', () => {
    const me = router.match('DELETE', '/v1/users/me');
    assert.equal(me.kind === 'found' && me.route.path, '/v1/users/me');
    const id = router.match('DELETE', '/v1/users/12');
    assert.ok(id.kind === 'found');
    assert.deepEqual(id.rawParams, { id: '12' });
  });
  it('does not match other methods, extra segments or empty parameters', () => {
    assert.equal(router.match('POST', '/v1/users').kind, 'none');
    assert.equal(router.match('GET', '/v1/users/').kind, 'none');
    assert.equal(router.match('GET', '/v1/teams//members').kind, 'none');
    assert.equal(router.match('GET', '/v1/teams/1/members/2').kind, 'none');
  });
});
