/**
 * The authorization matrix: every organisation route (groups, teams,
 * members, projects, keys, role assignments, audit log) against every kind
 * of caller, on both backends, asserting the exact status and error code of
 * each cell (401 → 404 for what the caller cannot see → 403 for what it
 * sees but may not act on; admin-only routes 403 before any lookup).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { addMember, createActor, createGroup, createKey, createProject, createTeam, grant, signInAdmin, type TestActor } from '../support/actors.js';

const CALLERS = [
  'none',
  'projectKey',
  'admin',
  'globalOwner',
  'globalUser',
  'groupOwner',
  'groupUser',
  'projectOwner',
  'projectUser',
  'otherGroupUser',
  'otherGroupOwner',
  'teamMember',
] as const;
type Caller = (typeof CALLERS)[number];
type UserCaller = Exclude<Caller, 'none' | 'projectKey'>;

/** [status, error code] expected in one cell; the code is absent on success. */
type Cell = readonly [number] | readonly [number, string];

const FORBIDDEN: Cell = [403, 'forbidden'];
const NOT_FOUND: Cell = [404, 'not_found'];

/** Builds a row: every user caller gets its cell from `rule`; no credential and a project key get 401. */
function row(rule: (caller: UserCaller) => Cell): Record<Caller, Cell> {
  const cells = { none: [401, 'unauthorized'], projectKey: [401, 'unauthorized'] } as Partial<Record<Caller, Cell>>;
  for (const c of CALLERS) if (c !== 'none' && c !== 'projectKey') cells[c] = rule(c);
  return cells as Record<Caller, Cell>;
}

const SEES_EVERYTHING: readonly UserCaller[] = ['admin', 'globalOwner', 'globalUser'];
const MANAGES_GROUP: readonly UserCaller[] = ['admin', 'globalOwner', 'groupOwner', 'teamMember'];
const SEES_GROUP: readonly UserCaller[] = [...SEES_EVERYTHING, 'groupOwner', 'groupUser', 'teamMember'];
const SEES_PROJECT: readonly UserCaller[] = [...SEES_GROUP, 'projectOwner', 'projectUser'];
const MANAGES_PROJECT: readonly UserCaller[] = [...MANAGES_GROUP, 'projectOwner'];

const adminOnly = (ok: Cell) => row((c) => (c === 'admin' ? ok : FORBIDDEN));
const anyUser = (ok: Cell) => row(() => ok);
const seeGroup = (ok: Cell) => row((c) => (SEES_GROUP.includes(c) ? ok : NOT_FOUND));
const manageGroup = (ok: Cell) => row((c) => (MANAGES_GROUP.includes(c) ? ok : SEES_GROUP.includes(c) ? FORBIDDEN : NOT_FOUND));
const seeProject = (ok: Cell) => row((c) => (SEES_PROJECT.includes(c) ? ok : NOT_FOUND));
const manageProject = (ok: Cell) => row((c) => (MANAGES_PROJECT.includes(c) ? ok : SEES_PROJECT.includes(c) ? FORBIDDEN : NOT_FOUND));
/** Role-assignment routes: 403 whenever the scope or role is outside the caller's rights. */
const grantInGroup = (ok: Cell) => row((c) => (MANAGES_GROUP.includes(c) ? ok : FORBIDDEN));

interface World {
  admin: TestActor;
  groupId: number;
  projectId: number;
  blockProjectId: number;
  teamId: number;
  plainTeamId: number;
  /** A user who is the object of member and grant cells, never a caller. */
  bystanderId: number;
}

/** One route under test: how to build the request of a cell (fresh targets where the route mutates) and the expected row. */
interface RouteCase {
  name: string;
  expected: Record<Caller, Cell>;
  request(w: World): Promise<{ method: string; path: string; json?: unknown }>;
}

const CASES: RouteCase[] = [
  { name: 'POST /v1/groups', expected: adminOnly([201]), request: async () => ({ method: 'POST', path: '/v1/groups', json: { name: 'made' } }) },
  { name: 'GET /v1/groups', expected: anyUser([200]), request: async () => ({ method: 'GET', path: '/v1/groups' }) },
  {
    name: 'POST /v1/groups/:groupId/teams',
    expected: manageGroup([201]),
    request: async (w) => ({ method: 'POST', path: `/v1/groups/${w.groupId}/teams`, json: { name: 'made' } }),
  },
  { name: 'GET /v1/groups/:groupId/teams', expected: seeGroup([200]), request: async (w) => ({ method: 'GET', path: `/v1/groups/${w.groupId}/teams` }) },
  { name: 'GET /v1/teams/:teamId/members', expected: seeGroup([200]), request: async (w) => ({ method: 'GET', path: `/v1/teams/${w.teamId}/members` }) },
  {
    name: 'POST /v1/teams/:teamId/members',
    expected: manageGroup([204]),
    request: async (w) => ({ method: 'POST', path: `/v1/teams/${w.plainTeamId}/members`, json: { user_id: w.bystanderId } }),
  },
  { name: 'GET /v1/projects', expected: anyUser([200]), request: async () => ({ method: 'GET', path: '/v1/projects' }) },
  {
    name: 'POST /v1/groups/:groupId/projects',
    expected: manageGroup([201]),
    request: async (w) => ({ method: 'POST', path: `/v1/groups/${w.groupId}/projects`, json: { name: 'made', retention_days: 7 } }),
  },
  { name: 'GET /v1/projects/:id', expected: seeProject([200]), request: async (w) => ({ method: 'GET', path: `/v1/projects/${w.projectId}` }) },
  {
    name: 'PATCH /v1/projects/:id',
    expected: manageProject([200]),
    request: async (w) => ({ method: 'PATCH', path: `/v1/projects/${w.projectId}`, json: { retention_days: 31 } }),
  },
  {
    name: 'POST /v1/projects/:id/block',
    expected: adminOnly([200]),
    request: async (w) => ({ method: 'POST', path: `/v1/projects/${w.blockProjectId}/block` }),
  },
  {
    name: 'POST /v1/projects/:id/unblock',
    expected: adminOnly([200]),
    request: async (w) => ({ method: 'POST', path: `/v1/projects/${w.blockProjectId}/unblock` }),
  },
  {
    name: 'POST /v1/projects/:id/secret-keys',
    expected: manageProject([201]),
    request: async (w) => ({ method: 'POST', path: `/v1/projects/${w.projectId}/secret-keys`, json: { label: 'made' } }),
  },
  {
    name: 'GET /v1/projects/:id/secret-keys',
    expected: seeProject([200]),
    request: async (w) => ({ method: 'GET', path: `/v1/projects/${w.projectId}/secret-keys` }),
  },
  {
    name: 'POST /v1/role-assignments',
    expected: grantInGroup([201]),
    request: async (w) => ({ method: 'POST', path: '/v1/role-assignments', json: grantBody(w) }),
  },
  {
    name: 'GET /v1/role-assignments',
    expected: grantInGroup([200]),
    request: async (w) => ({ method: 'GET', path: `/v1/role-assignments?scope_type=group&scope_id=${w.groupId}` }),
  },
  { name: 'GET /v1/audit-log', expected: adminOnly([200]), request: async () => ({ method: 'GET', path: '/v1/audit-log' }) },
];

function grantBody(w: World) {
  return { subject_type: 'user', subject_id: w.bystanderId, role: 'user', scope_type: 'project', scope_id: w.projectId };
}

describeEachBackend('authorization matrix', (backend) => {
  let svc: RunningService;
  let world: World;
  const tokens = {} as Record<Caller, string | null>;

  before(async () => {
    svc = await startService(backend);
    const url = svc.url;
    const admin = await signInAdmin(url);
    const groupId = await createGroup(url, admin.token, 'matrix-g');
    const otherGroupId = await createGroup(url, admin.token, 'matrix-h');
    const projectId = await createProject(url, admin.token, groupId, 'matrix-p');
    const blockProjectId = await createProject(url, admin.token, groupId, 'matrix-block');
    const teamId = await createTeam(url, admin.token, groupId, 'owners');
    const plainTeamId = await createTeam(url, admin.token, groupId, 'plain');
    await grant(url, admin.token, { type: 'team', id: teamId }, { role: 'owner', scope_type: 'group', scope_id: groupId });
    const bystander = await createActor(url, admin.token, 'bystander');
    const key = await createKey(url, admin.token, projectId, 'matrix');
    const make = (name: string, options: Parameters<typeof createActor>[3]) => createActor(url, admin.token, name, options).then((a) => a.token);
    tokens.none = null;
    tokens.projectKey = key.secret;
    tokens.globalOwner = await make('global-owner', { grants: [{ role: 'owner', scope_type: 'global' }] });
    tokens.globalUser = await make('global-user', { grants: [{ role: 'user', scope_type: 'global' }] });
    tokens.groupOwner = await make('group-owner', { grants: [{ role: 'owner', scope_type: 'group', scope_id: groupId }] });
    tokens.groupUser = await make('group-user', { grants: [{ role: 'user', scope_type: 'group', scope_id: groupId }] });
    tokens.projectOwner = await make('project-owner', { grants: [{ role: 'owner', scope_type: 'project', scope_id: projectId }] });
    tokens.projectUser = await make('project-user', { grants: [{ role: 'user', scope_type: 'project', scope_id: projectId }] });
    tokens.otherGroupUser = await make('other-user', { grants: [{ role: 'user', scope_type: 'group', scope_id: otherGroupId }] });
    tokens.otherGroupOwner = await make('other-owner', { grants: [{ role: 'owner', scope_type: 'group', scope_id: otherGroupId }] });
    tokens.teamMember = await make('team-member', { teams: [teamId] });
    // The admin signs in last: nothing above touched its token_version, but a fresh token costs nothing.
    tokens.admin = admin.token;
    world = { admin, groupId, projectId, blockProjectId, teamId, plainTeamId, bystanderId: bystander.id };
  });
  after(() => svc.stop({ dropDatabase: true }));

  for (const route of CASES) {
    it(`${route.name}: every caller gets its exact status and code`, async () => {
      const mismatches: string[] = [];
      for (const caller of CALLERS) {
        const { method, path, json } = await route.request(world);
        const res = await api(svc.url, method, path, { token: tokens[caller], ...(json === undefined ? {} : { json }) });
        const [status, code] = route.expected[caller];
        const gotCode = res.status >= 400 ? res.body?.error : undefined;
        if (res.status !== status || gotCode !== code)
          mismatches.push(`${caller}: expected ${status} ${code ?? ''}, got ${res.status} ${res.text.slice(0, 120)}`);
      }
      assert.deepEqual(mismatches, []);
    });
  }

  it('DELETE /v1/teams/:teamId/members/:userId: every caller, a member present before each cell', async () => {
    const expected = manageGroup([204]);
    const mismatches: string[] = [];
    for (const caller of CALLERS) {
      await addMember(svc.url, world.admin.token, world.plainTeamId, world.bystanderId);
      const res = await api(svc.url, 'DELETE', `/v1/teams/${world.plainTeamId}/members/${world.bystanderId}`, { token: tokens[caller] });
      const [status, code] = expected[caller];
      if (res.status !== status || (res.status >= 400 ? res.body?.error : undefined) !== code) mismatches.push(`${caller}: got ${res.status} ${res.text}`);
    }
    assert.deepEqual(mismatches, []);
  });

  it('DELETE /v1/projects/:id/secret-keys/:keyId: every caller, a fresh key each cell', async () => {
    const expected = manageProject([204]);
    const mismatches: string[] = [];
    for (const caller of CALLERS) {
      const key = await createKey(svc.url, world.admin.token, world.projectId);
      const res = await api(svc.url, 'DELETE', `/v1/projects/${world.projectId}/secret-keys/${key.id}`, { token: tokens[caller] });
      const [status, code] = expected[caller];
      if (res.status !== status || (res.status >= 400 ? res.body?.error : undefined) !== code) mismatches.push(`${caller}: got ${res.status} ${res.text}`);
    }
    assert.deepEqual(mismatches, []);
  });

  it('DELETE /v1/role-assignments/:id: every caller, a fresh grant each cell', async () => {
    const expected = grantInGroup([204]);
    const mismatches: string[] = [];
    for (const caller of CALLERS) {
      const created = await api(svc.url, 'POST', '/v1/role-assignments', { token: world.admin.token, json: grantBody(world) });
      assert.equal(created.status, 201);
      const res = await api(svc.url, 'DELETE', `/v1/role-assignments/${created.body.id}`, { token: tokens[caller] });
      const [status, code] = expected[caller];
      if (res.status !== status || (res.status >= 400 ? res.body?.error : undefined) !== code) mismatches.push(`${caller}: got ${res.status} ${res.text}`);
    }
    assert.deepEqual(mismatches, []);
  });

  it('follows the check order: 401 before everything, 400 path id, 404 before 403, 403 before body validation', async () => {
    const p = world.projectId;
    const cases: [Caller, string, string, unknown, Cell][] = [
      ['none', 'PATCH', '/v1/projects/abc', { retention_days: 'x' }, [401, 'unauthorized']],
      ['admin', 'GET', '/v1/projects/abc', undefined, [400, 'invalid_request']],
      ['admin', 'GET', '/v1/projects/0', undefined, [400, 'invalid_request']],
      ['admin', 'GET', '/v1/projects/999999', undefined, NOT_FOUND],
      ['admin', 'PATCH', '/v1/projects/999999', { retention_days: 'x' }, NOT_FOUND],
      ['otherGroupOwner', 'PATCH', `/v1/projects/${p}`, { retention_days: 'x' }, NOT_FOUND],
      ['groupUser', 'PATCH', `/v1/projects/${p}`, { retention_days: 'x' }, FORBIDDEN],
      ['groupOwner', 'PATCH', `/v1/projects/${p}`, { retention_days: 'x' }, [400, 'invalid_request']],
      ['groupUser', 'POST', '/v1/groups', { name: 42 }, FORBIDDEN],
      ['groupOwner', 'POST', '/v1/projects/999999/block', undefined, FORBIDDEN],
      ['admin', 'POST', '/v1/projects/999999/block', undefined, NOT_FOUND],
      ['groupUser', 'POST', '/v1/role-assignments', { role: 'nope' }, FORBIDDEN],
      ['groupOwner', 'POST', '/v1/role-assignments', { role: 'nope' }, [400, 'invalid_request']],
      ['groupUser', 'GET', '/v1/audit-log?action=nope', undefined, FORBIDDEN],
      ['admin', 'GET', '/v1/audit-log?action=nope', undefined, [400, 'invalid_request']],
    ];
    const mismatches: string[] = [];
    for (const [caller, method, path, json, [status, code]] of cases) {
      const res = await api(svc.url, method, path, { token: tokens[caller], ...(json === undefined ? {} : { json }) });
      if (res.status !== status || res.body?.error !== code)
        mismatches.push(`${caller} ${method} ${path}: expected ${status} ${code}, got ${res.status} ${res.text}`);
    }
    assert.deepEqual(mismatches, []);
  });

  it('answers 403 must_change_password on every organisation route while the password is temporary', async () => {
    const created = await api(svc.url, 'POST', '/v1/users', { token: world.admin.token, json: { username: 'temporary', password: 'temporary-password-1' } });
    assert.equal(created.status, 201);
    const login = await api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'temporary', password: 'temporary-password-1' } });
    const token = login.body.access_token as string;
    for (const route of CASES) {
      const { method, path, json } = await route.request(world);
      const res = await api(svc.url, method, path, { token, ...(json === undefined ? {} : { json }) });
      assert.equal(res.status, 403, route.name);
      assert.equal(res.body.error, 'must_change_password', route.name);
    }
  });
});
