/**
 * Groups, teams and team members over HTTP on both backends: shapes,
 * visibility inside the query, pagination and filters, membership
 * rules, token_version on member add and removal, the sole-owner
 * guard through teams, and the audit rows.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { addMember, assertStatus, auditRows, createActor, createGroup, createTeam, grant, signInAdmin, tokenWorks, type TestActor } from '../support/actors.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeEachBackend('groups and teams', (backend) => {
  let svc: RunningService;
  let url: string;
  let admin: TestActor;
  before(async () => {
    svc = await startService(backend);
    url = svc.url;
    admin = await signInAdmin(url);
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('POST /v1/groups creates a group (201) and audits group.created {name}', async () => {
    const res = await api(url, 'POST', '/v1/groups', { token: admin.token, json: { name: 'Payments', ignored: true } });
    assertStatus(res, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'id', 'name']);
    assert.equal(res.body.name, 'Payments');
    assert.match(res.body.created_at, ISO);
    const [row] = await auditRows(url, admin.token, { action: 'group.created', target_id: res.body.id });
    assert.deepEqual(
      { actor: row.actor_user_id, type: row.target_type, id: row.target_id, metadata: row.metadata },
      { actor: admin.id, type: 'group', id: res.body.id, metadata: { name: 'Payments' } },
    );
  });

  it('POST /v1/groups validates the name (400 naming the field)', async () => {
    for (const [json, reason] of [
      [{}, 'required'],
      [{ name: '' }, 'invalid'],
      [{ name: 7 }, 'invalid'],
      [{ name: 'x'.repeat(201) }, 'invalid'],
    ] as const) {
      const res = await api(url, 'POST', '/v1/groups', { token: admin.token, json });
      assertStatus(res, 400, 'invalid_request', JSON.stringify(json));
      assert.deepEqual(res.body.details, { field: 'name', reason });
    }
    assertStatus(await api(url, 'POST', '/v1/groups', { token: admin.token, raw: '{nope' }), 400, 'invalid_request');
    assertStatus(await api(url, 'POST', '/v1/groups', { token: admin.token, json: ['name'] }), 400, 'invalid_request');
  });

  it('GET /v1/groups lists only visible groups, inside the query, so the first page already holds them', async () => {
    const seen = await createGroup(url, admin.token, 'vis-seen');
    const viaTeam = await createGroup(url, admin.token, 'vis-team');
    const hidden = await createGroup(url, admin.token, 'vis-hidden');
    const projectGroup = await createGroup(url, admin.token, 'vis-project-only');
    const project = await api(url, 'POST', `/v1/groups/${projectGroup}/projects`, { token: admin.token, json: { name: 'p', retention_days: 1 } });
    const team = await createTeam(url, admin.token, viaTeam, 'readers');
    await grant(url, admin.token, { type: 'team', id: team }, { role: 'user', scope_type: 'group', scope_id: viaTeam });
    const viewer = await createActor(url, admin.token, 'group-viewer', {
      grants: [
        { role: 'user', scope_type: 'group', scope_id: seen },
        { role: 'user', scope_type: 'project', scope_id: project.body.id },
      ],
      teams: [team],
    });
    // Many newer groups the viewer cannot see: a filter after the query would leave page one empty.
    for (let i = 0; i < 5; i++) await createGroup(url, admin.token, `vis-noise-${i}`);
    const first = await api(url, 'GET', '/v1/groups?limit=1', { token: viewer.token });
    assertStatus(first, 200);
    assert.deepEqual(
      first.body.items.map((g: any) => g.id),
      [viaTeam],
    );
    assert.equal(typeof first.body.next_cursor, 'string');
    const second = await api(url, 'GET', `/v1/groups?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: viewer.token });
    assert.deepEqual(
      second.body.items.map((g: any) => g.id),
      [seen],
    );
    assert.equal(second.body.next_cursor, null);
    const all = await api(url, 'GET', '/v1/groups', { token: viewer.token });
    assert.deepEqual(
      all.body.items.map((g: any) => g.id),
      [viaTeam, seen],
    );
    assert.ok(!all.body.items.some((g: any) => g.id === hidden || g.id === projectGroup));
    // A grant-less user sees an empty list, not an error.
    const nobody = await createActor(url, admin.token, 'group-nobody');
    assert.deepEqual((await api(url, 'GET', '/v1/groups', { token: nobody.token })).body, { items: [], next_cursor: null });
  });

  it('GET /v1/groups filters by a case-insensitive substring and pages newest first with default limit 50', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push(await createGroup(url, admin.token, `Filter-Ünïcode-${i}`));
    const res = await api(url, 'GET', `/v1/groups?name=${encodeURIComponent('filter-üNÏ')}`, { token: admin.token });
    assertStatus(res, 200);
    assert.deepEqual(
      res.body.items.map((g: any) => g.id),
      [...ids].reverse(),
    );
    const paged = await api(url, 'GET', '/v1/groups?limit=2&name=filter-', { token: admin.token });
    assert.deepEqual(
      paged.body.items.map((g: any) => g.id),
      [ids[2], ids[1]],
    );
    const rest = await api(url, 'GET', `/v1/groups?limit=2&name=filter-&cursor=${encodeURIComponent(paged.body.next_cursor)}`, { token: admin.token });
    assert.deepEqual(
      rest.body.items.map((g: any) => g.id),
      [ids[0]],
    );
    assert.equal(rest.body.next_cursor, null);
    assertStatus(await api(url, 'GET', '/v1/groups?limit=0', { token: admin.token }), 400, 'invalid_request');
    assertStatus(await api(url, 'GET', '/v1/groups?cursor=forged', { token: admin.token }), 400, 'invalid_request');
    const big = await api(url, 'GET', '/v1/groups?limit=100000', { token: admin.token });
    assertStatus(big, 200);
  });

  it('teams: create (201, audited team.created {name, group_id}) and list unpaginated', async () => {
    const group = await createGroup(url, admin.token, 'team-home');
    const res = await api(url, 'POST', `/v1/groups/${group}/teams`, { token: admin.token, json: { name: 'Ops' } });
    assertStatus(res, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'group_id', 'id', 'name']);
    assert.equal(res.body.group_id, group);
    assert.match(res.body.created_at, ISO);
    const other = await createTeam(url, admin.token, group, 'Dev');
    const list = await api(url, 'GET', `/v1/groups/${group}/teams`, { token: admin.token });
    assertStatus(list, 200);
    assert.deepEqual(Object.keys(list.body), ['items']);
    assert.deepEqual(list.body.items.map((t: any) => t.id).sort(), [res.body.id, other].sort());
    const [row] = await auditRows(url, admin.token, { action: 'team.created', target_id: res.body.id });
    assert.deepEqual([row.target_type, row.actor_user_id, row.metadata], ['team', admin.id, { name: 'Ops', group_id: group }]);
    assertStatus(await api(url, 'POST', `/v1/groups/${group}/teams`, { token: admin.token, json: {} }), 400, 'invalid_request');
    assertStatus(await api(url, 'POST', '/v1/groups/999999/teams', { token: admin.token, json: { name: 'x' } }), 404, 'not_found');
    assertStatus(await api(url, 'GET', '/v1/groups/999999/teams', { token: admin.token }), 404, 'not_found');
  });

  it('members: add (204), list {user_id, username}, add again changes nothing, remove; audited with {user_id}', async () => {
    const group = await createGroup(url, admin.token, 'members-home');
    const team = await createTeam(url, admin.token, group, 'crew');
    const member = await createActor(url, admin.token, 'crew-member');
    const before = (await auditRows(url, admin.token, { action: 'team.member_added', target_id: team })).length;
    await addMember(url, admin.token, team, member.id);
    await addMember(url, admin.token, team, member.id);
    const list = await api(url, 'GET', `/v1/teams/${team}/members`, { token: admin.token });
    assert.deepEqual(list.body, { items: [{ user_id: member.id, username: 'crew-member' }] });
    const added = await auditRows(url, admin.token, { action: 'team.member_added', target_id: team });
    assert.equal(added.length, before + 1, 'adding an existing member writes no second row');
    assert.deepEqual([added[0].target_type, added[0].actor_user_id, added[0].metadata], ['team', admin.id, { user_id: member.id }]);

    assertStatus(await api(url, 'POST', `/v1/teams/${team}/members`, { token: admin.token, json: { user_id: 999999 } }), 404, 'not_found');
    assertStatus(await api(url, 'POST', `/v1/teams/${team}/members`, { token: admin.token, json: {} }), 400, 'invalid_request');
    assertStatus(await api(url, 'POST', `/v1/teams/${team}/members`, { token: admin.token, json: { user_id: '5' } }), 400, 'invalid_request');
    assertStatus(await api(url, 'POST', '/v1/teams/999999/members', { token: admin.token, json: { user_id: member.id } }), 404, 'not_found');

    assertStatus(await api(url, 'DELETE', `/v1/teams/${team}/members/${member.id}`, { token: admin.token }), 204);
    assert.deepEqual((await api(url, 'GET', `/v1/teams/${team}/members`, { token: admin.token })).body, { items: [] });
    const [removed] = await auditRows(url, admin.token, { action: 'team.member_removed', target_id: team });
    assert.deepEqual([removed.target_type, removed.actor_user_id, removed.metadata], ['team', admin.id, { user_id: member.id }]);
    // Removing a non-member is 404 and writes no row.
    assertStatus(await api(url, 'DELETE', `/v1/teams/${team}/members/${member.id}`, { token: admin.token }), 404, 'not_found');
    assert.equal((await auditRows(url, admin.token, { action: 'team.member_removed', target_id: team })).length, 1);
  });

  it('a deleted user cannot be added to a team (404)', async () => {
    const group = await createGroup(url, admin.token, 'deleted-home');
    const team = await createTeam(url, admin.token, group, 'crew');
    const gone = await createActor(url, admin.token, 'soon-deleted');
    assertStatus(await api(url, 'DELETE', `/v1/users/${gone.id}`, { token: admin.token }), 204);
    assertStatus(await api(url, 'POST', `/v1/teams/${team}/members`, { token: admin.token, json: { user_id: gone.id } }), 404, 'not_found');
  });

  it("token_version: adding a member invalidates the added user's tokens only; removing, the removed user's only", async () => {
    const group = await createGroup(url, admin.token, 'tv-home');
    const team = await createTeam(url, admin.token, group, 'crew');
    const joiner = await createActor(url, admin.token, 'tv-joiner');
    const stayer = await createActor(url, admin.token, 'tv-stayer', { teams: [team] });
    const owner = await createActor(url, admin.token, 'tv-owner', { grants: [{ role: 'owner', scope_type: 'group', scope_id: group }] });

    await addMember(url, owner.token, team, joiner.id);
    assert.equal(await tokenWorks(url, joiner.token), false, 'the added user must sign in again');
    assert.equal(await tokenWorks(url, stayer.token), true, 'another member keeps working');
    assert.equal(await tokenWorks(url, owner.token), true, 'the actor keeps working');
    const joinerAgain = (await api(url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: joiner.username, password: joiner.password } }))
      .body.access_token as string;

    assertStatus(await api(url, 'DELETE', `/v1/teams/${team}/members/${stayer.id}`, { token: owner.token }), 204);
    assert.equal(await tokenWorks(url, stayer.token), false, 'the removed user must sign in again');
    assert.equal(await tokenWorks(url, joinerAgain), true, 'the remaining member keeps working');
    assert.equal(await tokenWorks(url, owner.token), true);
  });

  it("sole-owner guard through teams: the last member of a team that is a group's only owner cannot be removed (409)", async () => {
    const group = await createGroup(url, admin.token, 'guarded');
    const team = await createTeam(url, admin.token, group, 'owners');
    await grant(url, admin.token, { type: 'team', id: team }, { role: 'owner', scope_type: 'group', scope_id: group });
    const first = await createActor(url, admin.token, 'guard-first', { teams: [team] });
    const last = await createActor(url, admin.token, 'guard-last', { teams: [team] });
    assertStatus(await api(url, 'DELETE', `/v1/teams/${team}/members/${first.id}`, { token: admin.token }), 204);
    const refused = await api(url, 'DELETE', `/v1/teams/${team}/members/${last.id}`, { token: last.token });
    assertStatus(refused, 409, 'sole_group_owner');
    assert.deepEqual(refused.body.details, { blocking_groups: [{ id: group, name: 'guarded' }] });
    assert.deepEqual(
      (await api(url, 'GET', `/v1/teams/${team}/members`, { token: admin.token })).body.items.map((m: any) => m.user_id),
      [last.id],
    );
    assert.equal(await tokenWorks(url, last.token), true, 'a refused removal bumps nothing');
    assert.equal((await auditRows(url, admin.token, { action: 'team.member_removed', target_id: team })).length, 1, 'a refused removal writes no row');
    // Once someone else owns the group directly, the last member may go.
    await createActor(url, admin.token, 'guard-direct', { grants: [{ role: 'owner', scope_type: 'group', scope_id: group }] });
    assertStatus(await api(url, 'DELETE', `/v1/teams/${team}/members/${last.id}`, { token: admin.token }), 204);
  });

  it('a team that owns no group never blocks member removal, nor does a group that never had an owner', async () => {
    const group = await createGroup(url, admin.token, 'ownerless');
    const team = await createTeam(url, admin.token, group, 'readers');
    await grant(url, admin.token, { type: 'team', id: team }, { role: 'user', scope_type: 'group', scope_id: group });
    const member = await createActor(url, admin.token, 'ownerless-member', { teams: [team] });
    assertStatus(await api(url, 'DELETE', `/v1/teams/${team}/members/${member.id}`, { token: admin.token }), 204);
  });
});
