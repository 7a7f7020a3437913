/**
 * The refresh grant's reuse grace over HTTP on both backends: a token
 * presented again within REFRESH_REUSE_GRACE_MS of its rotation, while its
 * successor is unused, answers that same successor (a reload that lost the
 * first answer stays signed in, and the person's other sessions too);
 * outside the grace, or once the successor was used or revoked, it is reuse
 * and every live refresh token of the user is revoked, as before.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, login } from '../support/service.js';
import { USER_PASSWORD, claimsOf, readyUser, refresh } from '../support/identity.js';
import { REFRESH_REUSE_GRACE_MS } from '../../lib/auth/refresh-tokens.js';

function assertRefused(res: { status: number; body: any }): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error, 'invalid_grant');
}

describeEachBackend('refresh reuse grace', (backend) => {
  /** Added to the service's clock (ms): lets a test step past the grace. */
  let clockOffset = 0;

  after(() => {
    clockOffset = 0;
  });
  const app = serviceWithAdmin(backend, { now: () => Date.now() + clockOffset });

  it('answers the rotated token again with the same successor and a fresh access token; the successor then works', async () => {
    const user = await readyUser(app.svc, app.admin.token, 'reloader');
    const otherTab = await login(app.url, 'reloader', USER_PASSWORD);
    const first = await refresh(app.svc, user.refresh_token);
    assert.equal(first.status, 200);
    // The reload: the first answer never reached the page, which sends the old token again.
    clockOffset = 5_000;
    const again = await refresh(app.svc, user.refresh_token);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.headers.get('cache-control'), 'no-store');
    assert.equal(again.body.refresh_token, first.body.refresh_token);
    assert.notEqual(again.body.access_token, first.body.access_token);
    assert.equal(claimsOf(again.body.access_token).sub, String(user.id));
    // The successor rotates as any token does, and the other tab never noticed.
    const next = await refresh(app.svc, again.body.refresh_token);
    assert.equal(next.status, 200);
    assert.notEqual(next.body.refresh_token, again.body.refresh_token);
    assert.equal((await refresh(app.svc, otherTab.refresh_token)).status, 200);
    clockOffset = 0;
  });

  it('treats the rotated token presented after the grace as reuse: invalid_grant and the family revoked', async () => {
    const user = await readyUser(app.svc, app.admin.token, 'late-replayer');
    const otherTab = await login(app.url, 'late-replayer', USER_PASSWORD);
    const first = await refresh(app.svc, user.refresh_token);
    assert.equal(first.status, 200);
    clockOffset = REFRESH_REUSE_GRACE_MS + 1_000;
    try {
      assertRefused(await refresh(app.svc, user.refresh_token));
      assertRefused(await refresh(app.svc, first.body.refresh_token));
      assertRefused(await refresh(app.svc, otherTab.refresh_token));
    } finally {
      clockOffset = 0;
    }
  });

  it('treats the rotated token as reuse within the grace once its successor was rotated', async () => {
    const user = await readyUser(app.svc, app.admin.token, 'thief-after-use');
    const otherTab = await login(app.url, 'thief-after-use', USER_PASSWORD);
    const first = await refresh(app.svc, user.refresh_token);
    const second = await refresh(app.svc, first.body.refresh_token);
    assert.equal(second.status, 200);
    assertRefused(await refresh(app.svc, user.refresh_token));
    assertRefused(await refresh(app.svc, second.body.refresh_token));
    assertRefused(await refresh(app.svc, otherTab.refresh_token));
  });

  it('treats the rotated token as reuse within the grace once its successor was signed out', async () => {
    const user = await readyUser(app.svc, app.admin.token, 'signed-out');
    const otherTab = await login(app.url, 'signed-out', USER_PASSWORD);
    const first = await refresh(app.svc, user.refresh_token);
    assert.equal((await api(app.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: first.body.refresh_token } })).status, 200);
    assertRefused(await refresh(app.svc, user.refresh_token));
    assertRefused(await refresh(app.svc, otherTab.refresh_token));
  });

  it('gives a token signed out, never rotated, no grace', async () => {
    const user = await readyUser(app.svc, app.admin.token, 'logged-out');
    const otherTab = await login(app.url, 'logged-out', USER_PASSWORD);
    assert.equal((await api(app.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: user.refresh_token } })).status, 200);
    assertRefused(await refresh(app.svc, user.refresh_token));
    assertRefused(await refresh(app.svc, otherTab.refresh_token));
  });

  it('answers concurrent refreshes of one token with one successor', async () => {
    for (let round = 0; round < 3; round++) {
      const tokens = await login(app.url, 'admin', app.admin.password);
      const results = await Promise.all([
        refresh(app.svc, tokens.refresh_token),
        refresh(app.svc, tokens.refresh_token),
        refresh(app.svc, tokens.refresh_token),
      ]);
      for (const r of results) assert.equal(r.status, 200, `round ${round}: ${JSON.stringify(r.body)}`);
      assert.equal(new Set(results.map((r) => r.body.refresh_token)).size, 1, `round ${round}`);
      assert.equal((await refresh(app.svc, results[0]!.body.refresh_token)).status, 200);
    }
  });
});
