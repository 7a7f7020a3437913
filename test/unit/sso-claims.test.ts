/**
 * Single sign-on's pure pieces: the groups claim read within its bounds,
 * the admin claim in both spellings, and the provider's answers read with
 * a size ceiling.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { groupsOf, holdsAdminClaim, OIDC_GROUP_MAX_CHARS, OIDC_MAX_GROUPS } from '../../lib/admin/sso-sign-in.js';
import { boundedFetch, OIDC_MAX_RESPONSE_BYTES } from '../../lib/auth/oidc-client.js';

describe('the groups claim', () => {
  it('reads a list, a single name, or nothing', () => {
    assert.deepEqual(groupsOf({ groups: ['a', 'b', 'a'] }, 'groups'), ['a', 'b']);
    assert.deepEqual(groupsOf({ roles: 'ops' }, 'roles'), ['ops']);
    assert.deepEqual(groupsOf({}, 'groups'), []);
  });
  it('refuses what is not a list of names within the bounds', () => {
    assert.equal(groupsOf({ groups: { a: 1 } }, 'groups'), null);
    assert.equal(groupsOf({ groups: ['a', 3] }, 'groups'), null);
    assert.equal(groupsOf({ groups: ['x'.repeat(OIDC_GROUP_MAX_CHARS + 1)] }, 'groups'), null);
    assert.equal(groupsOf({ groups: Array.from({ length: OIDC_MAX_GROUPS + 1 }, (_, i) => `g${i}`) }, 'groups'), null);
    assert.equal(groupsOf({ groups: ['a\u0000b'] }, 'groups'), null);
  });
});

describe('the admin claim', () => {
  it('is a provider group, or claim=value', () => {
    assert.equal(holdsAdminClaim({}, ['admins'], 'admins'), true);
    assert.equal(holdsAdminClaim({}, ['users'], 'admins'), false);
    assert.equal(holdsAdminClaim({ role: 'logkeep-admin' }, [], 'role=logkeep-admin'), true);
    assert.equal(holdsAdminClaim({ roles: ['a', 'logkeep-admin'] }, [], 'roles=logkeep-admin'), true);
    assert.equal(holdsAdminClaim({ role: 'user' }, [], 'role=logkeep-admin'), false);
    assert.equal(holdsAdminClaim({}, ['admins'], null), false);
  });
});

describe("reading the provider's answers", () => {
  it('reads an answer up to the ceiling and refuses a larger one', async () => {
    const server = createServer((req, res) => {
      const size = req.url === '/big' ? OIDC_MAX_RESPONSE_BYTES + 1 : 1024;
      res.setHeader('content-type', 'application/json');
      res.end(Buffer.alloc(size, 0x20));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const small = await boundedFetch(`${base}/small`, { method: 'GET', headers: {}, body: undefined, redirect: 'manual' } as never);
      assert.equal((await small.arrayBuffer()).byteLength, 1024);
      await assert.rejects(boundedFetch(`${base}/big`, { method: 'GET', headers: {}, body: undefined, redirect: 'manual' } as never), /larger than/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
