/**
 * Alert rules over HTTP on both backends, on a clock the test moves: who
 * may create and change rules (owners of the search's group and
 * administrators) and who sees them (whoever reads the search), the
 * settings each kind takes, any-match firing at once and then once per
 * quiet period with the exact count that matched meanwhile, threshold
 * firing when the sliding window reaches it and resolving when it falls
 * back, the entries each notification carries, and rules that stop firing
 * when their project is blocked or their author loses access, saying why.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, auditRows, createActor, createGroup, createKey, createProject, refreshActor, signInAdmin, type TestActor } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';

const START = Date.parse('2026-03-01T12:00:00.000Z');
const RULE_KEYS = [
  'author_user_id',
  'can_change',
  'created_at',
  'destination',
  'enabled',
  'id',
  'kind',
  'name',
  'paused_reason',
  'quiet_seconds',
  'saved_search_id',
  'state',
  'state_since',
  'threshold',
  'updated_at',
  'window_seconds',
];

const entry = (event: string, level = 'error', extra: Record<string, unknown> = {}) => ({ level, event, timestamp: '2026-03-01T12:00:00Z', ...extra });

describeEachBackend('alert rules', (backend) => {
  let svc: RunningService;
  let url: string;
  let clock = START;
  let admin: TestActor;
  let group: number;
  let project: number;
  let key: string;
  let owner: TestActor;
  let member: TestActor;
  let stranger: TestActor;
  let search: number;

  before(async () => {
    svc = await startService(backend, { now: () => clock });
    url = svc.url;
    admin = await signInAdmin(url);
    group = await createGroup(url, admin.token, 'alerting');
    project = await createProject(url, admin.token, group, 'checkout');
    key = (await createKey(url, admin.token, project)).secret;
    owner = await createActor(url, admin.token, 'ar-owner', { grants: [{ role: 'owner', scope_type: 'group', scope_id: group }] });
    member = await createActor(url, admin.token, 'ar-member', { grants: [{ role: 'user', scope_type: 'group', scope_id: group }] });
    const elsewhere = await createGroup(url, admin.token, 'elsewhere');
    stranger = await createActor(url, admin.token, 'ar-stranger', { grants: [{ role: 'owner', scope_type: 'group', scope_id: elsewhere }] });
    search = await saveSearch(member, 'payment failures', 'level=error&q=payment');
  });
  after(() => svc.stop({ dropDatabase: true }));

  async function saveSearch(actor: TestActor, name: string, query: string, scope: Record<string, number> = { project_id: project }): Promise<number> {
    const res = await api(url, 'POST', '/v1/saved-searches', { token: actor.token, json: { name, query, ...scope } });
    assertStatus(res, 201);
    return res.body.id;
  }

  /** Moves the clock to `at` and signs everyone in again (access tokens live 15 minutes of that clock). */
  async function moveClockTo(at: number): Promise<void> {
    clock = at;
    for (const actor of [admin, owner, member]) await refreshActor(url, actor);
  }

  async function createRule(actor: TestActor, json: Record<string, unknown>): Promise<any> {
    const res = await api(url, 'POST', '/v1/alert-rules', { token: actor.token, json });
    assertStatus(res, 201);
    return res.body;
  }

  async function notifications(ruleId: number): Promise<any[]> {
    await svc.service.runAlertsDue();
    const res = await api(url, 'GET', `/v1/alert-rules/${ruleId}/notifications?limit=200`, { token: member.token });
    assertStatus(res, 200);
    return res.body.items;
  }

  async function rule(ruleId: number): Promise<any> {
    const res = await api(url, 'GET', `/v1/alert-rules/${ruleId}`, { token: member.token });
    assertStatus(res, 200);
    return res.body;
  }

  it("only owners of the search's group and administrators create rules; whoever reads the search sees them", async () => {
    assertStatus(
      await api(url, 'POST', '/v1/alert-rules', { token: member.token, json: { saved_search_id: search, name: 'x', kind: 'any_match', quiet_seconds: 300 } }),
      403,
      'forbidden',
    );
    assertStatus(
      await api(url, 'POST', '/v1/alert-rules', { token: stranger.token, json: { saved_search_id: search, name: 'x', kind: 'any_match', quiet_seconds: 300 } }),
      404,
      'not_found',
    );
    assertStatus(
      await api(url, 'POST', '/v1/alert-rules', { token: owner.token, json: { saved_search_id: 999_999, name: 'x', kind: 'any_match', quiet_seconds: 300 } }),
      404,
      'not_found',
    );
    const created = await createRule(owner, { saved_search_id: search, name: 'tell me', kind: 'any_match', quiet_seconds: 300, enabled: false });
    assert.deepEqual(Object.keys(created).sort(), RULE_KEYS);
    assert.deepEqual(
      { ...created, id: 0, created_at: 'x', updated_at: 'x', state_since: 'x' },
      {
        id: 0,
        saved_search_id: search,
        name: 'tell me',
        kind: 'any_match',
        quiet_seconds: 300,
        window_seconds: null,
        threshold: null,
        enabled: false,
        author_user_id: owner.id,
        state: 'ok',
        state_since: 'x',
        paused_reason: null,
        destination: null,
        can_change: true,
        created_at: 'x',
        updated_at: 'x',
      },
    );
    const [audit] = await auditRows(url, admin.token, { action: 'alert_rule.created', target_id: created.id });
    assert.deepEqual(
      [audit.actor_user_id, audit.metadata],
      [owner.id, { name: 'tell me', saved_search_id: search, kind: 'any_match', destination_type: null }],
    );
    const byAdmin = await createRule(admin, {
      saved_search_id: search,
      name: 'admin made',
      kind: 'threshold',
      window_seconds: 600,
      threshold: 5,
      enabled: false,
    });
    // A reader of the search sees both, and may change neither.
    const list = await api(url, 'GET', `/v1/alert-rules?saved_search_id=${search}`, { token: member.token });
    assertStatus(list, 200);
    assert.deepEqual(
      list.body.items.map((r: any) => [r.id, r.can_change]),
      [
        [byAdmin.id, false],
        [created.id, false],
      ],
    );
    assertStatus(await api(url, 'GET', `/v1/alert-rules/${created.id}`, { token: stranger.token }), 404, 'not_found');
    assert.deepEqual((await api(url, 'GET', '/v1/alert-rules', { token: stranger.token })).body.items, []);
    assertStatus(await api(url, 'PATCH', `/v1/alert-rules/${created.id}`, { token: member.token, json: { name: 'mine' } }), 403, 'forbidden');
    assertStatus(await api(url, 'DELETE', `/v1/alert-rules/${created.id}`, { token: member.token }), 403, 'forbidden');
    // The owner changes and deletes it, each audited.
    const patched = await api(url, 'PATCH', `/v1/alert-rules/${created.id}`, { token: owner.token, json: { name: 'tell me now', quiet_seconds: 600 } });
    assertStatus(patched, 200);
    assert.deepEqual([patched.body.name, patched.body.quiet_seconds], ['tell me now', 600]);
    const [updated] = await auditRows(url, admin.token, { action: 'alert_rule.updated', target_id: created.id });
    assert.deepEqual(updated.metadata, { changed_fields: ['name', 'quiet_seconds'] });
    assertStatus(await api(url, 'DELETE', `/v1/alert-rules/${created.id}`, { token: owner.token }), 204);
    assertStatus(await api(url, 'GET', `/v1/alert-rules/${created.id}`, { token: owner.token }), 404, 'not_found');
    assert.equal((await auditRows(url, admin.token, { action: 'alert_rule.deleted', target_id: created.id })).length, 1);
    assertStatus(await api(url, 'DELETE', `/v1/alert-rules/${byAdmin.id}`, { token: admin.token }), 204);
  });

  it('each kind takes its own settings, bounded, naming the field', async () => {
    const base = { saved_search_id: search, name: 'r' };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...base, kind: 'any_match' }, 'quiet_seconds', 'required'],
      [{ ...base, kind: 'any_match', quiet_seconds: 59 }, 'quiet_seconds', 'invalid'],
      [{ ...base, kind: 'any_match', quiet_seconds: 86_401 }, 'quiet_seconds', 'invalid'],
      [{ ...base, kind: 'any_match', quiet_seconds: 60, threshold: 3 }, 'threshold', 'invalid'],
      [{ ...base, kind: 'threshold', threshold: 3 }, 'window_seconds', 'required'],
      [{ ...base, kind: 'threshold', window_seconds: 60 }, 'threshold', 'required'],
      [{ ...base, kind: 'threshold', window_seconds: 60, threshold: 0 }, 'threshold', 'invalid'],
      [{ ...base, kind: 'threshold', window_seconds: 60, threshold: 2, quiet_seconds: 60 }, 'quiet_seconds', 'invalid'],
      [{ ...base, kind: 'sometimes', quiet_seconds: 60 }, 'kind', 'invalid'],
      [{ saved_search_id: search, kind: 'any_match', quiet_seconds: 60 }, 'name', 'required'],
    ];
    for (const [json, field, reason] of cases) {
      const res = await api(url, 'POST', '/v1/alert-rules', { token: owner.token, json });
      assertStatus(res, 400, 'invalid_request', JSON.stringify(json));
      assert.deepEqual(res.body.details, { field, reason }, JSON.stringify(json));
    }
    const crowded = await saveSearch(member, 'crowded', 'q=crowd');
    const made = [];
    for (let i = 0; i < 10; i++)
      made.push(await createRule(owner, { saved_search_id: crowded, name: `r${i}`, kind: 'any_match', quiet_seconds: 60, enabled: false }));
    const eleventh = await api(url, 'POST', '/v1/alert-rules', {
      token: owner.token,
      json: { saved_search_id: crowded, name: 'r10', kind: 'any_match', quiet_seconds: 60 },
    });
    assertStatus(eleventh, 400, 'invalid_request');
    assert.deepEqual(eleventh.body.details, { field: 'saved_search_id', reason: 'invalid' });
    // Deleting the search deletes its rules.
    assertStatus(await api(url, 'DELETE', `/v1/saved-searches/${crowded}`, { token: member.token }), 204);
    assertStatus(await api(url, 'GET', `/v1/alert-rules/${made[0].id}`, { token: admin.token }), 404, 'not_found');
    // A change must still fit the kind.
    const r = await createRule(owner, { saved_search_id: search, name: 'fits', kind: 'threshold', window_seconds: 60, threshold: 2, enabled: false });
    const res = await api(url, 'PATCH', `/v1/alert-rules/${r.id}`, { token: owner.token, json: { threshold: null } });
    assertStatus(res, 400, 'invalid_request');
    assert.deepEqual(res.body.details, { field: 'threshold', reason: 'required' });
    assertStatus(await api(url, 'DELETE', `/v1/alert-rules/${r.id}`, { token: owner.token }), 204);
  });

  it('any_match notifies the first match at once, then once per quiet period with the exact count that matched meanwhile', async () => {
    await moveClockTo(START + 3_600_000);
    const s = await saveSearch(member, 'timeouts', 'level=error&q=timeout');
    const r = await createRule(owner, { saved_search_id: s, name: 'timeouts', kind: 'any_match', quiet_seconds: 300 });
    await ingestAll(url, key, [
      entry('upstream timeout', 'error', { n: 1 }),
      entry('upstream timeout', 'info'),
      entry('all good'),
      entry('db timeout', 'critical', { n: 2 }),
    ]);
    let seen = await notifications(r.id);
    assert.equal(seen.length, 1);
    assert.deepEqual(
      [seen[0].kind, seen[0].count, seen[0].window_start, seen[0].window_end],
      ['fired', 2, new Date(clock).toISOString(), new Date(clock).toISOString()],
    );
    assert.deepEqual(
      seen[0].entries.map((e: any) => [e.event, e.n, e.project_id]),
      [
        ['upstream timeout', 1, project],
        ['db timeout', 2, project],
      ],
    );
    assert.equal((await rule(r.id)).state, 'firing');
    // During the quiet period: counted, not notified.
    clock += 60_000;
    await ingestAll(url, key, [entry('timeout again', 'error', { n: 3 })]);
    clock += 60_000;
    await ingestAll(url, key, [entry('timeout once more', 'error', { n: 4 }), entry('timeout and more', 'error', { n: 5 })]);
    assert.equal((await notifications(r.id)).length, 1);
    // The quiet period ends: one notification with the three, and their entries.
    clock = START + 3_600_000 + 300_000;
    seen = await notifications(r.id);
    assert.equal(seen.length, 2);
    assert.deepEqual([seen[0].kind, seen[0].count], ['repeated', 3]);
    assert.deepEqual(
      seen[0].entries.map((e: any) => e.n),
      [3, 4, 5],
    );
    assert.deepEqual([seen[0].window_start, seen[0].window_end], [new Date(START + 3_600_000).toISOString(), new Date(clock).toISOString()]);
    // A quiet period without matches returns the rule to ok; the next match notifies at once.
    clock += 300_000;
    assert.equal((await notifications(r.id)).length, 2);
    assert.equal((await rule(r.id)).state, 'ok');
    clock += 1_000;
    await ingestAll(url, key, [entry('timeout after the calm', 'error', { n: 6 })]);
    seen = await notifications(r.id);
    assert.deepEqual(
      seen.map((n) => [n.kind, n.count]),
      [
        ['fired', 1],
        ['repeated', 3],
        ['fired', 2],
      ],
    );
  });

  it('threshold fires when the sliding window reaches it and resolves when the count falls back below', async () => {
    await moveClockTo(START + 7_200_000);
    const s = await saveSearch(member, 'declines', 'q=declined&category=payments');
    const r = await createRule(owner, { saved_search_id: s, name: 'declines', kind: 'threshold', window_seconds: 120, threshold: 4 });
    const declined = (n: number) => entry('card declined', 'warning', { category: 'payments', n });
    await ingestAll(url, key, [declined(1), declined(2), entry('card declined', 'warning', { category: 'other' })]);
    clock += 30_000;
    await ingestAll(url, key, [declined(3)]);
    assert.deepEqual(await notifications(r.id), []);
    assert.equal((await rule(r.id)).state, 'ok');
    clock += 30_000;
    await ingestAll(url, key, [declined(4), declined(5)]);
    let seen = await notifications(r.id);
    assert.equal(seen.length, 1);
    assert.deepEqual([seen[0].kind, seen[0].count], ['fired', 5]);
    assert.deepEqual(
      seen[0].entries.map((e: any) => e.n),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual([seen[0].window_start, seen[0].window_end], [new Date(clock - 120_000).toISOString(), new Date(clock).toISOString()]);
    assert.equal((await rule(r.id)).state, 'firing');
    // The first two leave the window 120 s after they came: three are left, below 4, so it resolves.
    clock = START + 7_200_000 + 119_000;
    assert.equal((await notifications(r.id)).length, 1, 'all five still inside the window');
    clock = START + 7_200_000 + 120_000;
    seen = await notifications(r.id);
    assert.deepEqual(
      seen.map((n) => [n.kind, n.count]),
      [
        ['resolved', 3],
        ['fired', 5],
      ],
    );
    assert.deepEqual(seen[0].entries, []);
    assert.equal((await rule(r.id)).state, 'ok');
  });

  it('a rule of a blocked project, or whose author lost read access, stops firing and says why', async () => {
    await moveClockTo(START + 10_800_000);
    const other = await createProject(url, admin.token, group, 'soon-blocked');
    const otherKey = (await createKey(url, admin.token, other)).secret;
    const s = await saveSearch(member, 'anything', '', { project_id: other });
    const r = await createRule(owner, { saved_search_id: s, name: 'anything', kind: 'any_match', quiet_seconds: 60 });
    assertStatus(await api(url, 'POST', `/v1/projects/${other}/block`, { token: admin.token }), 200);
    assert.deepEqual([(await rule(r.id)).paused_reason], ['project_blocked']);
    assertStatus(await api(url, 'POST', `/v1/projects/${other}/unblock`, { token: admin.token }), 200);
    assert.equal((await rule(r.id)).paused_reason, null);
    // The author loses the group: entries no longer notify.
    const grants = await api(url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${owner.id}`, { token: admin.token });
    const keeper = await createActor(url, admin.token, 'ar-keeper', { grants: [{ role: 'owner', scope_type: 'group', scope_id: group }] });
    for (const g of grants.body.items) assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${g.id}`, { token: admin.token }), 204);
    await ingestAll(url, otherKey, [entry('something')]);
    assert.deepEqual(await notifications(r.id), []);
    assert.equal((await rule(r.id)).paused_reason, 'author_lost_access');
    assert.ok(keeper.id > 0);
  });
});
