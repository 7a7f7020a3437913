/**
 * What an anonymous caller can make the token endpoint hold, on both
 * backends: the form body is capped at 64 KiB (413 in the endpoint's own
 * envelope), usernames past 200 characters and any username or password
 * holding U+0000 are an ordinary failed login, and the rate limiter keeps a
 * fixed-size key per subject however long the submitted username.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { createRateLimiter, type RateLimiter } from '../../lib/auth/rate-limit.js';
import { ADMIN_NEW_PASSWORD, passwordGrant, signInAdmin } from '../support/identity.js';

const KIB = 1024;

describeEachBackend('token endpoint limits', (backend) => {
  let svc: RunningService;
  let limiter: RateLimiter;
  let nextIp = 1;
  /** A distinct caller address per call (one trusted proxy hop). */
  const freshIp = () => ({ 'x-forwarded-for': `198.51.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}` });

  before(async () => {
    limiter = createRateLimiter({ capacity: 5, refillPerMinute: 5, maxKeys: 10_000 });
    svc = await startService(backend, { settings: { rateLimitEnabled: true, trustedProxyHops: 1 }, rateLimiter: limiter });
    await signInAdmin(svc);
  });
  after(() => svc.stop({ dropDatabase: true }));

  function assertInvalidGrant(res: { status: number; body: any; headers: Headers }, what: string): void {
    assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
    assert.deepEqual(res.body, { error: 'invalid_grant', error_description: 'The username or password is incorrect.' }, what);
    assert.equal(res.headers.get('cache-control'), 'no-store');
  }

  it('answers 413 payload_too_large in the token envelope for a form body over 64 KiB, POST and DELETE', async () => {
    const big = 'x'.repeat(64 * KIB);
    const post = await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: big, password: 'whatever-1' }, headers: freshIp() });
    assert.equal(post.status, 413, post.text);
    assert.deepEqual(Object.keys(post.body).sort(), ['error', 'error_description']);
    assert.equal(post.body.error, 'payload_too_large');
    assert.equal(post.headers.get('cache-control'), 'no-store');
    const del = await api(svc.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: big }, headers: freshIp() });
    assert.equal(del.status, 413, del.text);
    assert.equal(del.body.error, 'payload_too_large');
    // Just under the cap is read and answered like any failed login.
    const under = 'u'.repeat(64 * KIB - 100);
    assertInvalidGrant(await passwordGrant(svc, under, 'whatever-1', freshIp()), 'a username just under the cap');
  });

  it('keeps a fixed-size rate-limit key per username: 100 logins with huge usernames from distinct addresses leave it flat', async () => {
    const subjectBefore = limiter.subject.retainedKeyChars;
    const keysBefore = limiter.subject.size;
    for (let i = 0; i < 100; i++) {
      // 256 KiB: refused by the body cap before anything is kept.
      const huge = await passwordGrant(svc, `${i}-${'h'.repeat(256 * KIB)}`, 'whatever-1', freshIp());
      assert.equal(huge.status, 413);
      // 60 KiB: reaches the limiter, which keeps a digest, not the name.
      assertInvalidGrant(await passwordGrant(svc, `${i}-${'l'.repeat(60 * KIB)}`, 'whatever-1', freshIp()), `long username ${i}`);
    }
    assert.equal(limiter.subject.size - keysBefore, 100);
    // 100 keys of at most 64 characters each, where the usernames held 6 MiB.
    const grown = limiter.subject.retainedKeyChars - subjectBefore;
    assert.ok(grown > 0 && grown <= 100 * 64, `the subject table grew by ${grown} characters`);
    assert.ok(limiter.ip.retainedKeyChars <= limiter.ip.size * 64);
  });

  it('refuses a username over 200 characters as invalid_grant, and still signs in a real account', async () => {
    assertInvalidGrant(await passwordGrant(svc, 'a'.repeat(201), 'whatever-1', freshIp()), '201 characters');
    assertInvalidGrant(await passwordGrant(svc, '😀'.repeat(201), 'whatever-1', freshIp()), '201 astral characters');
    assert.equal((await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD, freshIp())).status, 200);
  });

  it('answers invalid_grant, never 5xx, to a username or password holding U+0000', async () => {
    assertInvalidGrant(await passwordGrant(svc, 'ad\u0000min', ADMIN_NEW_PASSWORD, freshIp()), 'NUL in the username');
    assertInvalidGrant(await passwordGrant(svc, '\u0000', 'whatever-1', freshIp()), 'a lone NUL username');
    assertInvalidGrant(await passwordGrant(svc, 'admin', `${ADMIN_NEW_PASSWORD}\u0000`, freshIp()), 'NUL in the password');
  });
});
