/**
 * Rate limiting over HTTP on both backends: the
 * IP bucket on every request to the credential-sensitive routes, the subject
 * buckets (username; `user:<id>`), continuous refill, CORS preflights not
 * counted, one `auth.throttled` row per episode, the socket address unless a
 * proxy hop is trusted.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { ADMIN_NEW_PASSWORD, USER_PASSWORD, auditRows, openDatabase, passwordGrant, refresh, signInAdmin, type SignedIn } from '../support/identity.js';
import type { Storage } from '../../lib/storage/storage.js';

function assertRfcError(res: { status: number; body: any }, code: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error, code);
}

describeEachBackend('rate limiting', (backend) => {
  let svc: RunningService;
  let db: Storage;
  let admin: SignedIn;
  let clockOffset = 0;
  let nextIp = 1;
  /** A distinct caller address per call (trusted proxy hops = 1). */
  const freshIp = () => ({ 'x-forwarded-for': `203.0.113.${nextIp++}` });
  const ORIGIN = 'https://app.example.com';

  before(async () => {
    svc = await startService(backend, {
      settings: { rateLimitEnabled: true, rateLimitBucketCapacity: 3, trustedProxyHops: 1, corsAllowedOrigins: [ORIGIN] },
      now: () => Date.now() + clockOffset,
    });
    db = await openDatabase(svc);
    // Three rate-limited requests from the socket address: exactly its capacity.
    admin = await signInAdmin(svc);
  });
  after(async () => {
    await db.close();
    await svc.stop({ dropDatabase: true });
  });

  function assert429(res: { status: number; body: any; headers: Headers }): number {
    assert.equal(res.status, 429, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
    assert.equal(res.body.error, 'too_many_requests');
    const retryAfter = res.headers.get('retry-after');
    assert.match(retryAfter ?? '', /^[1-9][0-9]*$/);
    assert.ok(res.body.message.includes(retryAfter!));
    return Number(retryAfter);
  }

  it('spends an IP token on every request, malformed or not, and answers 429 with Retry-After when empty', async () => {
    const ip = freshIp();
    assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: {}, headers: ip }), 'unsupported_grant_type');
    assert.equal((await api(svc.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: 'x' }, headers: ip })).status, 200);
    assertRfcError(await refresh(svc, 'nope', ip), 'invalid_grant');
    const limited = await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD, ip);
    const wait = assert429(limited);
    assert.ok(wait >= 1 && wait <= 6, String(wait));
    assert.equal(limited.headers.get('cache-control'), 'no-store');
    // Other callers and other routes are unaffected.
    assert.equal((await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD, freshIp())).status, 200);
    assert.equal((await api(svc.url, 'GET', '/healthz', { headers: ip })).status, 200);
    assert.equal((await api(svc.url, 'GET', '/v1/users', { token: admin.access_token, headers: ip })).status, 200);
  });

  it('never counts CORS preflights', async () => {
    const ip = freshIp();
    for (let i = 0; i < 6; i++) {
      const pre = await api(svc.url, 'OPTIONS', '/v1/auth/token', { headers: { ...ip, origin: ORIGIN, 'access-control-request-method': 'POST' } });
      assert.equal(pre.status, 204);
    }
    for (let i = 0; i < 3; i++) assert.equal((await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD, ip)).status, 200);
    assert429(await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD, ip));
  });

  it('writes one auth.throttled row per episode, and refills continuously', async () => {
    const ip = freshIp();
    const before = (await auditRows(db, 'auth.throttled')).length;
    for (let i = 0; i < 3; i++) await refresh(svc, 'nope', ip);
    for (let i = 0; i < 4; i++) assert429(await refresh(svc, 'nope', ip));
    const rows = await auditRows(db, 'auth.throttled');
    assert.equal(rows.length, before + 1);
    assert.equal(rows[0]!.actorUserId, null);
    assert.equal(rows[0]!.targetType, 'auth');
    assert.equal(rows[0]!.targetId, null);
    assert.deepEqual(rows[0]!.metadata, { key_kind: 'ip', path: '/v1/auth/token', client_ip: ip['x-forwarded-for'] });
    // 10 per minute: after 6 s one token is back, but the bucket is not full, so the episode goes on.
    clockOffset += 6_100;
    assertRfcError(await refresh(svc, 'nope', ip), 'invalid_grant');
    assert429(await refresh(svc, 'nope', ip));
    assert.equal((await auditRows(db, 'auth.throttled')).length, before + 1);
    // A full minute later the bucket is full: the next refusal opens a new episode.
    clockOffset += 60_000;
    for (let i = 0; i < 3; i++) await refresh(svc, 'nope', ip);
    assert429(await refresh(svc, 'nope', ip));
    assert.equal((await auditRows(db, 'auth.throttled')).length, before + 2);
  });

  it('spends a subject token per failed login whatever the address, refuses even the right password when empty', async () => {
    const victim = await readyUserThrottled('victim');
    for (let i = 0; i < 3; i++) assertRfcError(await passwordGrant(svc, 'victim', 'wrong-password', freshIp()), 'invalid_grant');
    const throttledBefore = (await auditRows(db, 'auth.throttled')).length;
    const lastFailedBefore = (await auditRows(db, 'auth.login_failed'))[0]!.id;
    assert429(await passwordGrant(svc, 'victim', USER_PASSWORD, freshIp()));
    assert429(await passwordGrant(svc, 'victim', USER_PASSWORD, freshIp()));
    // Refused before processing: no login row, one throttled row naming the account as actor.
    assert.equal((await auditRows(db, 'auth.login_failed'))[0]!.id, lastFailedBefore);
    const throttled = await auditRows(db, 'auth.throttled');
    assert.equal(throttled.length, throttledBefore + 1);
    assert.equal(throttled[0]!.actorUserId, victim.id);
    assert.equal(throttled[0]!.metadata.key_kind, 'subject');
    // Another account is not affected.
    assert.equal((await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD, freshIp())).status, 200);
  });

  it('refills the subject bucket on success, and a malformed request spends only the IP token', async () => {
    await readyUserThrottled('lucky');
    for (let i = 0; i < 2; i++) assertRfcError(await passwordGrant(svc, 'lucky', 'wrong-password', freshIp()), 'invalid_grant');
    assert.equal((await passwordGrant(svc, 'lucky', USER_PASSWORD, freshIp())).status, 200);
    for (let i = 0; i < 3; i++) assertRfcError(await passwordGrant(svc, 'lucky', 'wrong-password', freshIp()), 'invalid_grant');
    assert429(await passwordGrant(svc, 'lucky', USER_PASSWORD, freshIp()));

    for (let i = 0; i < 5; i++) {
      assertRfcError(
        await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'ghost' }, headers: freshIp() }),
        'invalid_request',
      );
    }
    assertRfcError(await passwordGrant(svc, 'ghost', 'wrong-password', freshIp()), 'invalid_grant');
    // An unknown username is throttled too, with no actor.
    for (let i = 0; i < 2; i++) await passwordGrant(svc, 'ghost', 'wrong-password', freshIp());
    assert429(await passwordGrant(svc, 'ghost', 'wrong-password', freshIp()));
    const [row] = await auditRows(db, 'auth.throttled');
    assert.equal(row!.actorUserId, null);
    assert.ok(!JSON.stringify(row).includes('ghost'));
  });

  it("keys change-password and DELETE /v1/users/me on the caller's id", async () => {
    const user = await readyUserThrottled('self-service');
    const wrongChange = () =>
      api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: 'wrong-password', new_password: 'new-password-1' },
        headers: freshIp(),
      });
    assert.equal((await wrongChange()).status, 401);
    assert.equal((await wrongChange()).status, 401);
    // A rule violation never reaches the password: no subject token spent.
    for (let i = 0; i < 3; i++) {
      const bad = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: 'wrong-password', new_password: 'short' },
        headers: freshIp(),
      });
      assert.equal(bad.status, 400);
    }
    const wrongDelete = await api(svc.url, 'DELETE', '/v1/users/me', { token: user.access_token, json: { password: 'wrong-password' }, headers: freshIp() });
    assert.equal(wrongDelete.status, 401);
    assert429(await api(svc.url, 'DELETE', '/v1/users/me', { token: user.access_token, json: { password: USER_PASSWORD }, headers: freshIp() }));
    assert429(
      await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: USER_PASSWORD, new_password: 'new-password-1' },
        headers: freshIp(),
      }),
    );
    const [row] = await auditRows(db, 'auth.throttled');
    assert.equal(row!.actorUserId, user.id);
    assert.deepEqual(row!.metadata, { key_kind: 'subject', path: '/v1/users/me', client_ip: row!.metadata.client_ip });
  });

  it('uses the socket address when no proxy hop is trusted', async () => {
    const direct = await startService(backend, { settings: { rateLimitEnabled: true, rateLimitBucketCapacity: 2 } });
    try {
      for (let i = 0; i < 2; i++) await api(direct.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: 'x' }, headers: freshIp() });
      assert429(await api(direct.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: 'x' }, headers: freshIp() }));
    } finally {
      await direct.stop({ dropDatabase: true });
    }
  });

  /** readyUser, each of its requests from a fresh address so no IP bucket runs dry. */
  async function readyUserThrottled(username: string): Promise<SignedIn> {
    const res = await api(svc.url, 'POST', '/v1/users', { token: admin.access_token, json: { username, password: 'temporary-pass' } });
    assert.equal(res.status, 201);
    const first = (await passwordGrant(svc, username, 'temporary-pass', freshIp())).body;
    const changed = await api(svc.url, 'POST', '/v1/auth/change-password', {
      token: first.access_token,
      json: { current_password: 'temporary-pass', new_password: USER_PASSWORD },
      headers: freshIp(),
    });
    assert.equal(changed.status, 200);
    const tokens = (await passwordGrant(svc, username, USER_PASSWORD, freshIp())).body;
    return { id: res.body.id, username, password: USER_PASSWORD, ...tokens };
  }
});
