/**
 * Authentication over HTTP on both backends: the token endpoint (password
 * and refresh grants, revocation, RFC 6749 errors, no-store), the access
 * token's claims and `tv` check, the forced password change and its four
 * exemptions, change-password and the login audit rows. Rate limiting is in
 * `rate-limit.test.ts`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { ADMIN_PASSWORD, api, login, startService, type RunningService } from '../support/service.js';
import {
  ADMIN_NEW_PASSWORD,
  USER_PASSWORD,
  auditRows,
  claimsOf,
  createUser,
  headerOf,
  openDatabase,
  passwordGrant,
  readyUser,
  refresh,
  type SignedIn,
} from '../support/identity.js';
import type { Storage } from '../../lib/storage/storage.js';
import { REFRESH_REUSE_GRACE_MS } from '../../lib/auth/refresh-tokens.js';

const RFC_KEYS = ['error', 'error_description'];

function assertRfcError(res: { status: number; body: any; headers: Headers }, code: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error, code);
  assert.deepEqual(Object.keys(res.body).sort(), RFC_KEYS);
  assert.equal(typeof res.body.error_description, 'string');
  assert.equal(res.headers.get('cache-control'), 'no-store');
}

describeEachBackend('auth', (backend) => {
  let svc: RunningService;
  let db: Storage;
  let admin: SignedIn;
  /** Added to the service's clock (ms); lets a test age refresh tokens. */
  let clockOffset = 0;

  before(async () => {
    svc = await startService(backend, { now: () => Date.now() + clockOffset });
    db = await openDatabase(svc);
  });
  after(async () => {
    await db.close();
    await svc.stop({ dropDatabase: true });
  });

  describe('forced password change', () => {
    it('lets the bootstrap admin sign in, then answers 403 must_change_password outside the four exemptions', async () => {
      const tokens = await login(svc.url, 'admin', ADMIN_PASSWORD);
      const gated = await api(svc.url, 'GET', '/v1/users', { token: tokens.access_token });
      assert.equal(gated.status, 403);
      assert.equal(gated.body.error, 'must_change_password');
      const gatedPost = await api(svc.url, 'POST', '/v1/users', { token: tokens.access_token, json: {} });
      assert.equal(gatedPost.body.error, 'must_change_password');

      // Exemption: refresh grant.
      const refreshed = await refresh(svc, tokens.refresh_token);
      assert.equal(refreshed.status, 200);
      // Exemption: DELETE /v1/users/me reaches its own checks (here: the password confirmation).
      const deleteMe = await api(svc.url, 'DELETE', '/v1/users/me', { token: refreshed.body.access_token, json: { password: 'wrong-password' } });
      assert.equal(deleteMe.status, 401);
      assert.equal(deleteMe.body.error, 'invalid_grant');
      // Exemption: DELETE /v1/auth/token.
      const revoked = await api(svc.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: refreshed.body.refresh_token } });
      assert.equal(revoked.status, 200);
      // Exemption: change-password, which clears the flag.
      const changed = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: refreshed.body.access_token,
        json: { current_password: ADMIN_PASSWORD, new_password: ADMIN_NEW_PASSWORD },
      });
      assert.equal(changed.status, 200);
      assert.deepEqual(changed.body, {});
      const fresh = await login(svc.url, 'admin', ADMIN_NEW_PASSWORD);
      const listed = await api(svc.url, 'GET', '/v1/users', { token: fresh.access_token });
      assert.equal(listed.status, 200);
      admin = { id: Number(claimsOf(fresh.access_token).sub), username: 'admin', password: ADMIN_NEW_PASSWORD, ...fresh };
    });
  });

  describe('password grant', () => {
    it('answers the exact TokenResponse with no-store and a JWT carrying the claims table', async () => {
      const res = await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'token_type']);
      assert.equal(res.body.token_type, 'Bearer');
      assert.equal(res.body.expires_in, 900);
      assert.equal(res.body.refresh_expires_in, 2592000);
      assert.match(res.body.refresh_token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(headerOf(res.body.access_token).alg, 'HS256');
      const claims = claimsOf(res.body.access_token);
      assert.deepEqual(Object.keys(claims).sort(), ['exp', 'iat', 'iss', 'jti', 'preferred_username', 'roles', 'sub', 'tv'].sort());
      assert.equal(claims.iss, 'logkeep');
      assert.equal(claims.sub, String(admin.id));
      assert.equal(claims.exp - claims.iat, 900);
      assert.equal(typeof claims.jti, 'string');
      assert.equal(claims.preferred_username, 'admin');
      assert.equal(typeof claims.tv, 'number');
      assert.deepEqual(claims.roles, [{ role: 'admin', scope_type: 'global', scope_id: null }]);
      assert.notEqual(claimsOf((await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD)).body.access_token).jti, claims.jti);
    });

    it('puts team grants in roles, deduplicated', async () => {
      const user = await readyUser(svc, admin.access_token, 'team-member');
      const group = await db.write((tx) => tx.insertGroup('g-roles', Date.now()));
      const team = await db.write(async (tx) => {
        const t = await tx.insertTeam(group.id, 'owners', Date.now());
        await tx.addTeamMember(t.id, user.id);
        await tx.insertRoleAssignment({ subjectType: 'team', subjectId: t.id, role: 'owner', scopeType: 'group', scopeId: group.id, createdAt: Date.now() });
        await tx.insertRoleAssignment({ subjectType: 'user', subjectId: user.id, role: 'owner', scopeType: 'group', scopeId: group.id, createdAt: Date.now() });
        await tx.insertRoleAssignment({ subjectType: 'user', subjectId: user.id, role: 'user', scopeType: 'global', scopeId: null, createdAt: Date.now() });
        return t;
      });
      assert.ok(team.id > 0);
      const tokens = await login(svc.url, 'team-member', USER_PASSWORD);
      const roles = claimsOf(tokens.access_token).roles as any[];
      const key = (r: any) => `${r.role}/${r.scope_type}/${r.scope_id}`;
      assert.deepEqual(roles.map(key).sort(), [`owner/group/${group.id}`, 'user/global/null']);
    });

    it('answers invalid_grant with one description for a wrong password, an unknown user and an over-long password', async () => {
      const wrong = await passwordGrant(svc, 'admin', 'not-the-password');
      const unknown = await passwordGrant(svc, 'nobody-at-all', 'whatever-password');
      const long = await passwordGrant(svc, 'admin', 'x'.repeat(73));
      for (const res of [wrong, unknown, long]) assertRfcError(res, 'invalid_grant');
      assert.equal(wrong.body.error_description, unknown.body.error_description);
      assert.equal(wrong.body.error_description, long.body.error_description);
    });

    it('answers unsupported_grant_type for a missing or unknown grant_type, JSON bodies included', async () => {
      assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: { username: 'admin', password: ADMIN_NEW_PASSWORD } }), 'unsupported_grant_type');
      assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'client_credentials' } }), 'unsupported_grant_type');
      assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: '' } }), 'unsupported_grant_type');
      assertRfcError(
        await api(svc.url, 'POST', '/v1/auth/token', { json: { grant_type: 'password', username: 'admin', password: ADMIN_NEW_PASSWORD } }),
        'unsupported_grant_type',
      );
    });

    it('answers invalid_request for a missing field, an undecodable form or a repeated parameter', async () => {
      assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', password: 'x' } }), 'invalid_request');
      assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin' } }), 'invalid_request');
      assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: '' } }), 'invalid_request');
      assertRfcError(await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'refresh_token' } }), 'invalid_request');
      const undecodable = await api(svc.url, 'POST', '/v1/auth/token', {
        raw: 'grant_type=password&username=%zz&password=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assertRfcError(undecodable, 'invalid_request');
      const repeated = await api(svc.url, 'POST', '/v1/auth/token', {
        raw: 'grant_type=password&username=admin&username=admin&password=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assertRfcError(repeated, 'invalid_request');
    });

    it('ignores unknown form fields and a client Basic Authorization header', async () => {
      const res = await api(svc.url, 'POST', '/v1/auth/token', {
        form: { grant_type: 'password', username: 'admin', password: ADMIN_NEW_PASSWORD, client_id: 'my-app', scope: 'openid' },
        headers: { authorization: `Basic ${Buffer.from('my-app:secret').toString('base64')}` },
      });
      assert.equal(res.status, 200);
    });

    it('audits login success and failure with client_ip and user_agent, never storing an unknown username', async () => {
      await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD, { 'user-agent': 'audit-test/1' });
      await passwordGrant(svc, 'admin', 'wrong-password-1', { 'user-agent': 'audit-test/2' });
      await passwordGrant(svc, 'ghost-user-xyz', 'wrong-password-1', { 'user-agent': 'audit-test/3' });

      const [succeeded] = await auditRows(db, 'auth.login_succeeded');
      assert.equal(succeeded!.actorUserId, admin.id);
      assert.equal(succeeded!.targetType, 'user');
      assert.equal(succeeded!.targetId, admin.id);
      assert.deepEqual(succeeded!.metadata, { client_ip: '127.0.0.1', user_agent: 'audit-test/1' });

      const failed = await auditRows(db, 'auth.login_failed');
      const unknown = failed[0]!;
      assert.equal(unknown.actorUserId, null);
      assert.equal(unknown.targetId, null);
      assert.deepEqual(unknown.metadata, { unknown_user: true, client_ip: '127.0.0.1', user_agent: 'audit-test/3' });
      assert.ok(!JSON.stringify(failed).includes('ghost-user-xyz'));
      const known = failed[1]!;
      assert.equal(known.actorUserId, admin.id);
      assert.equal(known.targetId, admin.id);
      assert.deepEqual(known.metadata, { reason: 'invalid_password', client_ip: '127.0.0.1', user_agent: 'audit-test/2' });
    });
  });

  describe('refresh grant', () => {
    it('rotates: a new pair, fresh roles and tv, the old refresh token dead; no audit row', async () => {
      const user = await readyUser(svc, admin.access_token, 'refresher');
      const group = await db.write((tx) => tx.insertGroup('g-refresh', Date.now()));
      await db.write((tx) =>
        tx.insertRoleAssignment({ subjectType: 'user', subjectId: user.id, role: 'user', scopeType: 'group', scopeId: group.id, createdAt: Date.now() }),
      );
      await db.write((tx) => tx.bumpTokenVersion([user.id]));
      const auditBefore = (await db.listAudit({ limit: 1 }))[0]!.id;

      const rotated = await refresh(svc, user.refresh_token);
      assert.equal(rotated.status, 200);
      assert.equal(rotated.headers.get('cache-control'), 'no-store');
      assert.notEqual(rotated.body.refresh_token, user.refresh_token);
      const claims = claimsOf(rotated.body.access_token);
      assert.equal(claims.tv, claimsOf(user.access_token).tv + 1);
      assert.deepEqual(claims.roles, [{ role: 'user', scope_type: 'group', scope_id: group.id }]);
      // The old access token carries the old tv: 401. The new one works.
      assert.equal((await api(svc.url, 'DELETE', '/v1/users/me', { token: user.access_token, json: { password: 'x' } })).status, 401);
      const withNew = await api(svc.url, 'DELETE', '/v1/users/me', { token: rotated.body.access_token, json: { password: 'wrong-password' } });
      assert.equal(withNew.body.error, 'invalid_grant');
      assert.equal((await db.listAudit({ limit: 1 }))[0]!.id, auditBefore);

      assertRfcError(await refresh(svc, 'definitely-not-a-token'), 'invalid_grant');
    });

    it('treats reuse of a rotated token as theft: invalid_grant and every live token of the user revoked', async () => {
      const user = await readyUser(svc, admin.access_token, 'reuser');
      const other = await login(svc.url, 'reuser', USER_PASSWORD);
      const rotated = await refresh(svc, user.refresh_token);
      assert.equal(rotated.status, 200);
      // Past the reuse grace (refresh-grace.test.ts covers the grace itself).
      clockOffset = REFRESH_REUSE_GRACE_MS + 1000;
      try {
        assertRfcError(await refresh(svc, user.refresh_token), 'invalid_grant');
      } finally {
        clockOffset = 0;
      }
      assertRfcError(await refresh(svc, rotated.body.refresh_token), 'invalid_grant');
      assertRfcError(await refresh(svc, other.refresh_token), 'invalid_grant');
      // A later login starts a new family.
      const again = await login(svc.url, 'reuser', USER_PASSWORD);
      assert.equal((await refresh(svc, again.refresh_token)).status, 200);
    });

    it('refuses an expired refresh token', async () => {
      const tokens = await login(svc.url, 'admin', ADMIN_NEW_PASSWORD);
      clockOffset = 2592000 * 1000 + 1000;
      try {
        assertRfcError(await refresh(svc, tokens.refresh_token), 'invalid_grant');
      } finally {
        clockOffset = 0;
      }
      // Expiry is not reuse: the user's other tokens live on.
      const other = await login(svc.url, 'admin', ADMIN_NEW_PASSWORD);
      assert.equal((await refresh(svc, other.refresh_token)).status, 200);
    });
  });

  describe('DELETE /v1/auth/token', () => {
    it('revokes a live token: 200, empty body, no-store, one auth.logged_out row', async () => {
      const user = await readyUser(svc, admin.access_token, 'leaver');
      const loggedOutBefore = (await auditRows(db, 'auth.logged_out')).length;
      const res = await api(svc.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: user.refresh_token, token_type_hint: 'refresh_token' } });
      assert.equal(res.status, 200);
      assert.equal(res.text, '');
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assertRfcError(await refresh(svc, user.refresh_token), 'invalid_grant');
      // Revoking again, or an unknown token: still 200, no new row.
      assert.equal((await api(svc.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: user.refresh_token } })).status, 200);
      assert.equal((await api(svc.url, 'DELETE', '/v1/auth/token', { form: { refresh_token: 'unknown-token' } })).status, 200);
      const rows = await auditRows(db, 'auth.logged_out');
      assert.equal(rows.length, loggedOutBefore + 1);
      assert.equal(rows[0]!.actorUserId, user.id);
      assert.equal(rows[0]!.targetId, user.id);
      assert.deepEqual(Object.keys(rows[0]!.metadata).sort(), ['client_ip', 'user_agent']);
    });

    it('answers 400 invalid_request (RFC body) only when refresh_token is missing', async () => {
      assertRfcError(await api(svc.url, 'DELETE', '/v1/auth/token', { form: {} }), 'invalid_request');
      assertRfcError(await api(svc.url, 'DELETE', '/v1/auth/token', { form: { token: 'x' } }), 'invalid_request');
    });
  });

  describe('POST /v1/auth/change-password', () => {
    it('checks the rule first, with the exact details shapes', async () => {
      const user = await readyUser(svc, admin.access_token, 'changer');
      const short = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: 'wrong-current', new_password: 'short' },
      });
      assert.equal(short.status, 400);
      assert.deepEqual(short.body.details, { field: 'new_password', reason: 'too_short', min_length: 8 });
      const long = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: USER_PASSWORD, new_password: 'é'.repeat(37) },
      });
      assert.equal(long.status, 400);
      assert.deepEqual(long.body.details, { field: 'new_password', reason: 'too_long', max_bytes: 72 });
      // 8 characters of 2 bytes each is fine: characters are counted, not bytes.
      const missing = await api(svc.url, 'POST', '/v1/auth/change-password', { token: user.access_token, json: { current_password: USER_PASSWORD } });
      assert.equal(missing.status, 400);
      assert.deepEqual(missing.body.details, { field: 'new_password', reason: 'required' });
    });

    it('answers 401 invalid_grant in the general envelope for a wrong current password', async () => {
      const user = await readyUser(svc, admin.access_token, 'changer-2');
      const res = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: 'wrong-current', new_password: 'new-password-1' },
      });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'invalid_grant');
      assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
    });

    it('replaces the password, bumps tv (old access tokens 401), keeps refresh tokens and audits', async () => {
      const user = await readyUser(svc, admin.access_token, 'changer-3');
      const res = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: USER_PASSWORD, new_password: 'ééééééééé' },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {});
      const old = await api(svc.url, 'POST', '/v1/auth/change-password', {
        token: user.access_token,
        json: { current_password: 'ééééééééé', new_password: 'another-password' },
      });
      assert.equal(old.status, 401);
      assert.equal(old.body.error, 'unauthorized');
      assertRfcError(await passwordGrant(svc, user.username, USER_PASSWORD), 'invalid_grant');
      assert.equal((await passwordGrant(svc, user.username, 'ééééééééé')).status, 200);
      const refreshed = await refresh(svc, user.refresh_token);
      assert.equal(refreshed.status, 200);
      assert.equal(claimsOf(refreshed.body.access_token).tv, claimsOf(user.access_token).tv + 1);
      const [row] = await auditRows(db, 'user.password_changed');
      assert.equal(row!.actorUserId, user.id);
      assert.equal(row!.targetId, user.id);
      assert.deepEqual(row!.metadata, {});
    });
  });

  describe('access tokens', () => {
    it('answers 401 for a token signed with another secret, an unsigned one, or a project key', async () => {
      const [h, p] = admin.access_token.split('.');
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
      const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claimsOf(admin.access_token), tv: 99 })).toString('base64url')}.${admin.access_token.split('.')[2]}`;
      for (const token of [none, tampered, 'slk_abcdef', 'garbage']) {
        const res = await api(svc.url, 'GET', '/v1/users', { token });
        assert.equal(res.status, 401, token);
        assert.equal(res.body.error, 'unauthorized');
      }
    });
  });

  describe('rate limiting off', () => {
    it('never answers 429 when disabled', async () => {
      for (let i = 0; i < 15; i++) {
        assertRfcError(await passwordGrant(svc, 'admin', 'wrong-password-x'), 'invalid_grant');
      }
      assert.equal((await passwordGrant(svc, 'admin', ADMIN_NEW_PASSWORD)).status, 200);
    });
  });

  describe('temporary passwords', () => {
    it('signs in a user created by an admin with must_change_password until they change it', async () => {
      const created = await createUser(svc, admin.access_token, 'fresh-user');
      assert.equal(created.must_change_password, true);
      const tokens = await login(svc.url, 'fresh-user', 'temporary-pass');
      assert.equal((await api(svc.url, 'GET', '/v1/users', { token: tokens.access_token })).body.error, 'must_change_password');
    });
  });
});
