/**
 * Alert rules with two services on one PostgreSQL: each counts the entries
 * it stores, the rule's row lock makes one of them record each
 * notification, exactly once, with the exact count from both, and each
 * notification reaches the receiver once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, createGroup, createKey, createProject, refreshActor, signInAdmin, type TestActor } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { postgresSkipReason } from '../support/postgres.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/receivers.js';

const skip = (await postgresSkipReason()) ?? false;
const START = Date.parse('2026-05-01T10:00:00.000Z');
const entry = (event: string, n: number) => ({ level: 'error', event, timestamp: '2026-05-01T10:00:00Z', n });

describe('alert rules across services sharing one PostgreSQL [server]', { skip }, () => {
  let first: RunningService;
  let second: RunningService | undefined;
  let hook: WebhookReceiver;
  let clock = START;
  let admin: TestActor;
  let key: string;
  let anyMatch: number;
  let threshold: number;

  before(async () => {
    hook = await startWebhookReceiver();
    const settings = { alertAllowPrivateTargets: true };
    first = await startService('server', { settings, now: () => clock });
    admin = await signInAdmin(first.url);
    const group = await createGroup(first.url, admin.token, 'shared');
    const project = await createProject(first.url, admin.token, group, 'both');
    key = (await createKey(first.url, admin.token, project)).secret;
    const rule = async (query: string, json: Record<string, unknown>) => {
      const search = await api(first.url, 'POST', '/v1/saved-searches', { token: admin.token, json: { name: query, project_id: project, query } });
      const res = await api(first.url, 'POST', '/v1/alert-rules', {
        token: admin.token,
        json: { saved_search_id: search.body.id, name: query, destination: { type: 'webhook', url: hook.url }, ...json },
      });
      assertStatus(res, 201);
      return res.body.id as number;
    };
    anyMatch = await rule('q=crossing', { kind: 'any_match', quiet_seconds: 300 });
    threshold = await rule('q=surge', { kind: 'threshold', window_seconds: 60, threshold: 6 });
    // Started after the rules exist, so it holds them from its start.
    second = await startService('server', { settings, now: () => clock, database: first.database });
  });
  after(async () => {
    await second?.stop();
    await first.stop({ dropDatabase: true });
    await hook.close();
  });

  /**
   * Twice: a delivery one service recorded may have been claimed by the
   * other's periodic sweep meanwhile; the second pass waits for that attempt.
   */
  async function settled(): Promise<void> {
    await Promise.all([first.service.runAlertsDue(), second!.service.runAlertsDue()]);
    await Promise.all([first.service.runAlertsDue(), second!.service.runAlertsDue()]);
  }

  async function notifications(ruleId: number): Promise<any[]> {
    await settled();
    const res = await api(first.url, 'GET', `/v1/alert-rules/${ruleId}/notifications`, { token: admin.token });
    assertStatus(res, 200);
    return res.body.items;
  }

  it('any_match: entries stored by both at once make one notification, and the rest is counted once', async () => {
    await Promise.all([
      ingestAll(first.url, key, [entry('crossing one', 1)]),
      ingestAll(second!.url, key, [entry('crossing two', 2), entry('crossing three', 3)]),
    ]);
    let seen = await notifications(anyMatch);
    assert.equal(seen.length, 1, 'one fired');
    assert.equal(seen[0].kind, 'fired');
    // Whichever process decided first fired with its own entries; the other's were counted for the quiet period.
    const firedCount = seen[0].count as number;
    assert.ok(firedCount === 1 || firedCount === 2, String(firedCount));
    await Promise.all([ingestAll(first.url, key, [entry('crossing four', 4)]), ingestAll(second!.url, key, [entry('crossing five', 5)])]);
    // Decided inside the quiet period (evaluation runs after the 202), before the clock moves past it.
    assert.equal((await notifications(anyMatch)).length, 1);
    clock = START + 300_000;
    seen = await notifications(anyMatch);
    assert.deepEqual(
      seen.map((n) => n.kind),
      ['repeated', 'fired'],
    );
    assert.equal(seen[0].count + firedCount, 5, 'every entry counted once');
    for (const n of seen) assert.equal(n.delivery.state, 'delivered');
    const deliveries = hook.requests.map((r) => r.headers['x-logkeep-delivery']);
    for (const n of seen) assert.equal(deliveries.filter((d) => d === String(n.id)).length, 1, `notification ${n.id} delivered once`);
  });

  it('threshold: the window counts the entries of both', async () => {
    clock = START + 3_600_000;
    await refreshActor(first.url, admin);
    const surge = (n: number) => ({ ...entry('surge', n) });
    await Promise.all([ingestAll(first.url, key, [surge(1), surge(2), surge(3)]), ingestAll(second!.url, key, [surge(4), surge(5)])]);
    assert.deepEqual(await notifications(threshold), []);
    await ingestAll(second!.url, key, [surge(6)]);
    const [fired, ...rest] = await notifications(threshold);
    assert.equal(rest.length, 0);
    assert.deepEqual([fired.kind, fired.count], ['fired', 6]);
    assert.deepEqual(fired.entries.map((e: any) => e.n).sort(), [1, 2, 3, 4, 5, 6]);
    clock += 60_000;
    const seen = await notifications(threshold);
    assert.deepEqual(
      seen.map((n) => [n.kind, n.count]),
      [
        ['resolved', 0],
        ['fired', 6],
      ],
    );
  });
});
