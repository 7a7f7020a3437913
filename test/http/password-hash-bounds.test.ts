/**
 * Password checks are bounded, on both backends: past the configured
 * number of waiting hashes a sign-in is refused at once with 503 and
 * `Retry-After` (RFC 6749's `temporarily_unavailable` at the token
 * endpoint, the general envelope elsewhere), and a hash whose reply never
 * comes fails with the same 503 after the timeout instead of blocking every
 * later sign-in; the next one works.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, login, startService, type RunningService } from '../support/service.js';
import { createActor, signInAdmin, type TestActor } from '../support/actors.js';

const HASH_TIMEOUT_MS = 3000;

describeEachBackend('password hashing bounds', (backend) => {
  let svc: RunningService;
  let admin: TestActor;
  let user: TestActor;
  /** How many hashes from now on lose their reply (as a stuck hashing process would). */
  let lose = 0;

  before(async () => {
    svc = await startService(backend, {
      settings: { passwordHashMaxWaiting: 1 },
      passwordHashing: { timeoutMs: HASH_TIMEOUT_MS, loseReply: () => lose-- > 0 },
    });
    admin = await signInAdmin(svc.url);
    user = await createActor(svc.url, admin.token, `hash-bounds-${backend}`);
  });
  after(async () => {
    await svc.stop({ dropDatabase: true });
  });

  const passwordGrant = (password: string) => api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: user.username, password } });

  describe('at the token endpoint', () => {
    it('refuses a sign-in past the waiting bound, fails the stuck one at its timeout (503, Retry-After, RFC 6749 envelope), then serves the waiting one', {
      timeout: 60_000,
    }, async () => {
      lose = 1;
      // The first hash holds the only slot (its reply is lost), the next waits, the last finds the queue full.
      const all = await Promise.all([passwordGrant(user.password), passwordGrant(user.password), passwordGrant(user.password)]);
      const refused = all.filter((r) => r.status === 503);
      assert.equal(refused.length, 2, all.map((r) => `${r.status} ${r.text}`).join('\n'));
      for (const r of refused) {
        assert.equal(r.body.error, 'temporarily_unavailable');
        assert.equal(typeof r.body.error_description, 'string');
        assert.equal(r.body.message, undefined);
        assert.match(r.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
        assert.equal(r.headers.get('cache-control'), 'no-store');
      }
      // The one that waited ran in a new hashing process once the stuck one was ended.
      assert.deepEqual(all.filter((r) => r.status === 200).length, 1);
      assert.ok(await login(svc.url, user.username, user.password));
    });
  });

  describe('on a general route', () => {
    it('answers 503 in the general envelope when a password check times out, and the next one works', { timeout: 60_000 }, async () => {
      lose = 1;
      const res = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.token,
        json: { current_password: user.password, new_password: 'another-password-1' },
      });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.error, 'temporarily_unavailable');
      assert.equal(typeof res.body.message, 'string');
      assert.match(res.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
      // Nothing changed, and the next password check runs.
      assert.ok(await login(svc.url, user.username, user.password));
    });
  });
});
