/**
 * A password change hashes the new password between confirming the current
 * one and writing; an administrator's reset (or block, or deletion) landing
 * in that gap wins, on both backends: the change answers 401 and writes
 * nothing, so the reset password stays and must still be changed.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, login, TEST_SCRYPT_LOG_N } from '../support/service.js';
import { assertStatus, createActor } from '../support/actors.js';
import { openDatabase } from '../support/identity.js';
import { lockWaiters } from '../support/postgres.js';
import { changeOwnPassword, deleteOwnAccount } from '../../lib/admin/account.js';
import { createPasswordHasher, type PasswordHasher } from '../../lib/auth/passwords.js';
import { createThrottle } from '../../lib/auth/throttle.js';
import { silentLogger } from '../../lib/core/logger.js';
import type { ServiceDeps } from '../../lib/http/service-deps.js';
import type { Storage } from '../../lib/storage/storage.js';

const ORIGIN = { clientIp: '127.0.0.1', path: '/v1/auth/change-password' };

describeEachBackend('password change racing an admin reset', (backend) => {
  let db: Storage;
  let hasher: PasswordHasher;
  /** Runs while the new password is being hashed, after the current one was confirmed. */
  let duringHash: () => Promise<void> = async () => {};
  let deps: ServiceDeps;

  after(async () => {
    await hasher.close();
    await db.close();
  });
  const app = serviceWithAdmin(backend);
  before(async () => {
    db = await openDatabase(app.svc);
    hasher = createPasswordHasher({ logN: TEST_SCRYPT_LOG_N });
    const hooked: PasswordHasher = {
      verify: (stored, password) => hasher.verify(stored, password),
      async hash(password) {
        const hash = await hasher.hash(password);
        await duringHash();
        return hash;
      },
      close: async () => {},
    };
    // What the two account operations use, on a second connection to the service's database.
    deps = {
      storage: db,
      passwords: hooked,
      throttle: createThrottle({ enabled: false, buckets: { capacity: 1, refillPerMinute: 1, maxKeys: 1 }, storage: db, logger: silentLogger, now: Date.now }),
      now: Date.now,
    } as unknown as ServiceDeps;
  });

  async function userRow(id: number) {
    const row = await db.getUserById(id);
    assert.ok(row);
    return row;
  }

  async function signsIn(username: string, password: string): Promise<boolean> {
    const res = await api(app.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username, password } });
    return res.status === 200;
  }

  it('an admin reset made while the new password hashes is kept, with must_change_password', async () => {
    const user = await createActor(app.url, app.admin.token, 'race-reset');
    const seen = await userRow(user.id);
    duringHash = async () => {
      assertStatus(await api(app.url, 'PATCH', `/v1/users/${user.id}`, { token: app.admin.token, json: { password: 'reset-by-admin-1' } }), 200);
    };
    await assert.rejects(changeOwnPassword(deps, seen, { currentPassword: user.password, newPassword: 'chosen-by-user-1' }, ORIGIN), {
      code: 'unauthorized',
      status: 401,
    });
    duringHash = async () => {};
    assert.equal(await signsIn(user.username, 'chosen-by-user-1'), false);
    const after = await login(app.url, user.username, 'reset-by-admin-1');
    assertStatus(await api(app.url, 'GET', '/v1/groups', { token: after.access_token }), 403, 'must_change_password');
    assert.equal((await userRow(user.id)).mustChangePassword, true);
  });

  it('a block made while the new password hashes is kept too, and the password is unchanged', async () => {
    const user = await createActor(app.url, app.admin.token, 'race-block');
    const seen = await userRow(user.id);
    duringHash = async () => {
      assertStatus(await api(app.url, 'POST', `/v1/users/${user.id}/block`, { token: app.admin.token }), 200);
    };
    await assert.rejects(changeOwnPassword(deps, seen, { currentPassword: user.password, newPassword: 'chosen-by-user-1' }, ORIGIN), { status: 401 });
    duringHash = async () => {};
    assert.equal((await userRow(user.id)).passwordHash, seen.passwordHash);
  });

  it('a deletion confirmed with a password reset meanwhile is refused', async () => {
    const user = await createActor(app.url, app.admin.token, 'race-delete');
    const seen = await userRow(user.id);
    // Deletion hashes nothing new: the reset lands between the confirmation (read above) and the write.
    assertStatus(await api(app.url, 'PATCH', `/v1/users/${user.id}`, { token: app.admin.token, json: { password: 'reset-by-admin-1' } }), 200);
    await assert.rejects(deleteOwnAccount(deps, { ...seen }, user.password, ORIGIN), { status: 401 });
    assert.equal((await userRow(user.id)).deletedAt, null);
  });

  it('without interference the change still goes through', async () => {
    const user = await createActor(app.url, app.admin.token, 'race-none');
    await changeOwnPassword(deps, await userRow(user.id), { currentPassword: user.password, newPassword: 'chosen-by-user-1' }, ORIGIN);
    assert.equal(await signsIn(user.username, 'chosen-by-user-1'), true);
  });

  if (backend === 'server') {
    it('a reset still uncommitted when the change writes is waited for, then wins', async () => {
      const user = await createActor(app.url, app.admin.token, 'race-locked');
      const seen = await userRow(user.id);
      const resetHash = await hasher.hash('reset-by-admin-2');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let resetting: Promise<void> = Promise.resolve();
      duringHash = async () => {
        let updated!: () => void;
        const rowLocked = new Promise<void>((resolve) => (updated = resolve));
        // An admin reset that has written the row but not committed yet.
        resetting = db.write(async (tx) => {
          await tx.updateUser(user.id, { passwordHash: resetHash, mustChangePassword: true });
          await tx.bumpTokenVersion([user.id]);
          updated();
          await gate;
        });
        await rowLocked;
      };
      const change = changeOwnPassword(deps, seen, { currentPassword: user.password, newPassword: 'chosen-by-user-1' }, ORIGIN);
      const outcome = change.then(
        () => 'changed',
        (err: { status?: number }) => err.status,
      );
      // The change's transaction now waits for the reset's row lock; let the reset commit.
      await lockWaiters(app.svc.database.config.dbServerDatabase!, 1);
      release();
      await resetting;
      duringHash = async () => {};
      assert.equal(await outcome, 401);
      assert.equal(await signsIn(user.username, 'reset-by-admin-2'), true);
      assert.equal(await signsIn(user.username, 'chosen-by-user-1'), false);
    });
  }
});
