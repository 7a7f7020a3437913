/**
 * U+0000 in any text field or list filter of the user, organisation, role
 * and audit routes answers 400 `invalid_request` naming the field, on both
 * backends (PostgreSQL text cannot hold it, so it used to end in a 500).
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { createActor, createProject, createTeam, type TestActor } from '../support/actors.js';

const NUL = '\u0000';

function assertNamesField(res: { status: number; body: any; text: string }, field: string, what: string): void {
  assert.equal(res.status, 400, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.body.error, 'invalid_request', what);
  assert.deepEqual(res.body.details, { field, reason: 'invalid' }, what);
}

describeEachBackend('U+0000 in text fields and filters', (backend) => {
  let member: TestActor;
  let projectId: number;
  const app = serviceWithAdmin(backend, { group: 'nul-group' });
  before(async () => {
    projectId = await createProject(app.url, app.admin.token, app.groupId, 'nul-project');
    member = await createActor(app.url, app.admin.token, 'nul-member');
  });

  it('POST /v1/users: username, password, display_name, email', async () => {
    const valid = { username: 'nul-new', password: 'temporary-pass-1', display_name: 'New', email: 'new@example.com' };
    for (const field of Object.keys(valid) as (keyof typeof valid)[]) {
      const json = { ...valid, [field]: `${valid[field].slice(0, 3)}${NUL}${valid[field].slice(3)}` };
      assertNamesField(await api(app.url, 'POST', '/v1/users', { token: app.admin.token, json }), field, `POST /v1/users ${field}`);
    }
    assertNamesField(await api(app.url, 'POST', '/v1/users', { token: app.admin.token, json: { ...valid, username: NUL } }), 'username', 'a lone NUL');
    // Nothing was created by the refused requests.
    assert.equal((await api(app.url, 'GET', '/v1/users?username=nul-new', { token: app.admin.token })).body.items.length, 0);
  });

  it('PATCH /v1/users/:id: email, display_name, password', async () => {
    for (const [field, value] of [
      ['email', `a${NUL}@example.com`],
      ['display_name', `Name${NUL}`],
      ['password', `new-password-1${NUL}`],
    ] as const) {
      assertNamesField(await api(app.url, 'PATCH', `/v1/users/${member.id}`, { token: app.admin.token, json: { [field]: value } }), field, `PATCH ${field}`);
    }
  });

  it('names of groups, teams and projects, and secret key labels', async () => {
    const teamId = await createTeam(app.url, app.admin.token, app.groupId, 'nul-team');
    assert.ok(teamId > 0);
    assertNamesField(await api(app.url, 'POST', '/v1/groups', { token: app.admin.token, json: { name: `g${NUL}` } }), 'name', 'group name');
    assertNamesField(await api(app.url, 'POST', `/v1/groups/${app.groupId}/teams`, { token: app.admin.token, json: { name: `t${NUL}` } }), 'name', 'team name');
    assertNamesField(
      await api(app.url, 'POST', `/v1/groups/${app.groupId}/projects`, { token: app.admin.token, json: { name: `p${NUL}`, retention_days: 1 } }),
      'name',
      'project name',
    );
    assertNamesField(
      await api(app.url, 'POST', `/v1/projects/${projectId}/secret-keys`, { token: app.admin.token, json: { label: `k${NUL}` } }),
      'label',
      'key label',
    );
  });

  it('passwords of change-password and DELETE /v1/users/me', async () => {
    assertNamesField(
      await api(app.url, 'POST', '/v1/auth/change-password', {
        token: member.token,
        json: { current_password: `${member.password}${NUL}`, new_password: 'another-password-1' },
      }),
      'current_password',
      'current_password',
    );
    assertNamesField(
      await api(app.url, 'POST', '/v1/auth/change-password', {
        token: member.token,
        json: { current_password: member.password, new_password: `another-password-1${NUL}` },
      }),
      'new_password',
      'new_password',
    );
    assertNamesField(
      await api(app.url, 'DELETE', '/v1/users/me', { token: member.token, json: { password: `${member.password}${NUL}` } }),
      'password',
      'DELETE me',
    );
    // The account is untouched: the same token still works.
    assert.equal((await api(app.url, 'GET', '/v1/groups', { token: member.token })).status, 200);
  });

  it('every filter of the admin list routes', async () => {
    const nul = encodeURIComponent(NUL);
    const cases: [string, string][] = [
      ['/v1/users', 'username'],
      ['/v1/users', 'cursor'],
      ['/v1/users', 'limit'],
      ['/v1/groups', 'name'],
      ['/v1/groups', 'cursor'],
      ['/v1/groups', 'limit'],
      ['/v1/projects', 'name'],
      ['/v1/projects', 'group_id'],
      ['/v1/projects', 'cursor'],
      ['/v1/projects', 'limit'],
      ['/v1/audit-log', 'action'],
      ['/v1/audit-log', 'target_type'],
      ['/v1/audit-log', 'actor_user_id'],
      ['/v1/audit-log', 'target_id'],
      ['/v1/audit-log', 'from'],
      ['/v1/audit-log', 'to'],
      ['/v1/audit-log', 'cursor'],
      ['/v1/audit-log', 'limit'],
      ['/v1/role-assignments', 'subject_type'],
      ['/v1/role-assignments', 'scope_type'],
    ];
    for (const [path, param] of cases) {
      for (const value of [nul, `x${nul}y`]) {
        assertNamesField(await api(app.url, 'GET', `${path}?${param}=${value}`, { token: app.admin.token }), param, `${path}?${param}=${value}`);
      }
    }
    // Id filters need their type; with it, a NUL id is refused naming the id.
    assertNamesField(
      await api(app.url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=1${nul}`, { token: app.admin.token }),
      'subject_id',
      'subject_id',
    );
    assertNamesField(await api(app.url, 'GET', `/v1/role-assignments?scope_type=group&scope_id=1${nul}`, { token: app.admin.token }), 'scope_id', 'scope_id');
  });
});
