/**
 * Projects and secret keys over HTTP on both backends: creation rules,
 * the flat visible list, usage counters only on GET by id, PATCH with
 * its before/after audit row, block and unblock, and keys: shown once,
 * stored as a hash only, listed as metadata, revoked irreversibly with
 * ingestion refusing the key at once, also through a second process.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, startService } from '../support/service.js';
import { assertStatus, auditRows, createActor, createGroup, createKey, createProject } from '../support/actors.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { silentLogger } from '../../lib/core/logger.js';
import { hashSecretKey } from '../../lib/admin/secret-keys.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PROJECT_KEYS = ['created_at', 'group_id', 'id', 'is_blocked', 'max_bytes', 'max_entries', 'name', 'retention_days'];
const ENTRY = { level: 'info', event: 'hello', timestamp: '2026-01-01T00:00:00Z' };

describeEachBackend('projects and secret keys', (backend) => {
  const app = serviceWithAdmin(backend, { group: 'projects-home' });

  it('POST /v1/groups/:groupId/projects creates a project without counters and audits project.created', async () => {
    const res = await api(app.url, 'POST', `/v1/groups/${app.groupId}/projects`, {
      token: app.admin.token,
      json: { name: 'api', retention_days: 14, max_entries: 1000, max_bytes: null },
    });
    assertStatus(res, 201);
    assert.deepEqual(Object.keys(res.body).sort(), PROJECT_KEYS);
    assert.deepEqual(
      { ...res.body, id: 0, created_at: 'x' },
      { id: 0, group_id: app.groupId, name: 'api', retention_days: 14, max_entries: 1000, max_bytes: null, is_blocked: false, created_at: 'x' },
    );
    assert.match(res.body.created_at, ISO);
    const [row] = await auditRows(app.url, app.admin.token, { action: 'project.created', target_id: res.body.id });
    assert.deepEqual([row.target_type, row.actor_user_id, row.metadata], ['project', app.admin.id, { name: 'api', group_id: app.groupId, retention_days: 14 }]);
    const quotasOmitted = await api(app.url, 'POST', `/v1/groups/${app.groupId}/projects`, {
      token: app.admin.token,
      json: { name: 'bare', retention_days: 1 },
    });
    assert.deepEqual([quotasOmitted.body.max_entries, quotasOmitted.body.max_bytes], [null, null]);
  });

  it('project creation validates retention (mandatory) and quotas, naming the field', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ name: 'x' }, 'retention_days', 'required'],
      [{ name: 'x', retention_days: null }, 'retention_days', 'invalid'],
      [{ name: 'x', retention_days: 0 }, 'retention_days', 'invalid'],
      [{ name: 'x', retention_days: 1.5 }, 'retention_days', 'invalid'],
      [{ name: 'x', retention_days: '7' }, 'retention_days', 'invalid'],
      [{ retention_days: 7 }, 'name', 'required'],
      [{ name: 'x', retention_days: 7, max_entries: -1 }, 'max_entries', 'invalid'],
      [{ name: 'x', retention_days: 7, max_bytes: 'lots' }, 'max_bytes', 'invalid'],
    ];
    for (const [json, field, reason] of cases) {
      const res = await api(app.url, 'POST', `/v1/groups/${app.groupId}/projects`, { token: app.admin.token, json });
      assertStatus(res, 400, 'invalid_request', JSON.stringify(json));
      assert.deepEqual(res.body.details, { field, reason }, JSON.stringify(json));
    }
    assertStatus(
      await api(app.url, 'POST', '/v1/groups/999999/projects', { token: app.admin.token, json: { name: 'x', retention_days: 1 } }),
      404,
      'not_found',
    );
  });

  it("GET /v1/projects is flat: group grants reveal the group's projects, project grants only that project", async () => {
    const g1 = await createGroup(app.url, app.admin.token, 'flat-1');
    const g2 = await createGroup(app.url, app.admin.token, 'flat-2');
    const a = await createProject(app.url, app.admin.token, g1, 'flat-a');
    const b = await createProject(app.url, app.admin.token, g1, 'flat-b');
    const c = await createProject(app.url, app.admin.token, g2, 'flat-c');
    await createProject(app.url, app.admin.token, g2, 'flat-d');
    const reader = await createActor(app.url, app.admin.token, 'flat-reader', {
      grants: [
        { role: 'user', scope_type: 'group', scope_id: g1 },
        { role: 'user', scope_type: 'project', scope_id: c },
      ],
    });
    const list = await api(app.url, 'GET', '/v1/projects', { token: reader.token });
    assertStatus(list, 200);
    assert.deepEqual(
      list.body.items.map((p: any) => p.id),
      [c, b, a],
    );
    for (const item of list.body.items) assert.deepEqual(Object.keys(item).sort(), PROJECT_KEYS, 'no usage counters in lists');
    assert.equal(list.body.next_cursor, null);
    // A project grant does not reveal its group.
    assert.deepEqual(
      (await api(app.url, 'GET', '/v1/groups', { token: reader.token })).body.items.map((g: any) => g.id),
      [g1],
    );
    // Filters: group_id and a case-insensitive name substring, both inside the visible set.
    assert.deepEqual(
      (await api(app.url, 'GET', `/v1/projects?group_id=${g2}`, { token: reader.token })).body.items.map((p: any) => p.id),
      [c],
    );
    assert.deepEqual(
      (await api(app.url, 'GET', '/v1/projects?name=FLAT-B', { token: reader.token })).body.items.map((p: any) => p.id),
      [b],
    );
    const page = await api(app.url, 'GET', '/v1/projects?limit=2', { token: reader.token });
    assert.deepEqual(
      page.body.items.map((p: any) => p.id),
      [c, b],
    );
    const next = await api(app.url, 'GET', `/v1/projects?limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`, { token: reader.token });
    assert.deepEqual(
      next.body.items.map((p: any) => p.id),
      [a],
    );
    assertStatus(await api(app.url, 'GET', '/v1/projects?group_id=abc', { token: reader.token }), 400, 'invalid_request');
    // A project cursor is not a group cursor.
    assertStatus(await api(app.url, 'GET', `/v1/groups?cursor=${encodeURIComponent(page.body.next_cursor)}`, { token: reader.token }), 400, 'invalid_request');
  });

  it('GET /v1/projects/:id adds entry_count and total_bytes', async () => {
    const id = await createProject(app.url, app.admin.token, app.groupId, 'counted');
    const res = await api(app.url, 'GET', `/v1/projects/${id}`, { token: app.admin.token });
    assertStatus(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), [...PROJECT_KEYS, 'entry_count', 'total_bytes'].sort());
    assert.deepEqual([res.body.entry_count, res.body.total_bytes], [0, 0]);
  });

  it('PATCH /v1/projects/:id changes settings and audits project.quota_updated with before and after', async () => {
    const id = await createProject(app.url, app.admin.token, app.groupId, 'patched', { retention_days: 30, max_entries: 10, max_bytes: null });
    const res = await api(app.url, 'PATCH', `/v1/projects/${id}`, { token: app.admin.token, json: { retention_days: 60, max_entries: null, max_bytes: 4096 } });
    assertStatus(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), PROJECT_KEYS);
    assert.deepEqual([res.body.retention_days, res.body.max_entries, res.body.max_bytes], [60, null, 4096]);
    const rows = await auditRows(app.url, app.admin.token, { action: 'project.quota_updated', target_id: id });
    assert.equal(rows.length, 1);
    assert.deepEqual([rows[0].target_type, rows[0].actor_user_id], ['project', app.admin.id]);
    assert.deepEqual(rows[0].metadata, {
      before: { retention_days: 30, max_entries: 10, max_bytes: null },
      after: { retention_days: 60, max_entries: null, max_bytes: 4096 },
    });
    // Absent keys stay; a PATCH that changes nothing writes no row.
    const same = await api(app.url, 'PATCH', `/v1/projects/${id}`, { token: app.admin.token, json: { retention_days: 60 } });
    assert.deepEqual([same.body.retention_days, same.body.max_entries, same.body.max_bytes], [60, null, 4096]);
    assertStatus(await api(app.url, 'PATCH', `/v1/projects/${id}`, { token: app.admin.token, json: {} }), 200);
    assert.equal((await auditRows(app.url, app.admin.token, { action: 'project.quota_updated', target_id: id })).length, 1);
    const bad = await api(app.url, 'PATCH', `/v1/projects/${id}`, { token: app.admin.token, json: { retention_days: null } });
    assertStatus(bad, 400, 'invalid_request');
    assert.deepEqual(bad.body.details, { field: 'retention_days', reason: 'invalid' });
  });

  it('a project-scope owner may PATCH its project and manage its keys, but not other projects of the group', async () => {
    const mine = await createProject(app.url, app.admin.token, app.groupId, 'owned-project');
    const sibling = await createProject(app.url, app.admin.token, app.groupId, 'sibling-project');
    const owner = await createActor(app.url, app.admin.token, 'project-owner', { grants: [{ role: 'owner', scope_type: 'project', scope_id: mine }] });
    assertStatus(await api(app.url, 'PATCH', `/v1/projects/${mine}`, { token: owner.token, json: { max_entries: 5 } }), 200);
    const key = await createKey(app.url, owner.token, mine, 'own');
    assertStatus(await api(app.url, 'DELETE', `/v1/projects/${mine}/secret-keys/${key.id}`, { token: owner.token }), 204);
    assertStatus(await api(app.url, 'PATCH', `/v1/projects/${sibling}`, { token: owner.token, json: { max_entries: 5 } }), 404, 'not_found');
    assertStatus(
      await api(app.url, 'POST', `/v1/groups/${app.groupId}/projects`, { token: owner.token, json: { name: 'x', retention_days: 1 } }),
      404,
      'not_found',
    );
    assertStatus(await api(app.url, 'POST', `/v1/projects/${mine}/block`, { token: owner.token }), 403, 'forbidden');
  });

  it('block and unblock (admin only) flip is_blocked and audit only real transitions', async () => {
    const id = await createProject(app.url, app.admin.token, app.groupId, 'blockable');
    const blocked = await api(app.url, 'POST', `/v1/projects/${id}/block`, { token: app.admin.token });
    assertStatus(blocked, 200);
    assert.deepEqual(Object.keys(blocked.body).sort(), PROJECT_KEYS);
    assert.equal(blocked.body.is_blocked, true);
    assert.equal((await api(app.url, 'POST', `/v1/projects/${id}/block`, { token: app.admin.token })).body.is_blocked, true);
    assert.equal((await api(app.url, 'GET', `/v1/projects/${id}`, { token: app.admin.token })).body.is_blocked, true);
    const unblocked = await api(app.url, 'POST', `/v1/projects/${id}/unblock`, { token: app.admin.token });
    assertStatus(unblocked, 200);
    assert.equal(unblocked.body.is_blocked, false);
    const rows = await auditRows(app.url, app.admin.token, { target_type: 'project', target_id: id });
    assert.deepEqual(
      rows.map((r) => [r.action, r.metadata, r.actor_user_id]),
      [
        ['project.unblocked', {}, app.admin.id],
        ['project.blocked', {}, app.admin.id],
        ['project.created', { name: 'blockable', group_id: app.groupId, retention_days: 30 }, app.admin.id],
      ],
    );
  });

  it('secret keys: the plaintext slk_ secret is shown once; lists carry metadata only; audited with {project_id, label}', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'keyed');
    const created = await api(app.url, 'POST', `/v1/projects/${project}/secret-keys`, { token: app.admin.token, json: { label: 'ci' } });
    assertStatus(created, 201);
    assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'label', 'project_id', 'revoked_at', 'secret']);
    assert.match(created.body.secret, /^slk_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual([created.body.project_id, created.body.label, created.body.revoked_at], [project, 'ci', null]);
    // No body at all: the label is optional.
    const unlabelled = await api(app.url, 'POST', `/v1/projects/${project}/secret-keys`, { token: app.admin.token });
    assertStatus(unlabelled, 201);
    assert.equal(unlabelled.body.label, null);
    assert.notEqual(unlabelled.body.secret, created.body.secret);
    assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/secret-keys`, { token: app.admin.token, json: { label: 5 } }), 400, 'invalid_request');

    const list = await api(app.url, 'GET', `/v1/projects/${project}/secret-keys`, { token: app.admin.token });
    assertStatus(list, 200);
    assert.deepEqual(
      list.body.items.map((k: any) => k.id),
      [unlabelled.body.id, created.body.id],
    );
    for (const item of list.body.items) assert.deepEqual(Object.keys(item).sort(), ['created_at', 'id', 'label', 'project_id', 'revoked_at']);
    assert.ok(!list.text.includes(created.body.secret));

    const [row] = await auditRows(app.url, app.admin.token, { action: 'secret_key.created', target_id: created.body.id });
    assert.deepEqual([row.target_type, row.actor_user_id, row.metadata], ['secret_key', app.admin.id, { project_id: project, label: 'ci' }]);
    assert.ok(!JSON.stringify(row).includes(created.body.secret), 'the audit row never holds the secret');
  });

  it('only the SHA-256 hash of a key is stored', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'hashed');
    const key = await createKey(app.url, app.admin.token, project, 'hash-check');
    const storage = await openStorage(app.svc.database.config, { logger: silentLogger });
    try {
      const found = await storage.findSecretKeyByHash(hashSecretKey(key.secret));
      assert.deepEqual(found && { keyId: found.keyId, projectId: found.projectId, revokedAt: found.revokedAt }, {
        keyId: key.id,
        projectId: project,
        revokedAt: null,
      });
      assert.equal(await storage.findSecretKeyByHash(key.secret), null);
    } finally {
      await storage.close();
    }
    if (backend === 'file') {
      const path = app.svc.database.config.dbPath!;
      for (const file of [path, `${path}-wal`]) {
        if (existsSync(file)) assert.ok(!readFileSync(file).includes(Buffer.from(key.secret)), `${file} must not hold the plaintext`);
      }
    }
  });

  it("revocation is irreversible, audited once, and scoped to the key's project", async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'revocable');
    const other = await createProject(app.url, app.admin.token, app.groupId, 'other-revocable');
    const key = await createKey(app.url, app.admin.token, project, 'old');
    assertStatus(await api(app.url, 'DELETE', `/v1/projects/${other}/secret-keys/${key.id}`, { token: app.admin.token }), 404, 'not_found');
    assertStatus(await api(app.url, 'DELETE', `/v1/projects/${project}/secret-keys/999999`, { token: app.admin.token }), 404, 'not_found');
    assertStatus(await api(app.url, 'DELETE', `/v1/projects/${project}/secret-keys/${key.id}`, { token: app.admin.token }), 204);
    const first = (await api(app.url, 'GET', `/v1/projects/${project}/secret-keys`, { token: app.admin.token })).body.items[0];
    assert.match(first.revoked_at, ISO);
    assertStatus(await api(app.url, 'DELETE', `/v1/projects/${project}/secret-keys/${key.id}`, { token: app.admin.token }), 204);
    const again = (await api(app.url, 'GET', `/v1/projects/${project}/secret-keys`, { token: app.admin.token })).body.items[0];
    assert.equal(again.revoked_at, first.revoked_at, 'the first revocation time stays');
    const rows = await auditRows(app.url, app.admin.token, { action: 'secret_key.revoked', target_id: key.id });
    assert.equal(rows.length, 1);
    assert.deepEqual([rows[0].target_type, rows[0].actor_user_id, rows[0].metadata], ['secret_key', app.admin.id, { project_id: project, label: 'old' }]);
  });

  it('a revoked key answers 401 on ingestion at once, also through another process on the same database', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'ingesting');
    const key = await createKey(app.url, app.admin.token, project, 'live');
    const kept = await createKey(app.url, app.admin.token, project, 'kept');
    const second = await startService(backend, { database: app.svc.database });
    try {
      assertStatus(await api(second.url, 'POST', '/v1/logs', { token: key.secret, json: [ENTRY] }), 202);
      assertStatus(await api(app.url, 'DELETE', `/v1/projects/${project}/secret-keys/${key.id}`, { token: app.admin.token }), 204);
      assertStatus(await api(app.url, 'POST', '/v1/logs', { token: key.secret, json: [ENTRY] }), 401, 'unauthorized');
      assertStatus(await api(second.url, 'POST', '/v1/logs', { token: key.secret, json: [ENTRY] }), 401, 'unauthorized');
      assertStatus(await api(second.url, 'POST', '/v1/logs', { token: kept.secret, json: [ENTRY] }), 202);
    } finally {
      await second.stop();
    }
  });
});
