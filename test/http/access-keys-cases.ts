/**
 * People's access keys over HTTP, on one backend per file: created for oneself
 * (administrators for anyone) with a label, a bounded expiry and a scope;
 * shown once and stored as a hash; listed and revoked by their person and
 * administrators, each change audited. A key works only on the log routes
 * its permissions name, within the projects and groups its scope names,
 * and never beyond what its person holds at the moment of the request:
 * revoking the key or a role, blocking or deleting the person, or expiry
 * all take effect on the next request (a live stream at once on a
 * revocation, block, deletion or removed role, else at its next heartbeat).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { api, startService, type RunningService } from '../support/service.js';
import {
  assertStatus,
  auditRows,
  createActor,
  createGroup,
  createKey,
  createProject,
  grant,
  refreshActor,
  signInAdmin,
  type TestActor,
} from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { silentLogger } from '../../lib/core/logger.js';
import { hashAccessKey } from '../../lib/auth/access-keys.js';

const DAY_MS = 86_400_000;
const HEARTBEAT_S = 1;
const entry = (event: string) => ({ level: 'info', event, timestamp: '2026-01-01T00:00:00Z' });

/** The suite on one backend (access-keys-file.test.ts, access-keys-server.test.ts: a file each keeps each within the runner's time per file). */
export function accessKeysSuite(only: BackendName): void {
  describeEachBackend('access keys', (backend) => accessKeyCases(backend), [only]);
}

function accessKeyCases(backend: BackendName): void {
  let svc: RunningService;
  let url: string;
  let admin: TestActor;
  let groupG: number;
  let projectA: number;
  let projectB: number;
  let otherGroup: number;
  let projectC: number;
  /** Holds `user` on G. */
  let reader: TestActor;
  /** Holds `owner` on G. */
  let owner: TestActor;
  let users = 0;
  /** The service's clock runs this far ahead of the real one. */
  let clockOffset = 0;
  const open: RawStream[] = [];

  const expiresIn = (days: number) => new Date(Date.now() + clockOffset + days * DAY_MS).toISOString();
  const newKey = async (token: string, scope: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const res = await api(url, 'POST', '/v1/access-keys', { token, json: { label: 'a script', expires_at: expiresIn(30), scope, ...extra } });
    assertStatus(res, 201);
    return res.body as { id: number; secret: string; [field: string]: unknown };
  };
  const query = (token: string, q: string) => api(url, 'GET', `/v1/logs?${q}`, { token });
  const person = (grants: Parameters<typeof createActor>[3] = {}) => createActor(url, admin.token, `person${++users}-${backend}`, grants);

  before(async () => {
    svc = await startService(backend, { settings: { sseHeartbeatIntervalSeconds: HEARTBEAT_S }, now: () => Date.now() + clockOffset });
    url = svc.url;
    admin = await signInAdmin(url);
    groupG = await createGroup(url, admin.token, 'G');
    projectA = await createProject(url, admin.token, groupG, 'A');
    projectB = await createProject(url, admin.token, groupG, 'B');
    otherGroup = await createGroup(url, admin.token, 'H');
    projectC = await createProject(url, admin.token, otherGroup, 'C');
    await ingestAll(url, (await createKey(url, admin.token, projectA)).secret, [entry('in a'), entry('again in a')]);
    await ingestAll(url, (await createKey(url, admin.token, projectB)).secret, [entry('in b')]);
    await ingestAll(url, (await createKey(url, admin.token, projectC)).secret, [entry('in c')]);
    reader = await person({ grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }] });
    owner = await person({ grants: [{ role: 'owner', scope_type: 'group', scope_id: groupG }] });
  });
  after(async () => {
    for (const s of open) s.close();
    await svc.stop({ dropDatabase: true });
  });

  it('creates a key shown once (lka_…), stores only its hash, lists its metadata and audits the creation', async () => {
    const key = await newKey(reader.token, { permissions: ['read', 'tail'], project_ids: [projectA] });
    assert.match(key.secret, /^lka_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(
      { ...key, id: 0, secret: '', created_at: '', expires_at: '' },
      {
        id: 0,
        secret: '',
        user_id: reader.id,
        label: 'a script',
        scope: { permissions: ['read', 'tail'], project_ids: [projectA], group_ids: [] },
        created_by: reader.id,
        created_at: '',
        expires_at: '',
        last_used_at: null,
        revoked_at: null,
      },
    );
    const listed = await api(url, 'GET', '/v1/access-keys', { token: reader.token });
    assertStatus(listed, 200);
    const row = listed.body.items.find((k: { id: number }) => k.id === key.id);
    assert.equal(row.secret, undefined, 'the key is never shown again');
    assert.ok(!listed.text.includes(key.secret) && !listed.text.includes(hashAccessKey(key.secret)));

    const storage = await openStorage(svc.database.config, { logger: silentLogger });
    try {
      const stored = await storage.findAccessKeyByHash(hashAccessKey(key.secret));
      assert.equal(stored?.id, key.id, 'looked up by the hash of the key');
      assert.ok(!JSON.stringify(stored).includes(key.secret), 'the plaintext is stored nowhere');
    } finally {
      await storage.close();
    }

    const [audit] = await auditRows(url, admin.token, { action: 'access_key.created', target_id: key.id });
    assert.deepEqual([audit.actor_user_id, audit.target_type, audit.metadata.user_id, audit.metadata.label], [reader.id, 'access_key', reader.id, 'a script']);
    assert.deepEqual(audit.metadata.scope, { permissions: ['read', 'tail'], project_ids: [projectA], group_ids: [] });
  });

  it('refuses a key without a future expiry within the maximum, without permissions or scope, or beyond its person', async () => {
    const cases: [Record<string, unknown>, number, string, string | undefined][] = [
      [{ label: 'x', scope: { permissions: ['read'], project_ids: [projectA] } }, 400, 'invalid_request', 'expires_at'],
      [{ label: 'x', expires_at: 'soon', scope: { permissions: ['read'], project_ids: [projectA] } }, 400, 'invalid_request', 'expires_at'],
      [{ label: 'x', expires_at: expiresIn(-1), scope: { permissions: ['read'], project_ids: [projectA] } }, 400, 'invalid_request', 'expires_at'],
      [{ label: 'x', expires_at: expiresIn(366), scope: { permissions: ['read'], project_ids: [projectA] } }, 400, 'invalid_request', 'expires_at'],
      [{ expires_at: expiresIn(1), scope: { permissions: ['read'], project_ids: [projectA] } }, 400, 'invalid_request', 'label'],
      [{ label: 'x', expires_at: expiresIn(1), scope: { permissions: [], project_ids: [projectA] } }, 400, 'invalid_request', 'scope.permissions'],
      [{ label: 'x', expires_at: expiresIn(1), scope: { permissions: ['admin'], project_ids: [projectA] } }, 400, 'invalid_request', 'scope.permissions.0'],
      [{ label: 'x', expires_at: expiresIn(1), scope: { permissions: ['read'] } }, 400, 'invalid_request', 'scope'],
      // A project outside the person's roles is hidden: 404, as anywhere else.
      [{ label: 'x', expires_at: expiresIn(1), scope: { permissions: ['read'], project_ids: [projectC] } }, 404, 'not_found', undefined],
      [{ label: 'x', expires_at: expiresIn(1), scope: { permissions: ['read'], group_ids: [999_999] } }, 404, 'not_found', undefined],
      // Someone else's key: administrators only.
      [{ label: 'x', expires_at: expiresIn(1), scope: { permissions: ['read'], project_ids: [projectA] }, user_id: admin.id }, 403, 'forbidden', undefined],
    ];
    for (const [json, status, code, field] of cases) {
      const res = await api(url, 'POST', '/v1/access-keys', { token: reader.token, json });
      assertStatus(res, status, code, JSON.stringify(json));
      if (field !== undefined) assert.equal(res.body.details?.field, field, JSON.stringify(json));
    }
    const tooFar = await api(url, 'POST', '/v1/access-keys', {
      token: reader.token,
      json: { label: 'x', expires_at: expiresIn(366), scope: { permissions: ['read'], project_ids: [projectA] } },
    });
    assert.equal(tooFar.body.details.max_days, 365);
    // An administrator may make a key for someone, but not beyond what that person holds.
    const forReader = await api(url, 'POST', '/v1/access-keys', {
      token: admin.token,
      json: { label: 'x', expires_at: expiresIn(1), scope: { permissions: ['read'], project_ids: [projectC] }, user_id: reader.id },
    });
    assertStatus(forReader, 403, 'forbidden');
    const made = await newKey(admin.token, { permissions: ['read'], group_ids: [groupG] }, { user_id: reader.id });
    assert.deepEqual([made.user_id, made.created_by], [reader.id, admin.id]);
  });

  it('reads within its scope and its person’s roles only: 403 elsewhere, on other permissions and on every other route', async () => {
    const projectKey = (await newKey(reader.token, { permissions: ['read'], project_ids: [projectA] })).secret;
    const page = await query(projectKey, `project_id=${projectA}`);
    assertStatus(page, 200);
    assert.deepEqual(
      page.body.items.map((e: { event: string }) => e.event),
      ['again in a', 'in a'],
    );
    assertStatus(
      await api(url, 'GET', `/v1/logs/histogram?project_id=${projectA}&from=2025-12-31T00:00:00Z&to=2026-01-02T00:00:00Z`, { token: projectKey }),
      200,
    );
    // The person may read B and the group, the key may not.
    assertStatus(await query(projectKey, `project_id=${projectB}`), 403, 'forbidden');
    assertStatus(await query(projectKey, `group_id=${groupG}`), 403, 'forbidden');
    assertStatus(await query(projectKey, `project_id=${projectC}`), 403, 'forbidden');
    const stream = await openRawStream(url, `/v1/logs/stream?project_id=${projectA}`, { token: projectKey });
    assertStatus(stream as never, 403, 'forbidden');
    for (const [method, path] of [
      ['GET', '/v1/groups'],
      ['GET', `/v1/projects/${projectA}`],
      ['GET', '/v1/access-keys'],
      ['POST', '/v1/access-keys'],
      ['DELETE', '/v1/access-keys/1'],
      ['POST', '/v1/auth/change-password'],
      ['GET', '/v1/users'],
      ['GET', '/v1/audit-log'],
    ] as const) {
      assertStatus(
        await api(url, method, path, { token: projectKey, json: method === 'GET' || method === 'DELETE' ? undefined : {} }),
        403,
        'forbidden',
        `${method} ${path}`,
      );
    }
    // Where it could ingest, it has no `ingest`.
    assertStatus(await api(url, 'POST', `/v1/logs?project_id=${projectA}`, { token: projectKey, json: [entry('x')] }), 403, 'forbidden');

    const listed = await api(url, 'GET', '/v1/projects', { token: projectKey });
    assertStatus(listed, 200);
    assert.deepEqual(
      listed.body.items.map((p: { id: number }) => p.id),
      [projectA],
      'only what the key covers',
    );

    const groupKey = (await newKey(reader.token, { permissions: ['read'], group_ids: [groupG] })).secret;
    const ofGroup = await api(url, 'GET', '/v1/projects', { token: groupKey });
    assert.deepEqual(
      ofGroup.body.items.map((p: { id: number }) => p.id),
      [projectB, projectA],
    );
    assertStatus(await query(groupKey, `group_id=${groupG}`), 200);
    assertStatus(await query(groupKey, `project_id=${projectB}`), 200, undefined, 'a group covers its projects');
    assertStatus(await query(groupKey, `group_id=${otherGroup}`), 403, 'forbidden');

    // An unknown, malformed or project-secret value is never taken for a key of a person.
    assertStatus(await query(`lka_${'x'.repeat(43)}`, `project_id=${projectA}`), 401, 'unauthorized');
    const secret = (await createKey(url, admin.token, projectA)).secret;
    assertStatus(await query(secret, `project_id=${projectA}`), 401, 'unauthorized');
  });

  it('tails with `tail`, ending the stream at the next heartbeat once the key is revoked', async () => {
    const key = await newKey(reader.token, { permissions: ['tail'], project_ids: [projectA] });
    assertStatus(await query(key.secret, `project_id=${projectA}`), 403, 'forbidden', 'tail is not read');
    const s = assertOpen(await openRawStream(url, `/v1/logs/stream?project_id=${projectA}&since_id=0`, { token: key.secret }));
    open.push(s);
    const replayed = await s.waitForLogs(2, 5_000);
    assert.deepEqual(
      replayed.map((e) => e.event),
      ['in a', 'again in a'],
    );
    assertStatus(await api(url, 'DELETE', `/v1/access-keys/${key.id}`, { token: reader.token }), 204);
    await s.waitClosed(HEARTBEAT_S * 1000 * 4);
    assert.equal(s.endReason(), 'token_revoked');
  });

  it('ingests with `ingest` into a project its person may manage, as JSON, NDJSON or OTLP, never elsewhere', async () => {
    const key = (await newKey(owner.token, { permissions: ['ingest', 'read'], group_ids: [groupG] })).secret;
    const posted = await api(url, 'POST', `/v1/logs?project_id=${projectB}`, { token: key, json: [entry('by key'), { level: 'nope' }] });
    assertStatus(posted, 202);
    assert.deepEqual([posted.body.accepted, posted.body.rejected_count], [1, 1]);
    const ndjson = await api(url, 'POST', `/v1/logs?project_id=${projectB}`, {
      token: key,
      raw: gzipSync(`${JSON.stringify(entry('ndjson by key'))}\n`),
      headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
    });
    assertStatus(ndjson, 202);
    const otlp = await api(url, 'POST', `/v1/otlp/v1/logs?project_id=${projectB}`, {
      token: key,
      json: {
        resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '1767225600000000000', severityText: 'INFO', body: { stringValue: 'otlp by key' } }] }] }],
      },
    });
    assertStatus(otlp, 200);
    const events = (await query(key, `project_id=${projectB}&q=key`)).body.items.map((e: { event: string }) => e.event);
    assert.deepEqual(events.sort(), ['by key', 'ndjson by key', 'otlp by key']);

    assertStatus(await api(url, 'POST', '/v1/logs', { token: key, json: [entry('x')] }), 400, 'invalid_request');
    assertStatus(await api(url, 'POST', `/v1/logs?project_id=999999`, { token: key, json: [entry('x')] }), 404, 'not_found');
    // Outside the key's scope, though the person could not write there either.
    assertStatus(await api(url, 'POST', `/v1/logs?project_id=${projectC}`, { token: key, json: [entry('x')] }), 403, 'forbidden');
    // A reader's key with `ingest`: the person may read, not write.
    const readerKey = (await newKey(reader.token, { permissions: ['ingest'], project_ids: [projectA] })).secret;
    assertStatus(await api(url, 'POST', `/v1/logs?project_id=${projectA}`, { token: readerKey, json: [entry('x')] }), 403, 'forbidden');
  });

  it('never outlives its person’s rights: a revoked role, a block, a deletion, a revoked key and expiry all answer on the next request', async () => {
    const holder = await person();
    const grantId = await grant(url, admin.token, { type: 'user', id: holder.id }, { role: 'user', scope_type: 'project', scope_id: projectA });
    await refreshActor(url, holder);
    const key = await newKey(holder.token, { permissions: ['read'], project_ids: [projectA] });
    assertStatus(await query(key.secret, `project_id=${projectA}`), 200);
    assertStatus(await api(url, 'DELETE', `/v1/role-assignments/${grantId}`, { token: admin.token }), 204);
    assertStatus(await query(key.secret, `project_id=${projectA}`), 403, 'forbidden', 'the role is gone');
    await grant(url, admin.token, { type: 'user', id: holder.id }, { role: 'user', scope_type: 'project', scope_id: projectA });
    assertStatus(await query(key.secret, `project_id=${projectA}`), 200, undefined, 'and back');

    assertStatus(await api(url, 'POST', `/v1/users/${holder.id}/block`, { token: admin.token }), 200);
    assertStatus(await query(key.secret, `project_id=${projectA}`), 401, 'unauthorized', 'blocked');
    assertStatus(await api(url, 'POST', `/v1/users/${holder.id}/unblock`, { token: admin.token }), 200);
    assertStatus(await query(key.secret, `project_id=${projectA}`), 200, undefined, 'unblocked');

    const second = await newKey(admin.token, { permissions: ['read'], project_ids: [projectA] }, { user_id: holder.id });
    assertStatus(await api(url, 'DELETE', `/v1/access-keys/${key.id}`, { token: holder.token }), 401, 'unauthorized', 'the block moved the token');
    assertStatus(await api(url, 'DELETE', `/v1/access-keys/${key.id}`, { token: admin.token }), 204);
    assertStatus(await api(url, 'DELETE', `/v1/access-keys/${key.id}`, { token: admin.token }), 204, undefined, 'again: nothing changes');
    assertStatus(await query(key.secret, `project_id=${projectA}`), 401, 'unauthorized', 'revoked');
    assertStatus(await query(second.secret, `project_id=${projectA}`), 200, undefined, 'the other key still works');
    const revokedRows = await auditRows(url, admin.token, { action: 'access_key.revoked', target_id: key.id });
    assert.equal(revokedRows.length, 1, 'one audit row, however often it is revoked');
    assert.deepEqual([revokedRows[0].actor_user_id, revokedRows[0].metadata.user_id], [admin.id, holder.id]);

    assertStatus(await api(url, 'DELETE', `/v1/users/${holder.id}`, { token: admin.token }), 204);
    assertStatus(await query(second.secret, `project_id=${projectA}`), 401, 'unauthorized', 'deleted');

    const expiring = await newKey(reader.token, { permissions: ['read'], project_ids: [projectA] }, { expires_at: expiresIn(1) });
    assertStatus(await query(expiring.secret, `project_id=${projectA}`), 200);
    clockOffset += DAY_MS + 1000;
    try {
      assertStatus(await query(expiring.secret, `project_id=${projectA}`), 401, 'unauthorized', 'expired');
    } finally {
      clockOffset -= DAY_MS + 1000;
    }
  });

  it('keeps its last use (to the minute), and is listed and revoked by its person and administrators only', async () => {
    const key = await newKey(reader.token, { permissions: ['read'], project_ids: [projectA] });
    const before = Date.now();
    assertStatus(await query(key.secret, `project_id=${projectA}`), 200);
    const mine = (await api(url, 'GET', '/v1/access-keys', { token: reader.token })).body.items.find((k: { id: number }) => k.id === key.id);
    assert.ok(Date.parse(mine.last_used_at) >= before - 1000, 'last_used_at is set by the use');

    assertStatus(await api(url, 'GET', `/v1/access-keys?user_id=${reader.id}`, { token: owner.token }), 403, 'forbidden');
    const byAdmin = await api(url, 'GET', `/v1/access-keys?user_id=${reader.id}`, { token: admin.token });
    assertStatus(byAdmin, 200);
    assert.ok(byAdmin.body.items.some((k: { id: number }) => k.id === key.id));
    assertStatus(await api(url, 'GET', '/v1/access-keys?user_id=999999', { token: admin.token }), 404, 'not_found');
    // Someone else's key does not exist for anyone but an administrator.
    assertStatus(await api(url, 'DELETE', `/v1/access-keys/${key.id}`, { token: owner.token }), 404, 'not_found');
    assertStatus(await query(key.secret, `project_id=${projectA}`), 200);
    assertStatus(await api(url, 'DELETE', `/v1/access-keys/${key.id}`, { token: reader.token }), 204);
    const revoked = (await api(url, 'GET', '/v1/access-keys', { token: reader.token })).body.items.find((k: { id: number }) => k.id === key.id);
    assert.ok(revoked.revoked_at !== null);
  });

  it('answers 403 must_change_password while its person must change their password', async () => {
    const holder = await person({ grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }] });
    const key = await newKey(holder.token, { permissions: ['read'], project_ids: [projectA] });
    assertStatus(await api(url, 'PATCH', `/v1/users/${holder.id}`, { token: admin.token, json: { password: 'a-new-temporary-1' } }), 200);
    assertStatus(await query(key.secret, `project_id=${projectA}`), 403, 'must_change_password');
  });
}
