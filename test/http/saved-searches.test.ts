/**
 * Saved searches over HTTP on both backends: who may save one (anyone who
 * may read its scope), who sees it (everyone who may read its scope), who
 * may change or delete it (its author, owners, administrators), the query
 * checked as `GET /v1/logs` checks its filters, and an audit row for every
 * change.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import { assertStatus, auditRows, createActor, createGroup, createProject, signInAdmin, type TestActor } from '../support/actors.js';

const KEYS = ['author_user_id', 'can_change', 'created_at', 'group_id', 'id', 'name', 'project_id', 'query', 'updated_at'];

describeEachBackend('saved searches', (backend) => {
  let svc: RunningService;
  let url: string;
  let admin: TestActor;
  let group: number;
  let otherGroup: number;
  let project: number;
  let sibling: number;
  let outside: number;
  /** `user` on the group: reads both of its projects and the group. */
  let member: TestActor;
  /** `user` on `project` only. */
  let projectReader: TestActor;
  /** `owner` of the group. */
  let owner: TestActor;
  /** `user` on the other group only. */
  let stranger: TestActor;

  before(async () => {
    svc = await startService(backend);
    url = svc.url;
    admin = await signInAdmin(url);
    group = await createGroup(url, admin.token, 'searches');
    otherGroup = await createGroup(url, admin.token, 'elsewhere');
    project = await createProject(url, admin.token, group, 'api');
    sibling = await createProject(url, admin.token, group, 'worker');
    outside = await createProject(url, admin.token, otherGroup, 'billing');
    member = await createActor(url, admin.token, 'ss-member', { grants: [{ role: 'user', scope_type: 'group', scope_id: group }] });
    projectReader = await createActor(url, admin.token, 'ss-reader', { grants: [{ role: 'user', scope_type: 'project', scope_id: project }] });
    owner = await createActor(url, admin.token, 'ss-owner', { grants: [{ role: 'owner', scope_type: 'group', scope_id: group }] });
    stranger = await createActor(url, admin.token, 'ss-stranger', { grants: [{ role: 'user', scope_type: 'group', scope_id: otherGroup }] });
  });
  after(() => svc.stop({ dropDatabase: true }));

  async function save(actor: TestActor, json: Record<string, unknown>): Promise<any> {
    const res = await api(url, 'POST', '/v1/saved-searches', { token: actor.token, json });
    assertStatus(res, 201);
    return res.body;
  }

  it('anyone who may read a project saves a search of it; the answer and the audit row say what was saved', async () => {
    const res = await api(url, 'POST', '/v1/saved-searches', {
      token: projectReader.token,
      json: { name: 'Disk errors', project_id: project, query: '?level=error&q=disk&context.host=db-1' },
    });
    assertStatus(res, 201);
    assert.deepEqual(Object.keys(res.body).sort(), KEYS);
    assert.deepEqual(
      { ...res.body, id: 0, created_at: 'x', updated_at: 'x' },
      {
        id: 0,
        name: 'Disk errors',
        project_id: project,
        group_id: null,
        query: 'level=error&q=disk&context.host=db-1',
        author_user_id: projectReader.id,
        can_change: true,
        created_at: 'x',
        updated_at: 'x',
      },
    );
    assert.equal(res.body.created_at, res.body.updated_at);
    const [row] = await auditRows(url, admin.token, { action: 'saved_search.created', target_id: res.body.id });
    assert.deepEqual(
      [row.target_type, row.actor_user_id, row.metadata],
      ['saved_search', projectReader.id, { name: 'Disk errors', project_id: project, group_id: null, query: 'level=error&q=disk&context.host=db-1' }],
    );
    // A query may be empty: every entry of the scope.
    const all = await save(member, { name: 'Everything', group_id: group });
    assert.deepEqual([all.query, all.group_id, all.project_id], ['', group, null]);
  });

  it('saving needs read access to the scope, checked as GET /v1/logs checks it', async () => {
    const cases: [TestActor, Record<string, unknown>, number, string][] = [
      [projectReader, { name: 'x', group_id: group }, 403, 'forbidden'], // a project grant does not reveal the group
      [projectReader, { name: 'x', project_id: sibling }, 403, 'forbidden'],
      [stranger, { name: 'x', project_id: project }, 403, 'forbidden'],
      [member, { name: 'x', project_id: 999_999 }, 404, 'not_found'],
      [member, { name: 'x', group_id: 999_999 }, 404, 'not_found'],
    ];
    for (const [actor, json, status, code] of cases) {
      assertStatus(await api(url, 'POST', '/v1/saved-searches', { token: actor.token, json }), status, code, `${actor.username} ${JSON.stringify(json)}`);
    }
    const blocked = await createProject(url, admin.token, group, 'blocked-one');
    assertStatus(await api(url, 'POST', `/v1/projects/${blocked}/block`, { token: admin.token }), 200);
    assertStatus(await api(url, 'POST', '/v1/saved-searches', { token: member.token, json: { name: 'x', project_id: blocked } }), 403, 'project_blocked');
    assert.equal((await auditRows(url, admin.token, { action: 'saved_search.created', actor_user_id: stranger.id })).length, 0);
  });

  it('the body and the query are checked, naming the field', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ project_id: project }, 'name', 'required'],
      [{ name: '', project_id: project }, 'name', 'invalid'],
      [{ name: 'x' }, 'project_id', 'invalid'],
      [{ name: 'x', project_id: project, group_id: group }, 'project_id', 'invalid'],
      [{ name: 'x', project_id: 'one' }, 'project_id', 'invalid'],
      [{ name: 'x', project_id: project, query: 7 }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: 'level=loud' }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: 'from=yesterday' }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: 'q=%20%2B' }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: 'context..a=1' }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: `project_id=${project}` }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: 'limit=5' }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: 'cursor=abc' }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: 'colour=red' }, 'query', 'invalid'],
      [{ name: 'x', project_id: project, query: `q=${'a'.repeat(4097)}` }, 'query', 'invalid'],
    ];
    for (const [json, field, reason] of cases) {
      const res = await api(url, 'POST', '/v1/saved-searches', { token: member.token, json });
      assertStatus(res, 400, 'invalid_request', JSON.stringify(json).slice(0, 80));
      assert.deepEqual(res.body.details, { field, reason }, JSON.stringify(json).slice(0, 80));
    }
    // Exactly what GET /v1/logs accepts is accepted.
    const query = 'level=warning&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00&q=time*+out&category=db&logger=pool&request_id=r-1&context.user.id=42';
    const saved = await save(member, { name: 'every filter', project_id: project, query });
    assertStatus(await api(url, 'GET', `/v1/logs?project_id=${project}&${saved.query}`, { token: member.token }), 200);
  });

  it('everyone who may read the scope sees a search; nobody else does, and to them it does not exist', async () => {
    const ofProject = await save(member, { name: 'api only', project_id: project, query: 'level=error' });
    const ofSibling = await save(member, { name: 'worker only', project_id: sibling });
    const ofGroup = await save(member, { name: 'whole group', group_id: group });
    const ofOutside = await save(stranger, { name: 'billing', project_id: outside });
    const ids = async (actor: TestActor, query = '') => {
      const res = await api(url, 'GET', `/v1/saved-searches?limit=200${query}`, { token: actor.token });
      assertStatus(res, 200);
      return res.body.items.map((s: any) => s.id);
    };
    const mine = [ofProject.id, ofSibling.id, ofGroup.id];
    assert.deepEqual(
      (await ids(member)).filter((id: number) => [...mine, ofOutside.id].includes(id)),
      [ofGroup.id, ofSibling.id, ofProject.id],
    );
    assert.deepEqual(
      (await ids(projectReader)).filter((id: number) => [...mine, ofOutside.id].includes(id)),
      [ofProject.id],
    );
    assert.deepEqual(
      (await ids(stranger)).filter((id: number) => [...mine, ofOutside.id].includes(id)),
      [ofOutside.id],
    );
    assert.ok((await ids(admin)).includes(ofOutside.id));
    // Filters: one project's searches, one group's (not its projects').
    assert.ok((await ids(member, `&project_id=${sibling}`)).every((id: number) => id !== ofProject.id && id !== ofGroup.id));
    assert.ok((await ids(member, `&project_id=${sibling}`)).includes(ofSibling.id));
    assert.deepEqual((await ids(member, `&group_id=${group}`)).includes(ofProject.id), false);
    assert.ok((await ids(member, `&group_id=${group}`)).includes(ofGroup.id));
    assertStatus(await api(url, 'GET', '/v1/saved-searches?project_id=abc', { token: member.token }), 400, 'invalid_request');
    // One by id: the same rule, 404 to those who cannot read the scope.
    const got = await api(url, 'GET', `/v1/saved-searches/${ofProject.id}`, { token: projectReader.token });
    assertStatus(got, 200);
    assert.deepEqual({ ...got.body, can_change: true }, { ...ofProject, can_change: true });
    assert.equal(got.body.can_change, false);
    assertStatus(await api(url, 'GET', `/v1/saved-searches/${ofGroup.id}`, { token: projectReader.token }), 404, 'not_found');
    assertStatus(await api(url, 'GET', `/v1/saved-searches/${ofOutside.id}`, { token: member.token }), 404, 'not_found');
    assertStatus(await api(url, 'PATCH', `/v1/saved-searches/${ofOutside.id}`, { token: member.token, json: { name: 'mine now' } }), 404, 'not_found');
    assertStatus(await api(url, 'DELETE', `/v1/saved-searches/${ofOutside.id}`, { token: member.token }), 404, 'not_found');
    assertStatus(await api(url, 'GET', '/v1/saved-searches/999999', { token: admin.token }), 404, 'not_found');
  });

  it('pages newest first with a cursor of its own', async () => {
    const pageGroup = await createGroup(url, admin.token, 'paged');
    const reader = await createActor(url, admin.token, 'ss-pager', { grants: [{ role: 'user', scope_type: 'group', scope_id: pageGroup }] });
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await save(reader, { name: `p${i}`, group_id: pageGroup })).id);
    const first = await api(url, 'GET', '/v1/saved-searches?limit=2', { token: reader.token });
    assert.deepEqual(
      first.body.items.map((s: any) => s.id),
      [made[2], made[1]],
    );
    const next = await api(url, 'GET', `/v1/saved-searches?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: reader.token });
    assert.deepEqual([next.body.items.map((s: any) => s.id), next.body.next_cursor], [[made[0]], null]);
    assertStatus(await api(url, 'GET', `/v1/projects?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: reader.token }), 400, 'invalid_request');
  });

  it('only its author, owners of its group and administrators change or delete it, each change audited', async () => {
    const search = await save(member, { name: 'mine', project_id: project, query: 'level=error' });
    // Another reader sees it but may not change it: 403, before the body is read.
    assertStatus(await api(url, 'PATCH', `/v1/saved-searches/${search.id}`, { token: projectReader.token, json: { name: 'theirs' } }), 403, 'forbidden');
    assertStatus(await api(url, 'PATCH', `/v1/saved-searches/${search.id}`, { token: projectReader.token, json: { name: 7 } }), 403, 'forbidden');
    assertStatus(await api(url, 'DELETE', `/v1/saved-searches/${search.id}`, { token: projectReader.token }), 403, 'forbidden');
    // The author.
    const renamed = await api(url, 'PATCH', `/v1/saved-searches/${search.id}`, { token: member.token, json: { name: 'renamed', query: 'level=critical' } });
    assertStatus(renamed, 200);
    assert.deepEqual([renamed.body.name, renamed.body.query, renamed.body.can_change], ['renamed', 'level=critical', true]);
    assert.ok(renamed.body.updated_at >= renamed.body.created_at);
    let rows = await auditRows(url, admin.token, { action: 'saved_search.updated', target_id: search.id });
    assert.deepEqual(
      rows.map((r) => [r.actor_user_id, r.metadata]),
      [[member.id, { changed_fields: ['name', 'query'] }]],
    );
    // A change that changes nothing writes nothing.
    assertStatus(await api(url, 'PATCH', `/v1/saved-searches/${search.id}`, { token: member.token, json: { name: 'renamed' } }), 200);
    assert.equal((await auditRows(url, admin.token, { action: 'saved_search.updated', target_id: search.id })).length, 1);
    // Its body is checked as on creation.
    const bad = await api(url, 'PATCH', `/v1/saved-searches/${search.id}`, { token: member.token, json: { query: 'group_id=1' } });
    assertStatus(bad, 400, 'invalid_request');
    assert.deepEqual(bad.body.details, { field: 'query', reason: 'invalid' });
    // The group's owner, and an administrator.
    const byOwner = await api(url, 'GET', `/v1/saved-searches/${search.id}`, { token: owner.token });
    assert.equal(byOwner.body.can_change, true);
    assertStatus(await api(url, 'PATCH', `/v1/saved-searches/${search.id}`, { token: owner.token, json: { name: 'by owner' } }), 200);
    assertStatus(await api(url, 'PATCH', `/v1/saved-searches/${search.id}`, { token: admin.token, json: { name: 'by admin' } }), 200);
    rows = await auditRows(url, admin.token, { action: 'saved_search.updated', target_id: search.id });
    assert.deepEqual(
      rows.map((r) => r.actor_user_id),
      [admin.id, owner.id, member.id],
    );
    // Deleted by the owner; gone for everyone, the delete audited once.
    assertStatus(await api(url, 'DELETE', `/v1/saved-searches/${search.id}`, { token: owner.token }), 204);
    assertStatus(await api(url, 'GET', `/v1/saved-searches/${search.id}`, { token: member.token }), 404, 'not_found');
    assertStatus(await api(url, 'DELETE', `/v1/saved-searches/${search.id}`, { token: admin.token }), 404, 'not_found');
    const deleted = await auditRows(url, admin.token, { action: 'saved_search.deleted', target_id: search.id });
    assert.deepEqual(
      deleted.map((r) => [r.actor_user_id, r.target_type, r.metadata]),
      [[owner.id, 'saved_search', { name: 'by admin' }]],
    );
  });

  it('an author who loses read access to the scope no longer sees their search', async () => {
    const leaving = await createActor(url, admin.token, 'ss-leaving', { grants: [{ role: 'user', scope_type: 'project', scope_id: sibling }] });
    const search = await save(leaving, { name: 'soon gone', project_id: sibling });
    const grants = await api(url, 'GET', `/v1/role-assignments?subject_type=user&subject_id=${leaving.id}`, { token: admin.token });
    for (const g of grants.body.items) assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${g.id}`, { token: admin.token }), 204);
    const res = await api(url, 'GET', `/v1/saved-searches/${search.id}`, { token: leaving.token });
    assert.ok(res.status === 404 || res.status === 401, `${res.status}`);
    // The search stays for those who may read it.
    assertStatus(await api(url, 'GET', `/v1/saved-searches/${search.id}`, { token: member.token }), 200);
  });
});
