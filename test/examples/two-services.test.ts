/**
 * examples/two-services.ts, run for real: two logkeep services in one
 * process, one on a SQLite file and one on PostgreSQL, share nothing:
 * not users, not tokens, not keys, not entries; closing one leaves the
 * other serving.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { main, type TwoServices } from '../../examples/two-services.js';
import { silentLogger } from '../../lib/core/logger.js';
import { newTestDatabase, type BackendName, type TestDatabase } from '../support/backends.js';
import { postgresSkipReason } from '../support/postgres.js';
import { TEST_SCRYPT_LOG_N, api, login } from '../support/service.js';
import { createGroup, createKey, createProject } from '../support/actors.js';

const SECRET_A = 'secret-of-service-a-0123456789abcdef0123';
const SECRET_B = 'secret-of-service-b-0123456789abcdef0123';

describe('example: two services in one process', () => {
  let both: TwoServices;
  let backendB: BackendName;
  const databases: TestDatabase[] = [];
  before(async () => {
    const pgDown = await postgresSkipReason();
    backendB = pgDown ? 'file' : 'server';
    const [dbA, dbB] = [await newTestDatabase('file'), await newTestDatabase(backendB)];
    databases.push(dbA, dbB);
    both = await main(
      { ...dbA.config, jwtSecret: SECRET_A, bootstrapAdminPassword: 'password-of-a-1', rateLimitEnabled: false },
      { ...dbB.config, jwtSecret: SECRET_B, bootstrapAdminPassword: 'password-of-b-1', rateLimitEnabled: false },
      { service: { logger: silentLogger, passwordHashLogN: TEST_SCRYPT_LOG_N } },
    );
  });
  after(async () => {
    await both.close();
    for (const db of databases) await db.cleanup();
  });

  it('keeps users, tokens, keys and entries apart', async (t) => {
    t.diagnostic(`service b runs on the ${backendB} backend`);
    const a = `${both.url}/a`;
    const b = `${both.url}/b`;
    assert.equal(both.a.config.dbBackend, 'file');
    assert.equal(both.b.config.dbBackend, backendB);

    // Each has its own first administrator, with its own password.
    const tokenA = (await login(a, 'admin', 'password-of-a-1')).access_token;
    const tokenB = (await login(b, 'admin', 'password-of-b-1')).access_token;
    assert.equal((await api(a, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: 'password-of-b-1' } })).status, 400);
    for (const [url, token, password] of [
      [a, tokenA, 'password-of-a-1'],
      [b, tokenB, 'password-of-b-1'],
    ] as const) {
      const res = await api(url, 'POST', '/v1/auth/change-password', { token, json: { current_password: password, new_password: `${password}-changed` } });
      assert.equal(res.status, 200);
    }
    const adminA = (await login(a, 'admin', 'password-of-a-1-changed')).access_token;
    const adminB = (await login(b, 'admin', 'password-of-b-1-changed')).access_token;

    // A token of one service is nothing to the other.
    assert.equal((await api(b, 'GET', '/v1/groups', { token: adminA })).status, 401);
    assert.equal((await api(a, 'GET', '/v1/groups', { token: adminB })).status, 401);

    // Groups, projects and keys of A do not exist in B.
    const groupA = await createGroup(a, adminA, 'only in a');
    const projectA = await createProject(a, adminA, groupA, 'web');
    const keyA = await createKey(a, adminA, projectA);
    assert.deepEqual((await api(b, 'GET', '/v1/groups', { token: adminB })).body.items, []);
    const shipped = await api(a, 'POST', '/v1/logs', { token: keyA.secret, json: [{ level: 'info', event: 'in a', timestamp: '2025-01-01T00:00:00Z' }] });
    assert.deepEqual([shipped.status, shipped.body], [202, { accepted: 1, rejected: [], rejected_count: 0 }]);
    assert.equal((await api(b, 'POST', '/v1/logs', { token: keyA.secret, json: [] })).status, 401);
    assert.equal((await api(b, 'GET', `/v1/logs?project_id=${projectA}`, { token: adminB })).status, 404);
    assert.equal((await api(a, 'GET', `/v1/logs?project_id=${projectA}`, { token: adminA })).body.items.length, 1);

    // Closing one leaves the other serving.
    await both.a.close();
    assert.equal((await api(b, 'GET', '/healthz')).status, 200);
    assert.equal((await api(b, 'GET', '/v1/groups', { token: adminB })).status, 200);
  });
});
