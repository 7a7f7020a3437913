/**
 * User administration over HTTP on both backends: create, list (filter and
 * the pagination invariants), patch, block, unblock, delete and
 * self-deletion, each with its state-table effects and audit rows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, login, startService, type RunningService } from '../support/service.js';
import {
  USER_PASSWORD,
  auditRows,
  claimsOf,
  createUser,
  openDatabase,
  passwordGrant,
  readyUser,
  refresh,
  signInAdmin,
  type SignedIn,
} from '../support/identity.js';
import type { Storage } from '../../lib/storage/storage.js';

const USER_KEYS = [
  'created_at',
  'deleted_at',
  'display_name',
  'email',
  'email_verified_at',
  'id',
  'is_active',
  'is_primary_admin',
  'must_change_password',
  'username',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function assertError(res: { status: number; body: any }, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error, code);
  assert.equal(typeof res.body.message, 'string');
}

describeEachBackend('users', (backend) => {
  let svc: RunningService;
  let db: Storage;
  let admin: SignedIn;
  let plain: SignedIn;

  before(async () => {
    svc = await startService(backend);
    db = await openDatabase(svc);
    admin = await signInAdmin(svc);
    plain = await readyUser(svc, admin.access_token, 'plain-user');
  });
  after(async () => {
    await db.close();
    await svc.stop({ dropDatabase: true });
  });

  const as = (who: SignedIn | string) => (typeof who === 'string' ? who : who.access_token);
  const call = (who: SignedIn | string, method: string, path: string, json?: unknown) =>
    api(svc.url, method, path, { token: as(who), ...(json === undefined ? {} : { json }) });

  /** Makes `user` the only owner of a new group, directly or through a team. */
  async function soleOwnerOfNewGroup(userId: number, name: string, via: 'direct' | 'team') {
    return db.write(async (tx) => {
      const group = await tx.insertGroup(name, Date.now());
      if (via === 'direct') {
        await tx.insertRoleAssignment({ subjectType: 'user', subjectId: userId, role: 'owner', scopeType: 'group', scopeId: group.id, createdAt: Date.now() });
      } else {
        const team = await tx.insertTeam(group.id, `${name}-owners`, Date.now());
        await tx.addTeamMember(team.id, userId);
        await tx.insertRoleAssignment({ subjectType: 'team', subjectId: team.id, role: 'owner', scopeType: 'group', scopeId: group.id, createdAt: Date.now() });
      }
      return group;
    });
  }

  describe('POST /v1/users', () => {
    it('creates a user: 201, the exact User shape, must_change_password true, audited', async () => {
      const res = await call(admin, 'POST', '/v1/users', { username: 'alice', password: 'alice-password', display_name: 'Alice', email: 'alice@example.com' });
      assert.equal(res.status, 201);
      assert.deepEqual(Object.keys(res.body).sort(), USER_KEYS);
      assert.equal(res.body.username, 'alice');
      assert.equal(res.body.display_name, 'Alice');
      assert.equal(res.body.email, 'alice@example.com');
      assert.equal(res.body.email_verified_at, null);
      assert.equal(res.body.must_change_password, true);
      assert.equal(res.body.is_active, true);
      assert.equal(res.body.deleted_at, null);
      assert.equal(res.body.is_primary_admin, false);
      assert.match(res.body.created_at, ISO);
      const [row] = await auditRows(db, 'user.created');
      assert.equal(row!.actorUserId, admin.id);
      assert.equal(row!.targetId, res.body.id);
      assert.deepEqual(row!.metadata, { username: 'alice' });
      // Optional fields may be omitted.
      const bare = await call(admin, 'POST', '/v1/users', { username: 'bare', password: 'bare-password' });
      assert.equal(bare.body.display_name, null);
      assert.equal(bare.body.email, null);
    });

    it('answers 403 forbidden to a non-admin before validating the body', async () => {
      assertError(await call(plain, 'POST', '/v1/users', {}), 403, 'forbidden');
      assertError(await call(plain, 'GET', '/v1/users'), 403, 'forbidden');
      assertError(await call(plain, 'PATCH', '/v1/users/999999', { email: 5 }), 403, 'forbidden');
      assertError(await call(plain, 'POST', `/v1/users/${admin.id}/block`), 403, 'forbidden');
      assertError(await call(plain, 'POST', `/v1/users/${admin.id}/unblock`), 403, 'forbidden');
      assertError(await call(plain, 'DELETE', `/v1/users/${admin.id}`), 403, 'forbidden');
    });

    it('answers 400 invalid_request with {field, reason} for missing fields and the password rule', async () => {
      const cases: [unknown, Record<string, unknown>][] = [
        [{ password: 'long-enough' }, { field: 'username', reason: 'required' }],
        [{ username: 'x1' }, { field: 'password', reason: 'required' }],
        [
          { username: 'x1', password: 'short' },
          { field: 'password', reason: 'too_short', min_length: 8 },
        ],
        [
          { username: 'x1', password: 'p'.repeat(73) },
          { field: 'password', reason: 'too_long', max_bytes: 72 },
        ],
        [
          { username: 5, password: 'long-enough' },
          { field: 'username', reason: 'invalid' },
        ],
        [
          { username: '', password: 'long-enough' },
          { field: 'username', reason: 'invalid' },
        ],
        [
          { username: 'x1', password: 'long-enough', email: 'not-an-email' },
          { field: 'email', reason: 'invalid' },
        ],
      ];
      for (const [json, details] of cases) {
        const res = await call(admin, 'POST', '/v1/users', json);
        assertError(res, 400, 'invalid_request');
        assert.deepEqual(res.body.details, details, JSON.stringify(json));
      }
      assertError(await api(svc.url, 'POST', '/v1/users', { token: admin.access_token, raw: '{' }), 400, 'invalid_request');
      // 72 bytes exactly is fine; a rule violation creates nothing.
      assert.equal((await call(admin, 'POST', '/v1/users', { username: 'x72', password: 'p'.repeat(72) })).status, 201);
      assert.equal(await db.getUserByUsername('x1'), null);
    });

    it('answers 409 username_taken and email_taken', async () => {
      await createUser(svc, admin.access_token, 'taken', { email: 'taken@example.com' });
      assertError(await call(admin, 'POST', '/v1/users', { username: 'taken', password: 'long-enough' }), 409, 'username_taken');
      assertError(await call(admin, 'POST', '/v1/users', { username: 'other', password: 'long-enough', email: 'taken@example.com' }), 409, 'email_taken');
    });
  });

  describe('GET /v1/users', () => {
    it('lists newest first and filters by a case-insensitive username substring', async () => {
      await createUser(svc, admin.access_token, 'Filter-ME-one');
      await createUser(svc, admin.access_token, 'xfilter-me-two');
      const res = await call(admin, 'GET', '/v1/users?username=FILTER-me');
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['items', 'next_cursor']);
      assert.deepEqual(
        res.body.items.map((u: any) => u.username),
        ['xfilter-me-two', 'Filter-ME-one'],
      );
      assert.equal(res.body.next_cursor, null);
      for (const u of res.body.items) assert.deepEqual(Object.keys(u).sort(), USER_KEYS);
      assert.ok(!JSON.stringify((await call(admin, 'GET', '/v1/users')).body).match(/password_hash|passwordHash|token_version|tokenVersion/));
    });

    it('pages with no overlap and no gap, stable under inserts, next_cursor null at the end', async () => {
      for (let i = 0; i < 7; i++) await createUser(svc, admin.access_token, `pager-${i}`);
      const everything = (await call(admin, 'GET', '/v1/users?limit=200')).body.items.map((u: any) => u.id);
      assert.deepEqual(
        everything,
        [...everything].sort((a: number, b: number) => b - a),
      );

      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const page: any = (await call(admin, 'GET', `/v1/users?limit=3${q}`)).body;
        assert.ok(page.items.length <= 3);
        seen.push(...page.items.map((u: any) => u.id));
        cursor = page.next_cursor;
        // Rows created while paging never shift later pages.
        if (pages === 0) await createUser(svc, admin.access_token, 'created-while-paging');
        pages++;
      } while (cursor !== null);
      assert.deepEqual(seen, everything);
      assert.equal(pages, Math.ceil(everything.length / 3));

      const exact = (await call(admin, 'GET', `/v1/users?limit=${everything.length + 1}`)).body;
      assert.equal(exact.next_cursor, null);
    });

    it('answers 400 for a tampered cursor and a bad limit, serves limit 500 as 200', async () => {
      const first = (await call(admin, 'GET', '/v1/users?limit=1')).body;
      assert.ok(first.next_cursor);
      const tampered = `${first.next_cursor}x`;
      const bad = await call(admin, 'GET', `/v1/users?cursor=${encodeURIComponent(tampered)}`);
      assertError(bad, 400, 'invalid_request');
      assert.deepEqual(bad.body.details, { field: 'cursor', reason: 'invalid' });
      assertError(await call(admin, 'GET', '/v1/users?cursor=not-ours'), 400, 'invalid_request');
      for (const limit of ['0', 'abc', '-1']) {
        const res = await call(admin, 'GET', `/v1/users?limit=${limit}`);
        assertError(res, 400, 'invalid_request');
        assert.deepEqual(res.body.details, { field: 'limit', reason: 'invalid' });
      }
      const big = await call(admin, 'GET', '/v1/users?limit=500');
      assert.equal(big.status, 200);
      assert.ok(big.body.items.length <= 200);
      const defaults = await call(admin, 'GET', '/v1/users');
      assert.ok(defaults.body.items.length <= 50);
    });
  });

  describe('PATCH /v1/users/:id', () => {
    it('changes email (resetting email_verified_at) and display_name, audits the changed field names only', async () => {
      const user = await createUser(svc, admin.access_token, 'patchee', { email: 'patchee@example.com' });
      await db.write((tx) => tx.updateUser(user.id, { emailVerifiedAt: Date.now() }));
      const before = await call(admin, 'GET', '/v1/users?username=patchee');
      assert.match(before.body.items[0].email_verified_at, ISO);

      const res = await call(admin, 'PATCH', `/v1/users/${user.id}`, { email: 'new@example.com', display_name: 'Pat', username: 'ignored' });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), USER_KEYS);
      assert.equal(res.body.email, 'new@example.com');
      assert.equal(res.body.email_verified_at, null);
      assert.equal(res.body.display_name, 'Pat');
      assert.equal(res.body.username, 'patchee');
      const [row] = await auditRows(db, 'user.updated');
      assert.equal(row!.actorUserId, admin.id);
      assert.equal(row!.targetId, user.id);
      assert.deepEqual(row!.metadata, { changed_fields: ['email', 'display_name'] });

      // No change, no row.
      const count = (await auditRows(db, 'user.updated')).length;
      assert.equal((await call(admin, 'PATCH', `/v1/users/${user.id}`, { email: 'new@example.com' })).status, 200);
      assert.equal((await call(admin, 'PATCH', `/v1/users/${user.id}`, {})).status, 200);
      assert.equal((await auditRows(db, 'user.updated')).length, count);
      // null clears.
      const cleared = await call(admin, 'PATCH', `/v1/users/${user.id}`, { email: null, display_name: null });
      assert.equal(cleared.body.email, null);
      assert.equal(cleared.body.display_name, null);
    });

    it('sets a temporary password: must_change_password, old access token 401, refresh tokens dead, password not audited', async () => {
      const user = await readyUser(svc, admin.access_token, 'reset-me');
      const res = await call(admin, 'PATCH', `/v1/users/${user.id}`, { password: 'admin-chosen-1' });
      assert.equal(res.status, 200);
      assert.equal(res.body.must_change_password, true);
      assertError(await call(user, 'DELETE', '/v1/users/me', { password: USER_PASSWORD }), 401, 'unauthorized');
      assert.equal((await refresh(svc, user.refresh_token)).body.error, 'invalid_grant');
      assert.equal((await passwordGrant(svc, 'reset-me', USER_PASSWORD)).body.error, 'invalid_grant');
      const tokens = await login(svc.url, 'reset-me', 'admin-chosen-1');
      assertError(await call(tokens.access_token, 'GET', '/v1/users'), 403, 'must_change_password');
      const [row] = await auditRows(db, 'user.updated');
      assert.deepEqual(row!.metadata, { changed_fields: ['password'] });
      assert.ok(!JSON.stringify(row).includes('admin-chosen-1'));
    });

    it('answers 404 before 400 before 409', async () => {
      assertError(await call(admin, 'PATCH', '/v1/users/999999', { email: 5 }), 404, 'not_found');
      assertError(await call(admin, 'PATCH', '/v1/users/abc', {}), 400, 'invalid_request');
      const user = await createUser(svc, admin.access_token, 'patch-errors');
      const wrongType = await call(admin, 'PATCH', `/v1/users/${user.id}`, { email: 5 });
      assertError(wrongType, 400, 'invalid_request');
      assert.deepEqual(wrongType.body.details, { field: 'email', reason: 'invalid' });
      const short = await call(admin, 'PATCH', `/v1/users/${user.id}`, { password: 'short' });
      assert.deepEqual(short.body.details, { field: 'password', reason: 'too_short', min_length: 8 });
      await createUser(svc, admin.access_token, 'email-owner', { email: 'owned@example.com' });
      assertError(await call(admin, 'PATCH', `/v1/users/${user.id}`, { email: 'owned@example.com' }), 409, 'email_taken');
    });
  });

  describe('block and unblock', () => {
    it('blocks: 200 User, tv bumped (401), refresh tokens revoked, login refused and audited as blocked', async () => {
      const user = await readyUser(svc, admin.access_token, 'blockee');
      const res = await call(admin, 'POST', `/v1/users/${user.id}/block`);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), USER_KEYS);
      assert.equal(res.body.is_active, false);
      assertError(await call(user, 'DELETE', '/v1/users/me', { password: USER_PASSWORD }), 401, 'unauthorized');
      assert.equal((await refresh(svc, user.refresh_token)).body.error, 'invalid_grant');
      assert.equal((await passwordGrant(svc, 'blockee', USER_PASSWORD)).body.error, 'invalid_grant');
      const [failed] = await auditRows(db, 'auth.login_failed');
      assert.equal(failed!.targetId, user.id);
      assert.equal(failed!.metadata.reason, 'blocked');
      const [blocked] = await auditRows(db, 'user.blocked');
      assert.equal(blocked!.actorUserId, admin.id);
      assert.equal(blocked!.targetId, user.id);
      assert.deepEqual(blocked!.metadata, {});
      // Blocking again changes nothing.
      const count = (await auditRows(db, 'user.blocked')).length;
      assert.equal((await call(admin, 'POST', `/v1/users/${user.id}/block`)).body.is_active, false);
      assert.equal((await auditRows(db, 'user.blocked')).length, count);

      const unblocked = await call(admin, 'POST', `/v1/users/${user.id}/unblock`);
      assert.equal(unblocked.status, 200);
      assert.equal(unblocked.body.is_active, true);
      assert.equal((await auditRows(db, 'user.unblocked'))[0]!.targetId, user.id);
      assert.equal((await passwordGrant(svc, 'blockee', USER_PASSWORD)).status, 200);
    });

    it('answers 404 for unknown ids and 409 deleted_account when unblocking a deleted user', async () => {
      assertError(await call(admin, 'POST', '/v1/users/999999/block'), 404, 'not_found');
      assertError(await call(admin, 'POST', '/v1/users/999999/unblock'), 404, 'not_found');
      const user = await createUser(svc, admin.access_token, 'gone-for-good');
      assert.equal((await call(admin, 'DELETE', `/v1/users/${user.id}`)).status, 204);
      assertError(await call(admin, 'POST', `/v1/users/${user.id}/unblock`), 409, 'deleted_account');
    });
  });

  describe('DELETE /v1/users/:id', () => {
    it('deletes: row kept, grants and memberships removed, tokens dead, names still taken, audited', async () => {
      const user = await readyUser(svc, admin.access_token, 'deletee', { email: 'deletee@example.com' });
      const group = await db.write((tx) => tx.insertGroup('shared-group', Date.now()));
      await db.write(async (tx) => {
        const team = await tx.insertTeam(group.id, 'readers', Date.now());
        await tx.addTeamMember(team.id, user.id);
        await tx.insertRoleAssignment({ subjectType: 'user', subjectId: user.id, role: 'user', scopeType: 'group', scopeId: group.id, createdAt: Date.now() });
      });

      const res = await call(admin, 'DELETE', `/v1/users/${user.id}`);
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      const listed = (await call(admin, 'GET', '/v1/users?username=deletee')).body.items[0];
      assert.equal(listed.id, user.id);
      assert.match(listed.deleted_at, ISO);
      assert.equal(listed.is_active, false);
      assert.deepEqual(await db.listRoleAssignments({ subjectType: 'user', subjectId: user.id }), []);
      assert.deepEqual(await db.teamIdsOfUser(user.id), []);
      assertError(await call(user, 'DELETE', '/v1/users/me', { password: USER_PASSWORD }), 401, 'unauthorized');
      assert.equal((await refresh(svc, user.refresh_token)).body.error, 'invalid_grant');
      assert.equal((await passwordGrant(svc, 'deletee', USER_PASSWORD)).body.error, 'invalid_grant');
      assert.equal((await auditRows(db, 'auth.login_failed'))[0]!.metadata.reason, 'deleted');
      assertError(await call(admin, 'POST', '/v1/users', { username: 'deletee', password: 'long-enough' }), 409, 'username_taken');
      assertError(await call(admin, 'POST', '/v1/users', { username: 'deletee-2', password: 'long-enough', email: 'deletee@example.com' }), 409, 'email_taken');
      const [row] = await auditRows(db, 'user.deleted');
      assert.equal(row!.actorUserId, admin.id);
      assert.equal(row!.targetId, user.id);

      // Again: 204, the first deleted_at kept, no new row.
      const deletedRows = (await auditRows(db, 'user.deleted')).length;
      assert.equal((await call(admin, 'DELETE', `/v1/users/${user.id}`)).status, 204);
      assert.equal((await call(admin, 'GET', '/v1/users?username=deletee')).body.items[0].deleted_at, listed.deleted_at);
      assert.equal((await auditRows(db, 'user.deleted')).length, deletedRows);
    });

    it('answers 400 self_deletion_requires_me, 403 cannot_delete_primary_admin and 404', async () => {
      assertError(await call(admin, 'DELETE', `/v1/users/${admin.id}`), 400, 'self_deletion_requires_me');
      const other = await readyUser(svc, admin.access_token, 'second-admin');
      await db.write((tx) =>
        tx.insertRoleAssignment({ subjectType: 'user', subjectId: other.id, role: 'admin', scopeType: 'global', scopeId: null, createdAt: Date.now() }),
      );
      const otherAdmin = await login(svc.url, 'second-admin', USER_PASSWORD);
      assertError(await call(otherAdmin.access_token, 'DELETE', `/v1/users/${admin.id}`), 403, 'cannot_delete_primary_admin');
      assertError(await call(admin, 'DELETE', '/v1/users/999999'), 404, 'not_found');
      assertError(await call(admin, 'DELETE', '/v1/users/0'), 400, 'invalid_request');
    });

    it('answers 409 sole_group_owner with blocking_groups, directly or through a team, and changes nothing', async () => {
      const direct = await readyUser(svc, admin.access_token, 'sole-direct');
      const g1 = await soleOwnerOfNewGroup(direct.id, 'owned-directly', 'direct');
      const res = await call(admin, 'DELETE', `/v1/users/${direct.id}`);
      assertError(res, 409, 'sole_group_owner');
      assert.deepEqual(res.body.details, { blocking_groups: [{ id: g1.id, name: 'owned-directly' }] });
      assert.equal((await refresh(svc, direct.refresh_token)).status, 200);
      assert.equal((await db.listRoleAssignments({ subjectType: 'user', subjectId: direct.id })).length, 1);

      const viaTeam = await readyUser(svc, admin.access_token, 'sole-team');
      const g2 = await soleOwnerOfNewGroup(viaTeam.id, 'owned-via-team', 'team');
      const res2 = await call(admin, 'DELETE', `/v1/users/${viaTeam.id}`);
      assertError(res2, 409, 'sole_group_owner');
      assert.deepEqual(res2.body.details, { blocking_groups: [{ id: g2.id, name: 'owned-via-team' }] });

      // With a second owner the deletion goes through.
      await db.write((tx) =>
        tx.insertRoleAssignment({ subjectType: 'user', subjectId: plain.id, role: 'owner', scopeType: 'group', scopeId: g1.id, createdAt: Date.now() }),
      );
      assert.equal((await call(admin, 'DELETE', `/v1/users/${direct.id}`)).status, 204);
    });
  });

  describe('DELETE /v1/users/me', () => {
    it('deletes the caller after the password, while must_change_password is set too', async () => {
      await createUser(svc, admin.access_token, 'self-deleter');
      const tokens = await login(svc.url, 'self-deleter', 'temporary-pass');
      const missing = await call(tokens.access_token, 'DELETE', '/v1/users/me', {});
      assertError(missing, 400, 'invalid_request');
      assert.deepEqual(missing.body.details, { field: 'password', reason: 'required' });
      const wrong = await call(tokens.access_token, 'DELETE', '/v1/users/me', { password: 'wrong-password' });
      assertError(wrong, 401, 'invalid_grant');
      assert.deepEqual(Object.keys(wrong.body).sort(), ['error', 'message']);
      const res = await call(tokens.access_token, 'DELETE', '/v1/users/me', { password: 'temporary-pass' });
      assert.equal(res.status, 204);
      assertError(await call(tokens.access_token, 'DELETE', '/v1/users/me', { password: 'temporary-pass' }), 401, 'unauthorized');
      assert.equal((await refresh(svc, tokens.refresh_token)).body.error, 'invalid_grant');
      const [row] = await auditRows(db, 'user.deleted');
      assert.equal(row!.actorUserId, Number(claimsOf(tokens.access_token).sub));
      assert.equal(row!.targetId, row!.actorUserId);
    });

    it('refuses the primary admin and a sole group owner', async () => {
      assertError(await call(admin, 'DELETE', '/v1/users/me', { password: admin.password }), 403, 'cannot_delete_primary_admin');
      const owner = await readyUser(svc, admin.access_token, 'sole-self');
      const group = await soleOwnerOfNewGroup(owner.id, 'self-owned', 'direct');
      const res = await call(owner, 'DELETE', '/v1/users/me', { password: USER_PASSWORD });
      assertError(res, 409, 'sole_group_owner');
      assert.deepEqual(res.body.details, { blocking_groups: [{ id: group.id, name: 'self-owned' }] });
      assert.equal((await call(admin, 'GET', '/v1/users?username=sole-self')).body.items[0].deleted_at, null);
    });
  });
});
