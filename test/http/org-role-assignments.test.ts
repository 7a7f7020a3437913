/**
 * Role assignments over HTTP on both backends: creation and revocation with
 * the owner/admin rules and the exact 400/403/404 order, the listing by
 * scope and subject, every token_version rule for grants (user and team subjects), the
 * sole-owner guard on revocation (also through teams), and the audit rows.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import {
  assertStatus,
  auditRows,
  createActor,
  createGroup,
  createProject,
  createTeam,
  grant,
  refreshActor,
  signInAdmin,
  tokenWorks,
  type TestActor,
} from '../support/actors.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeEachBackend('role assignments', (backend) => {
  let svc: RunningService;
  let url: string;
  let admin: TestActor;
  let g: number;
  let h: number;
  let p: number;
  let q: number;
  let teamG: number;
  let teamH: number;
  let owner: TestActor;
  let target: TestActor;

  const post = (token: string, json: unknown) => api(url, 'POST', '/v1/role-assignments', { token, json });
  const body = (subjectType: string, subjectId: number, role: string, scopeType: string, scopeId: number | null) => ({
    subject_type: subjectType,
    subject_id: subjectId,
    role,
    scope_type: scopeType,
    scope_id: scopeId,
  });

  before(async () => {
    svc = await startService(backend);
    url = svc.url;
    admin = await signInAdmin(url);
    g = await createGroup(url, admin.token, 'ra-g');
    h = await createGroup(url, admin.token, 'ra-h');
    p = await createProject(url, admin.token, g, 'ra-p');
    q = await createProject(url, admin.token, h, 'ra-q');
    teamG = await createTeam(url, admin.token, g, 'team-g');
    teamH = await createTeam(url, admin.token, h, 'team-h');
    owner = await createActor(url, admin.token, 'ra-owner', { grants: [{ role: 'owner', scope_type: 'group', scope_id: g }] });
    target = await createActor(url, admin.token, 'ra-target');
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('admin creates any grant (201, RoleAssignment shape) and role_assignment.created carries the exact metadata', async () => {
    const res = await post(admin.token, body('user', target.id, 'admin', 'global', null));
    assertStatus(res, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'id', 'role', 'scope_id', 'scope_type', 'subject_id', 'subject_type']);
    assert.deepEqual(
      { ...res.body, id: 0, created_at: 'x' },
      { id: 0, subject_type: 'user', subject_id: target.id, role: 'admin', scope_type: 'global', scope_id: null, created_at: 'x' },
    );
    assert.match(res.body.created_at, ISO);
    const [row] = await auditRows(url, admin.token, { action: 'role_assignment.created', target_id: res.body.id });
    assert.deepEqual([row.target_type, row.actor_user_id], ['role_assignment', admin.id]);
    assert.deepEqual(row.metadata, { role: 'admin', scope_type: 'global', scope_id: null, subject_type: 'user', subject_id: target.id });
    // scope_id may be left out for a global grant; duplicates are allowed.
    const omitted = await post(admin.token, { subject_type: 'user', subject_id: target.id, role: 'user', scope_type: 'global' });
    assertStatus(omitted, 201);
    assertStatus(await post(admin.token, { subject_type: 'user', subject_id: target.id, role: 'user', scope_type: 'global' }), 201);
    await api(url, 'DELETE', `/v1/role-assignments/${res.body.id}`, { token: admin.token });
    await refreshActor(url, target);
  });

  it('400 invalid_request names the field for malformed bodies', async () => {
    const cases: [unknown, string, string][] = [
      [{ subject_id: target.id, role: 'user', scope_type: 'global' }, 'subject_type', 'required'],
      [body('robot', target.id, 'user', 'global', null), 'subject_type', 'invalid'],
      [{ ...body('user', target.id, 'user', 'global', null), subject_id: '1' }, 'subject_id', 'invalid'],
      [body('user', target.id, 'root', 'global', null), 'role', 'invalid'],
      [body('user', target.id, 'user', 'galaxy', null), 'scope_type', 'invalid'],
      [body('user', target.id, 'user', 'group', null), 'scope_id', 'required'],
      [{ subject_type: 'user', subject_id: target.id, role: 'user', scope_type: 'project' }, 'scope_id', 'required'],
      [body('user', target.id, 'user', 'global', g), 'scope_id', 'invalid'],
      [body('user', target.id, 'admin', 'group', g), 'scope_type', 'invalid'],
    ];
    for (const [json, field, reason] of cases) {
      const res = await post(admin.token, json);
      assertStatus(res, 400, 'invalid_request', JSON.stringify(json));
      assert.deepEqual(res.body.details, { field, reason }, JSON.stringify(json));
    }
  });

  it('404 not_found for a subject or scope that does not exist (a deleted user included)', async () => {
    const gone = await createActor(url, admin.token, 'ra-gone');
    assertStatus(await api(url, 'DELETE', `/v1/users/${gone.id}`, { token: admin.token }), 204);
    for (const json of [
      body('user', 999999, 'user', 'group', g),
      body('user', gone.id, 'user', 'group', g),
      body('team', 999999, 'user', 'group', g),
      body('user', target.id, 'user', 'group', 999999),
      body('user', target.id, 'user', 'project', 999999),
    ]) {
      assertStatus(await post(admin.token, json), 404, 'not_found', JSON.stringify(json));
      assertStatus(await post(owner.token, json), 404, 'not_found', `owner: ${JSON.stringify(json)}`);
    }
  });

  it('an owner grants owner or user inside its group and its projects, to users and to teams of that group only', async () => {
    // Every combination of subject (a user, a team of the group), role (user, owner) and scope (the group, its project).
    const subjects: [string, number][] = [
      ['user', target.id],
      ['team', teamG],
    ];
    const scopes: [string, number][] = [
      ['group', g],
      ['project', p],
    ];
    const allowed = subjects.flatMap(([type, id]) =>
      ['user', 'owner'].flatMap((role) => scopes.map(([scope, scopeId]) => body(type, id, role, scope, scopeId))),
    );
    for (const json of allowed) assertStatus(await post(owner.token, json), 201, undefined, JSON.stringify(json));
    const refused = [
      body('user', target.id, 'admin', 'global', null),
      body('user', target.id, 'owner', 'global', null),
      body('user', target.id, 'user', 'global', null),
      body('user', target.id, 'user', 'group', h),
      body('user', target.id, 'user', 'project', q),
      body('team', teamH, 'user', 'group', g),
      body('team', teamH, 'user', 'project', p),
    ];
    for (const json of refused) assertStatus(await post(owner.token, json), 403, 'forbidden', JSON.stringify(json));
    // Refusals write no audit row.
    const rows = await auditRows(url, admin.token, { action: 'role_assignment.created', actor_user_id: owner.id });
    assert.equal(rows.length, allowed.length);
  });

  it("revocation follows the creation rule: 404 missing, 403 outside the caller's rights, 204 and audited otherwise", async () => {
    const inG = await grant(url, admin.token, { type: 'user', id: target.id }, { role: 'user', scope_type: 'project', scope_id: p });
    const inH = await grant(url, admin.token, { type: 'user', id: target.id }, { role: 'user', scope_type: 'group', scope_id: h });
    const global = await grant(url, admin.token, { type: 'user', id: target.id }, { role: 'user', scope_type: 'global' });
    const teamHinG = await grant(url, admin.token, { type: 'team', id: teamH }, { role: 'user', scope_type: 'group', scope_id: g });
    assertStatus(await api(url, 'DELETE', '/v1/role-assignments/999999', { token: owner.token }), 404, 'not_found');
    for (const id of [inH, global, teamHinG]) {
      assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${id}`, { token: owner.token }), 403, 'forbidden', String(id));
    }
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${inG}`, { token: owner.token }), 204);
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${inG}`, { token: owner.token }), 404, 'not_found');
    const [row] = await auditRows(url, admin.token, { action: 'role_assignment.revoked', target_id: inG });
    assert.deepEqual([row.target_type, row.actor_user_id], ['role_assignment', owner.id]);
    assert.deepEqual(row.metadata, { role: 'user', scope_type: 'project', scope_id: p, subject_type: 'user', subject_id: target.id });
    for (const id of [inH, global, teamHinG]) assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${id}`, { token: admin.token }), 204);
    // A caller who may grant nothing is refused before any lookup.
    const plain = await createActor(url, admin.token, 'ra-plain', { grants: [{ role: 'user', scope_type: 'group', scope_id: g }] });
    assertStatus(await api(url, 'DELETE', '/v1/role-assignments/999999', { token: plain.token }), 403, 'forbidden');
    await refreshActor(url, target);
  });

  it("token_version: a user grant and its revocation invalidate that user's tokens only", async () => {
    const subject = await createActor(url, admin.token, 'tv-subject');
    const bystander = await createActor(url, admin.token, 'tv-bystander');
    const id = await grant(url, owner.token, { type: 'user', id: subject.id }, { role: 'user', scope_type: 'group', scope_id: g });
    assert.equal(await tokenWorks(url, subject.token), false);
    assert.equal(await tokenWorks(url, bystander.token), true);
    assert.equal(await tokenWorks(url, owner.token), true);
    // The new token carries the new grant.
    await refreshActor(url, subject);
    assert.deepEqual(
      (await api(url, 'GET', '/v1/groups', { token: subject.token })).body.items.map((x: any) => x.id),
      [g],
    );
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${id}`, { token: owner.token }), 204);
    assert.equal(await tokenWorks(url, subject.token), false);
    assert.equal(await tokenWorks(url, bystander.token), true);
    await refreshActor(url, subject);
    assert.deepEqual((await api(url, 'GET', '/v1/groups', { token: subject.token })).body.items, []);
  });

  it("token_version: a team grant and its revocation invalidate every member's tokens, nobody else's", async () => {
    const team = await createTeam(url, admin.token, g, 'tv-team');
    const m1 = await createActor(url, admin.token, 'tv-m1', { teams: [team] });
    const m2 = await createActor(url, admin.token, 'tv-m2', { teams: [team] });
    const outsider = await createActor(url, admin.token, 'tv-outsider');
    const id = await grant(url, owner.token, { type: 'team', id: team }, { role: 'user', scope_type: 'project', scope_id: p });
    assert.deepEqual([await tokenWorks(url, m1.token), await tokenWorks(url, m2.token)], [false, false]);
    assert.equal(await tokenWorks(url, outsider.token), true);
    await refreshActor(url, m1);
    await refreshActor(url, m2);
    assertStatus(await api(url, 'GET', `/v1/projects/${p}`, { token: m1.token }), 200);
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${id}`, { token: owner.token }), 204);
    assert.deepEqual([await tokenWorks(url, m1.token), await tokenWorks(url, m2.token)], [false, false]);
    assert.equal(await tokenWorks(url, outsider.token), true);
    assert.equal(await tokenWorks(url, owner.token), true);
  });

  it("sole-owner guard: revoking a group's last owner grant is 409 with blocking_groups; a person counts once through teams", async () => {
    const group = await createGroup(url, admin.token, 'sole');
    const solo = await createActor(url, admin.token, 'sole-owner');
    const direct = await grant(url, admin.token, { type: 'user', id: solo.id }, { role: 'owner', scope_type: 'group', scope_id: group });
    const refused = await api(url, 'DELETE', `/v1/role-assignments/${direct}`, { token: admin.token });
    assertStatus(refused, 409, 'sole_group_owner');
    assert.deepEqual(refused.body.details, { blocking_groups: [{ id: group, name: 'sole' }] });
    assert.equal((await auditRows(url, admin.token, { action: 'role_assignment.revoked', target_id: direct })).length, 0);

    // The same person also owns through a team: the direct grant may go, the team's may not.
    const team = await createTeam(url, admin.token, group, 'sole-team');
    await api(url, 'POST', `/v1/teams/${team}/members`, { token: admin.token, json: { user_id: solo.id } });
    const viaTeam = await grant(url, admin.token, { type: 'team', id: team }, { role: 'owner', scope_type: 'group', scope_id: group });
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${direct}`, { token: admin.token }), 204);
    const teamRefused = await api(url, 'DELETE', `/v1/role-assignments/${viaTeam}`, { token: admin.token });
    assertStatus(teamRefused, 409, 'sole_group_owner');
    assert.deepEqual(teamRefused.body.details, { blocking_groups: [{ id: group, name: 'sole' }] });
    // A second owner unblocks it; a group's non-owner grants never block.
    await grant(url, admin.token, { type: 'user', id: target.id }, { role: 'owner', scope_type: 'group', scope_id: group });
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${viaTeam}`, { token: admin.token }), 204);
    const reader = await grant(url, admin.token, { type: 'user', id: solo.id }, { role: 'user', scope_type: 'group', scope_id: group });
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${reader}`, { token: admin.token }), 204);
    await refreshActor(url, target);
  });

  it('sole-owner guard under concurrency: of two simultaneous owner-removing changes, exactly one succeeds', async () => {
    const x = await createActor(url, admin.token, 'race-x');
    const y = await createActor(url, admin.token, 'race-y');
    for (let i = 0; i < 4; i++) {
      const group = await createGroup(url, admin.token, `race-${i}`);
      const a = await grant(url, admin.token, { type: 'user', id: x.id }, { role: 'owner', scope_type: 'group', scope_id: group });
      // The second owner is direct in even rounds and a one-member owning team in odd ones.
      let removeSecond: () => Promise<{ status: number }>;
      if (i % 2 === 0) {
        const b = await grant(url, admin.token, { type: 'user', id: y.id }, { role: 'owner', scope_type: 'group', scope_id: group });
        removeSecond = () => api(url, 'DELETE', `/v1/role-assignments/${b}`, { token: admin.token });
      } else {
        const team = await createTeam(url, admin.token, group, 'race-team');
        await api(url, 'POST', `/v1/teams/${team}/members`, { token: admin.token, json: { user_id: y.id } });
        await grant(url, admin.token, { type: 'team', id: team }, { role: 'owner', scope_type: 'group', scope_id: group });
        removeSecond = () => api(url, 'DELETE', `/v1/teams/${team}/members/${y.id}`, { token: admin.token });
      }
      const results = await Promise.all([api(url, 'DELETE', `/v1/role-assignments/${a}`, { token: admin.token }), removeSecond()]);
      assert.deepEqual(results.map((r) => r.status).sort(), [204, 409], `round ${i}`);
    }
  });

  it('GET /v1/role-assignments: admin sees all, an owner those of its groups and their projects, others 403', async () => {
    const group = await createGroup(url, admin.token, 'listing');
    const project = await createProject(url, admin.token, group, 'listing-p');
    const lister = await createActor(url, admin.token, 'lister', { grants: [{ role: 'owner', scope_type: 'group', scope_id: group }] });
    const listerGrant = (await api(url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${lister.id}`, { token: admin.token })).body.items;
    assert.equal(listerGrant.length, 1);
    const a = await grant(url, admin.token, { type: 'user', id: target.id }, { role: 'user', scope_type: 'project', scope_id: project });
    const b = await grant(url, admin.token, { type: 'user', id: target.id }, { role: 'user', scope_type: 'group', scope_id: h });
    await refreshActor(url, lister);

    const mine = await api(url, 'GET', '/v1/role-assignments', { token: lister.token });
    assertStatus(mine, 200);
    assert.deepEqual(Object.keys(mine.body), ['items']);
    assert.deepEqual(
      mine.body.items.map((r: any) => r.id),
      [a, listerGrant[0].id],
    );
    const byScope = await api(url, 'GET', `/v1/role-assignments?scope_type=project&scope_id=${project}`, { token: lister.token });
    assert.deepEqual(
      byScope.body.items.map((r: any) => r.id),
      [a],
    );
    const bySubject = await api(url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${target.id}`, { token: lister.token });
    assert.deepEqual(
      bySubject.body.items.map((r: any) => r.id),
      [a],
      "grants outside the owner's groups stay hidden",
    );
    const all = await api(url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${target.id}`, { token: admin.token });
    assert.ok(all.body.items.some((r: any) => r.id === b) && all.body.items.some((r: any) => r.id === a));
    assert.deepEqual(
      all.body.items.map((r: any) => r.id),
      [...all.body.items.map((r: any) => r.id)].sort((x: number, y: number) => y - x),
    );

    assertStatus(await api(url, 'GET', `/v1/role-assignments?scope_type=group&scope_id=${h}`, { token: lister.token }), 403, 'forbidden');
    assertStatus(await api(url, 'GET', '/v1/role-assignments?scope_type=global', { token: lister.token }), 403, 'forbidden');
    assertStatus(await api(url, 'GET', '/v1/role-assignments?scope_type=group&scope_id=999999', { token: lister.token }), 404, 'not_found');
    assertStatus(await api(url, 'GET', '/v1/role-assignments?subject_type=team&subject_id=999999', { token: admin.token }), 404, 'not_found');
    const noType = await api(url, 'GET', `/v1/role-assignments?scope_id=${group}`, { token: lister.token });
    assertStatus(noType, 400, 'invalid_request');
    assert.deepEqual(noType.body.details, { field: 'scope_type', reason: 'required' });
    assertStatus(await api(url, 'GET', '/v1/role-assignments?subject_type=robot', { token: admin.token }), 400, 'invalid_request');
    const reader = await createActor(url, admin.token, 'listing-reader', { grants: [{ role: 'user', scope_type: 'group', scope_id: group }] });
    assertStatus(await api(url, 'GET', '/v1/role-assignments', { token: reader.token }), 403, 'forbidden');
  });

  it('concurrent revocations of one assignment: one 204, the others 404, one audit row', async () => {
    const subject = await createActor(url, admin.token, 'race-subject');
    const created = await post(admin.token, body('user', subject.id, 'user', 'project', p));
    assert.equal(created.status, 201);
    const results = await Promise.all([1, 2, 3, 4].map(() => api(url, 'DELETE', `/v1/role-assignments/${created.body.id}`, { token: admin.token })));
    assert.deepEqual(results.map((r) => r.status).sort(), [204, 404, 404, 404]);
    const rows = await auditRows(url, admin.token, { action: 'role_assignment.revoked', target_id: created.body.id });
    assert.equal(rows.length, 1);
  });
});
