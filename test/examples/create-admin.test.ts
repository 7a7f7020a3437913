/**
 * examples/create-admin.ts, run for real on both backends: an administrator
 * created from a script (on an empty database, and on one a service already
 * bootstrapped) signs in with the password it was given and must change it
 * first; a taken username is reported. Also run as its own process.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { databaseSettings, main } from '../../examples/create-admin.js';
import { describeEachBackend, newTestDatabase } from '../support/backends.js';
import { ADMIN_PASSWORD, TEST_SCRYPT_LOG_N, api, login, startService } from '../support/service.js';

describeEachBackend('example: create-admin', (backend) => {
  it('creates a primary administrator on an empty database, then a second, non-primary one', async (t) => {
    t.mock.method(console, 'log', () => {});
    t.mock.method(console, 'error', () => {});
    const database = await newTestDatabase(backend);
    const first = await main(database.config, 'root', { passwordHashLogN: TEST_SCRYPT_LOG_N });
    assert.ok(first);
    assert.deepEqual([first.user.username, first.user.isPrimaryAdmin, first.user.mustChangePassword, first.generated], ['root', true, true, true]);
    const second = await main(database.config, 'alice', { password: 'alice-temporary-1', passwordHashLogN: TEST_SCRYPT_LOG_N });
    assert.deepEqual([second?.user.isPrimaryAdmin, second?.generated, second?.password], [false, false, 'alice-temporary-1']);
    assert.equal(await main(database.config, 'alice', { passwordHashLogN: TEST_SCRYPT_LOG_N }), null, 'a taken username');

    // A service on that database: users exist, so no bootstrap admin; both sign in and must change their password.
    const svc = await startService(backend, { database });
    try {
      assert.equal(svc.service.bootstrapAdmin, null);
      for (const admin of [first, second!]) {
        const { access_token } = await login(svc.url, admin.user.username, admin.password);
        const res = await api(svc.url, 'GET', '/v1/groups', { token: access_token });
        assert.deepEqual([res.status, res.body.error], [403, 'must_change_password']);
      }
    } finally {
      await svc.stop({ dropDatabase: true });
    }
  });

  it('adds an administrator next to the bootstrap one', async (t) => {
    t.mock.method(console, 'log', () => {});
    const svc = await startService(backend);
    try {
      const created = await main(svc.database.config, 'bob', { passwordHashLogN: TEST_SCRYPT_LOG_N });
      assert.equal(created?.user.isPrimaryAdmin, false);
      await login(svc.url, 'admin', ADMIN_PASSWORD);
      await login(svc.url, 'bob', created!.password);
    } finally {
      await svc.stop({ dropDatabase: true });
    }
  });
});

it('example create-admin runs as its own process and exits 1 on a taken name', async () => {
  const database = await newTestDatabase('file');
  const run = () =>
    spawnSync(process.execPath, ['--import', 'tsx', 'examples/create-admin.ts', database.config.dbPath!, 'carol'], { encoding: 'utf8', timeout: 60_000 });
  const ok = run();
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /created administrator 'carol' \(id \d+, primary\), temporary password \(shown once\): \S{24}/);
  const taken = run();
  assert.equal(taken.status, 1);
  assert.match(taken.stderr, /carol.*taken/);
  assert.deepEqual(databaseSettings({ dbPath: 'x.db' }).dbBackend, 'file');
});
