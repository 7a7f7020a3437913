/**
 * Team membership cannot hand out what the caller could not grant, on both
 * backends. Joining a team gives its grants, so a group owner may add or
 * remove members only while the team holds nothing the owner could have
 * granted it themselves: not `admin`, nothing at global scope, nothing
 * outside the owner's groups. Otherwise 403 `forbidden`, after the 404s of
 * the path and before the body is read; administrators are not limited.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import {
  addMember,
  assertStatus,
  auditRows,
  createActor,
  createGroup,
  createProject,
  createTeam,
  grant,
  type GrantSpec,
  type TestActor,
} from '../support/actors.js';

function rolesOf(accessToken: string): { role: string; scope_type: string; scope_id: number | null }[] {
  return JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')).roles;
}

describeEachBackend('team membership and grants the caller could not make', (backend) => {
  /** Owns `home` (and `second`); `away` is someone else's group. */
  let owner: TestActor;
  let home: number;
  let second: number;
  let away: number;
  let awayProject: number;
  let homeProject: number;

  const app = serviceWithAdmin(backend);
  before(async () => {
    home = await createGroup(app.url, app.admin.token, 'esc-home');
    second = await createGroup(app.url, app.admin.token, 'esc-second');
    away = await createGroup(app.url, app.admin.token, 'esc-away');
    homeProject = await createProject(app.url, app.admin.token, home, 'esc-home-project');
    awayProject = await createProject(app.url, app.admin.token, away, 'esc-away-project');
    owner = await createActor(app.url, app.admin.token, 'esc-owner', {
      grants: [
        { role: 'owner', scope_type: 'group', scope_id: home },
        { role: 'owner', scope_type: 'group', scope_id: second },
      ],
    });
  });

  /** A team of `home` holding `grants`, made by the admin. */
  async function teamHolding(name: string, grants: GrantSpec[]): Promise<number> {
    const team = await createTeam(app.url, app.admin.token, home, name);
    for (const spec of grants) await grant(app.url, app.admin.token, { type: 'team', id: team }, spec);
    return team;
  }

  async function memberIds(team: number): Promise<number[]> {
    const res = await api(app.url, 'GET', `/v1/teams/${team}/members`, { token: app.admin.token });
    assertStatus(res, 200);
    return res.body.items.map((m: any) => m.user_id);
  }

  it('an owner cannot add themself to a team holding global admin, and is still no administrator after refreshing', async () => {
    const team = await teamHolding('esc-admins', [{ role: 'admin', scope_type: 'global' }]);
    const refused = await api(app.url, 'POST', `/v1/teams/${team}/members`, { token: owner.token, json: { user_id: owner.id } });
    assertStatus(refused, 403, 'forbidden');
    assert.deepEqual(await memberIds(team), []);
    assert.equal((await auditRows(app.url, app.admin.token, { action: 'team.member_added', target_id: team })).length, 0);

    const refreshed = await api(app.url, 'POST', '/v1/auth/token', { form: { grant_type: 'refresh_token', refresh_token: owner.refreshToken } });
    assertStatus(refreshed, 200);
    owner.token = refreshed.body.access_token;
    owner.refreshToken = refreshed.body.refresh_token;
    assert.ok(!rolesOf(owner.token).some((g) => g.role === 'admin'), JSON.stringify(rolesOf(owner.token)));
    assertStatus(await api(app.url, 'GET', '/v1/users', { token: owner.token }), 403, 'forbidden');
    assertStatus(await api(app.url, 'GET', '/v1/audit-log', { token: owner.token }), 403, 'forbidden');
  });

  it("refuses adding to a team holding owner of another group, a global grant, or a grant on another group's project", async () => {
    const cases: [string, GrantSpec][] = [
      ['esc-owns-away', { role: 'owner', scope_type: 'group', scope_id: away }],
      ['esc-owns-second', { role: 'owner', scope_type: 'group', scope_id: second }],
      ['esc-global-user', { role: 'user', scope_type: 'global' }],
      ['esc-global-owner', { role: 'owner', scope_type: 'global' }],
      ['esc-away-project', { role: 'user', scope_type: 'project', scope_id: awayProject }],
    ];
    const joiner = await createActor(app.url, app.admin.token, 'esc-joiner');
    for (const [name, spec] of cases) {
      const team = await teamHolding(name, [{ role: 'user', scope_type: 'group', scope_id: home }, spec]);
      const res = await api(app.url, 'POST', `/v1/teams/${team}/members`, { token: owner.token, json: { user_id: joiner.id } });
      assertStatus(res, 403, 'forbidden', name);
      assert.deepEqual(await memberIds(team), [], name);
    }
  });

  it('refuses removing a member of such a team (the grant stays where the admin put it)', async () => {
    const team = await teamHolding('esc-remove', [{ role: 'owner', scope_type: 'group', scope_id: away }]);
    const member = await createActor(app.url, app.admin.token, 'esc-away-owner', { teams: [team] });
    assertStatus(await api(app.url, 'DELETE', `/v1/teams/${team}/members/${member.id}`, { token: owner.token }), 403, 'forbidden');
    assert.deepEqual(await memberIds(team), [member.id]);
    // Nor can the owner take an administrator's rights away by removing them from the team that gives them.
    const admins = await teamHolding('esc-remove-admins', [{ role: 'admin', scope_type: 'global' }]);
    await addMember(app.url, app.admin.token, admins, member.id);
    assertStatus(await api(app.url, 'DELETE', `/v1/teams/${admins}/members/${member.id}`, { token: owner.token }), 403, 'forbidden');
    assert.deepEqual(await memberIds(admins), [member.id]);
  });

  it('still lets an owner add and remove members of a team holding only what the owner could grant', async () => {
    const team = await teamHolding('esc-fine', [
      { role: 'owner', scope_type: 'group', scope_id: home },
      { role: 'user', scope_type: 'project', scope_id: homeProject },
    ]);
    const empty = await createTeam(app.url, app.admin.token, home, 'esc-empty');
    const joiner = await createActor(app.url, app.admin.token, 'esc-fine-joiner');
    assertStatus(await api(app.url, 'POST', `/v1/teams/${team}/members`, { token: owner.token, json: { user_id: joiner.id } }), 204);
    assertStatus(await api(app.url, 'POST', `/v1/teams/${empty}/members`, { token: owner.token, json: { user_id: joiner.id } }), 204);
    assert.deepEqual(await memberIds(team), [joiner.id]);
    assertStatus(await api(app.url, 'DELETE', `/v1/teams/${team}/members/${joiner.id}`, { token: owner.token }), 204);
    assertStatus(await api(app.url, 'DELETE', `/v1/teams/${empty}/members/${joiner.id}`, { token: owner.token }), 204);
  });

  it('administrators are not limited', async () => {
    const team = await teamHolding('esc-admin-adds', [{ role: 'admin', scope_type: 'global' }]);
    const joiner = await createActor(app.url, app.admin.token, 'esc-admin-joiner');
    assertStatus(await api(app.url, 'POST', `/v1/teams/${team}/members`, { token: app.admin.token, json: { user_id: joiner.id } }), 204);
    assertStatus(await api(app.url, 'DELETE', `/v1/teams/${team}/members/${joiner.id}`, { token: app.admin.token }), 204);
  });

  it('keeps the check order: 404 for what cannot be seen, then 403, then the body', async () => {
    const team = await teamHolding('esc-order', [{ role: 'admin', scope_type: 'global' }]);
    const awayTeam = await createTeam(app.url, app.admin.token, away, 'esc-order-away');
    await grant(app.url, app.admin.token, { type: 'team', id: awayTeam }, { role: 'admin', scope_type: 'global' });
    // A team in a group the owner cannot see: 404 as before, escalating or not.
    assertStatus(await api(app.url, 'POST', `/v1/teams/${awayTeam}/members`, { token: owner.token, json: { user_id: owner.id } }), 404, 'not_found');
    assertStatus(await api(app.url, 'DELETE', `/v1/teams/${awayTeam}/members/${owner.id}`, { token: owner.token }), 404, 'not_found');
    // A user who is not a member: 404 as before.
    assertStatus(await api(app.url, 'DELETE', `/v1/teams/${team}/members/${owner.id}`, { token: owner.token }), 404, 'not_found');
    // 403 comes before the body is validated.
    assertStatus(await api(app.url, 'POST', `/v1/teams/${team}/members`, { token: owner.token, json: {} }), 403, 'forbidden');
    assertStatus(await api(app.url, 'POST', `/v1/teams/${team}/members`, { token: owner.token, raw: '{nope' }), 403, 'forbidden');
    assertStatus(await api(app.url, 'POST', `/v1/teams/${team}/members`, { token: owner.token, json: { user_id: 999999 } }), 403, 'forbidden');
    // A bad path id is still 400 before any lookup.
    assertStatus(await api(app.url, 'POST', '/v1/teams/x/members', { token: owner.token, json: { user_id: owner.id } }), 400, 'invalid_request');
  });
});
