/**
 * `GET /v1/audit-log` on both backends: the entry shape, every filter
 * (actor, action from the closed set, target, inclusive from/to), paging
 * newest first, the 400s for an unknown action and malformed filters, and
 * the retention policy fields.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, startService } from '../support/service.js';
import { assertStatus, createActor, createGroup, createTeam, signInAdmin, type TestActor } from '../support/actors.js';

const ENTRY_KEYS = ['action', 'actor_user_id', 'created_at', 'id', 'metadata', 'target_id', 'target_type'];

describeEachBackend('audit log', (backend) => {
  let owner: TestActor;
  let groupIds: number[];
  const app = serviceWithAdmin(backend, { settings: { auditRetentionDays: 400, authEventRetentionDays: 90 } });
  before(async () => {
    groupIds = [];
    for (const name of ['audit-a', 'audit-b', 'audit-c']) groupIds.push(await createGroup(app.url, app.admin.token, name));
    owner = await createActor(app.url, app.admin.token, 'audit-owner', { grants: [{ role: 'owner', scope_type: 'group', scope_id: groupIds[0]! }] });
    await createTeam(app.url, owner.token, groupIds[0]!, 'audit-team');
  });

  const get = (query: string) => api(app.url, 'GET', `/v1/audit-log${query}`, { token: app.admin.token });

  it('answers entries newest first with the retention policy in force', async () => {
    const res = await get('');
    assertStatus(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['audit_retention_days', 'auth_event_retention_days', 'items', 'next_cursor']);
    assert.equal(res.body.audit_retention_days, 400);
    assert.equal(res.body.auth_event_retention_days, 90);
    assert.equal(res.body.next_cursor, null);
    for (const item of res.body.items) assert.deepEqual(Object.keys(item).sort(), ENTRY_KEYS);
    const ids = res.body.items.map((e: any) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a: number, b: number) => b - a),
    );
    assert.equal(res.body.items[0].action, 'team.created');
  });

  it('reports null retention when none is configured (kept indefinitely)', async () => {
    const plain = await startService(backend);
    try {
      const plainAdmin = await signInAdmin(plain.url);
      const res = await api(plain.url, 'GET', '/v1/audit-log', { token: plainAdmin.token });
      assertStatus(res, 200);
      assert.equal(res.body.audit_retention_days, null);
      assert.equal(res.body.auth_event_retention_days, null);
    } finally {
      await plain.stop({ dropDatabase: true });
    }
  });

  it('filters by actor, action, target type and target id (ANDed)', async () => {
    const byActor = await get(`?actor_user_id=${owner.id}`);
    assert.ok(byActor.body.items.length > 0);
    assert.ok(byActor.body.items.every((e: any) => e.actor_user_id === owner.id));
    const groups = await get('?action=group.created');
    assert.deepEqual(
      groups.body.items.map((e: any) => e.target_id),
      [...groupIds].reverse(),
    );
    assert.ok(groups.body.items.every((e: any) => e.action === 'group.created' && e.target_type === 'group'));
    const one = await get(`?target_type=group&target_id=${groupIds[1]}`);
    assert.deepEqual(
      one.body.items.map((e: any) => [e.action, e.metadata]),
      [['group.created', { name: 'audit-b' }]],
    );
    const none = await get(`?action=group.created&actor_user_id=${owner.id}`);
    assert.deepEqual(none.body.items, []);
  });

  it('from and to are inclusive bounds on created_at', async () => {
    const [newest] = (await get('?action=group.created&limit=1')).body.items;
    const at = newest.created_at as string;
    const later = new Date(Date.parse(at) + 1).toISOString();
    const earlier = new Date(Date.parse(at) - 1).toISOString();
    const exact = await get(`?action=group.created&from=${encodeURIComponent(at)}&to=${encodeURIComponent(at)}`);
    assert.ok(exact.body.items.some((e: any) => e.id === newest.id));
    assert.ok(exact.body.items.every((e: any) => e.created_at === at));
    assert.ok(!(await get(`?action=group.created&from=${encodeURIComponent(later)}`)).body.items.some((e: any) => e.id === newest.id));
    assert.ok(!(await get(`?action=group.created&to=${encodeURIComponent(earlier)}`)).body.items.some((e: any) => e.id === newest.id));
    // An offset is honoured: the same instant written in +02:00.
    const shifted = new Date(Date.parse(at) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    assert.ok(
      (await get(`?action=group.created&from=${encodeURIComponent(shifted)}&to=${encodeURIComponent(at)}`)).body.items.some((e: any) => e.id === newest.id),
    );
  });

  it('pages newest first with cursors; a cursor of another list is refused', async () => {
    const all = (await get('')).body.items.map((e: any) => e.id);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await get(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assertStatus(res, 200);
      assert.ok(res.body.items.length <= 2);
      seen.push(...res.body.items.map((e: any) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, all);
    const groupsPage = await api(app.url, 'GET', '/v1/groups?limit=1', { token: app.admin.token });
    assertStatus(await get(`?cursor=${encodeURIComponent(groupsPage.body.next_cursor)}`), 400, 'invalid_request');
  });

  it('refuses an action outside the closed set with reason unknown, and malformed filters naming the field', async () => {
    const unknown = await get('?action=group.deleted');
    assertStatus(unknown, 400, 'invalid_request');
    assert.deepEqual(unknown.body.details, { field: 'action', reason: 'unknown' });
    for (const [query, field] of [
      ['?actor_user_id=abc', 'actor_user_id'],
      ['?target_id=-3', 'target_id'],
      ['?from=yesterday', 'from'],
      ['?to=2026-02-30T00:00:00Z', 'to'],
      ['?limit=0', 'limit'],
    ] as const) {
      const res = await get(query);
      assertStatus(res, 400, 'invalid_request', query);
      assert.deepEqual(res.body.details, { field, reason: 'invalid' }, query);
    }
  });

  it('is for admins only: a global owner is refused', async () => {
    const globalOwner = await createActor(app.url, app.admin.token, 'audit-global-owner', { grants: [{ role: 'owner', scope_type: 'global' }] });
    assertStatus(await api(app.url, 'GET', '/v1/audit-log', { token: globalOwner.token }), 403, 'forbidden');
  });
});
