/**
 * Two services on one PostgreSQL database: an access key made through one
 * works through the other, and its revocation, a revoked role and a block
 * made through one are in force on the other's very next request (nothing
 * about a key is kept in a process), and a stream the other serves ends at
 * once on the key's revocation, through the database's signals (the
 * heartbeat here is an hour away), as it does when its person is blocked.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject, grant, refreshActor, signInAdmin, type TestActor } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';
import { postgresSkipReason } from '../support/postgres.js';

const skip = (await postgresSkipReason()) ?? false;

describe('access keys across services sharing one PostgreSQL [server]', { skip }, () => {
  let first: RunningService;
  let second: RunningService;
  let admin: TestActor;
  let projectA: number;
  let users = 0;
  const open: RawStream[] = [];

  const holderWithKey = async (permissions: string[]) => {
    const holder = await createActor(first.url, admin.token, `holder${++users}`);
    const grantId = await grant(first.url, admin.token, { type: 'user', id: holder.id }, { role: 'user', scope_type: 'project', scope_id: projectA });
    await refreshActor(first.url, holder);
    const res = await api(first.url, 'POST', '/v1/access-keys', {
      token: holder.token,
      json: { label: 'cross', expires_at: new Date(Date.now() + 86_400_000).toISOString(), scope: { permissions, project_ids: [projectA] } },
    });
    assertStatus(res, 201);
    return { holder, grantId, keyId: res.body.id as number, key: res.body.secret as string };
  };
  const readOnSecond = (key: string) => api(second.url, 'GET', `/v1/logs?project_id=${projectA}`, { token: key });

  before(async () => {
    // A heartbeat far away: a stream that ends was ended by the revocation's signal.
    const settings = { sseHeartbeatIntervalSeconds: 3600 };
    first = await startService('server', { settings });
    second = await startService('server', { settings, database: first.database });
    admin = await signInAdmin(first.url);
    const groupG = await createGroup(first.url, admin.token, 'G');
    projectA = await createProject(first.url, admin.token, groupG, 'A');
    await ingestAll(first.url, (await createKey(first.url, admin.token, projectA)).secret, [
      { level: 'info', event: 'hello', timestamp: '2026-01-01T00:00:00Z' },
    ]);
  });
  after(async () => {
    for (const s of open) s.close();
    await second.stop();
    await first.stop({ dropDatabase: true });
  });

  it('a key revoked through one service answers 401 on the other’s next request', async () => {
    const { holder, keyId, key } = await holderWithKey(['read']);
    assertStatus(await readOnSecond(key), 200);
    assertStatus(await api(first.url, 'DELETE', `/v1/access-keys/${keyId}`, { token: holder.token }), 204);
    assertStatus(await readOnSecond(key), 401, 'unauthorized');
  });

  it('a role revoked, or the person blocked, through one service is in force on the other’s next request', async () => {
    const { grantId, key } = await holderWithKey(['read']);
    assertStatus(await readOnSecond(key), 200);
    assertStatus(await api(first.url, 'DELETE', `/v1/role-assignments/${grantId}`, { token: admin.token }), 204);
    assertStatus(await readOnSecond(key), 403, 'forbidden');

    const other = await holderWithKey(['read']);
    assertStatus(await readOnSecond(other.key), 200);
    assertStatus(await api(first.url, 'POST', `/v1/users/${other.holder.id}/block`, { token: admin.token }), 200);
    assertStatus(await readOnSecond(other.key), 401, 'unauthorized');
  });

  it('a stream served by the other service ends at once when the key is revoked', async () => {
    const { holder, keyId, key } = await holderWithKey(['tail']);
    const s = assertOpen(await openRawStream(second.url, `/v1/logs/stream?project_id=${projectA}&since_id=0`, { token: key }));
    open.push(s);
    await s.waitForLogs(1, 5_000);
    assertStatus(await api(first.url, 'DELETE', `/v1/access-keys/${keyId}`, { token: holder.token }), 204);
    await s.waitClosed(5_000);
    assert.equal(s.endReason(), 'token_revoked');
  });

  it('a stream served by the other service ends at once when its person is blocked', async () => {
    const { holder, key } = await holderWithKey(['tail']);
    const s = assertOpen(await openRawStream(second.url, `/v1/logs/stream?project_id=${projectA}&since_id=0`, { token: key }));
    open.push(s);
    await s.waitForLogs(1, 5_000);
    assertStatus(await api(first.url, 'POST', `/v1/users/${holder.id}/block`, { token: admin.token }), 200);
    await s.waitClosed(5_000);
    assert.equal(s.endReason(), 'token_revoked');
  });
});
