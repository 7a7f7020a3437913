/**
 * A notification survives `kill -9` of the process delivering it: two
 * built `logkeep` processes on one PostgreSQL; the first records a
 * notification and fails its first delivery (503), then is killed; the
 * second takes the delivery up from the table and delivers it. The
 * notification is recorded once and delivered at least once.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { describeEachBackend, newTestDatabase, type TestDatabase } from '../support/backends.js';
import { assertBinBuilt, startServing, type RunningBin } from '../support/bin.js';
import { ADMIN_FINAL_PASSWORD, createGroup, createKey, createProject, signIn, signInAdmin } from '../support/actors.js';
import { ADMIN_PASSWORD, TEST_JWT_SECRET, api } from '../support/service.js';
import { ingestAll } from '../support/logs.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/receivers.js';

before(() => assertBinBuilt());

function startOn(database: TestDatabase): Promise<{ bin: RunningBin; url: string }> {
  const c = database.config;
  return startServing(
    [
      ...['--db-backend', 'server', '--db-server-host', String(c.dbServerHost), '--db-server-port', String(c.dbServerPort)],
      ...['--db-server-database', String(c.dbServerDatabase), '--db-server-username', String(c.dbServerUsername), '--db-server-ssl-mode', 'disable'],
      ...['--no-rate-limit-enabled', '--alert-allow-private-targets'],
    ],
    { SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD, SERVICE_DB_SERVER_PASSWORD: c.dbServerPassword ?? '' },
  );
}

describeEachBackend('alert delivery across kill -9', () => {
  let database: TestDatabase;
  let hook: WebhookReceiver;
  const bins: RunningBin[] = [];
  before(async () => {
    database = await newTestDatabase('server');
    hook = await startWebhookReceiver();
  });
  after(async () => {
    for (const b of bins) b.kill();
    await hook.close();
    await database.cleanup();
  });

  it('a notification recorded by a process killed before delivering it is delivered by the other, and recorded once', async () => {
    const first = await startOn(database);
    bins.push(first.bin);
    const second = await startOn(database);
    bins.push(second.bin);
    const admin = await signInAdmin(first.url);
    const groupId = await createGroup(first.url, admin.token, 'killed');
    const projectId = await createProject(first.url, admin.token, groupId, 'victim');
    const key = (await createKey(first.url, admin.token, projectId)).secret;
    const search = await api(first.url, 'POST', '/v1/saved-searches', { token: admin.token, json: { name: 'boom', project_id: projectId, query: 'q=boom' } });
    const rule = await api(first.url, 'POST', '/v1/alert-rules', {
      token: admin.token,
      json: { saved_search_id: search.body.id, name: 'boom', kind: 'any_match', quiet_seconds: 600, destination: { type: 'webhook', url: hook.url } },
    });
    assert.equal(rule.status, 201, rule.text);
    hook.answers.push(503);
    await ingestAll(first.url, key, [{ level: 'error', event: 'boom', timestamp: new Date().toISOString() }]);
    // The first process records it and tries once (503): it is now pending, due again in 5 s.
    await hook.waitFor(1);
    const onSecond = await signIn(second.url, 'admin', ADMIN_FINAL_PASSWORD);
    const notifications = async () => (await api(second.url, 'GET', `/v1/alert-rules/${rule.body.id}/notifications`, { token: onSecond.token })).body.items;
    while ((await notifications())[0]?.delivery.attempts !== 1) await new Promise((r) => setTimeout(r, 100));
    first.bin.child.kill('SIGKILL');
    await first.bin.exited();
    // The second process's sweep finds it due and held by nobody.
    await hook.waitFor(2);
    let items = await notifications();
    while (items[0].delivery.state !== 'delivered') {
      await new Promise((r) => setTimeout(r, 100));
      items = await notifications();
    }
    assert.equal(items.length, 1, 'recorded once');
    assert.deepEqual([items[0].kind, items[0].count, items[0].delivery.attempts], ['fired', 1, 2]);
    const ids = hook.requests.map((r) => r.headers['x-logkeep-delivery']);
    assert.deepEqual(ids, [String(items[0].id), String(items[0].id)]);
  });
}, ['server']);
