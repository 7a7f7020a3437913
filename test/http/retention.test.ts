/**
 * Retention through the running service (log entries and the audit log):
 * `runPurgeOnce()` on a service whose clock is moved
 * forward removes each project's expired entries (queries, histograms and
 * usage counters follow), purges both audit classes and leaves `audit.purged`
 * rows that the audit log shows like any other.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createGroup, createKey, createProject } from '../support/actors.js';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { ingestAll } from '../support/logs.js';
import { api } from '../support/service.js';

const DAY = 86_400_000;

describeEachBackend('retention through the service', (backend: BackendName) => {
  /** Added to the real clock. Access tokens expire on the service's clock, so every move refreshes the admin's. */
  let offset = 0;
  const now = () => Date.now() + offset;

  // Only runPurgeOnce() purges here, so each pass's report is exactly this test's.
  const app = serviceWithAdmin(backend, { now, scheduledPurge: false, settings: { auditRetentionDays: 30, authEventRetentionDays: 7 } });

  async function usage(projectId: number): Promise<{ entry_count: number; total_bytes: number }> {
    const res = await api(app.url, 'GET', `/v1/projects/${projectId}`, { token: app.admin.token });
    assert.equal(res.status, 200, res.text);
    return { entry_count: res.body.entry_count, total_bytes: res.body.total_bytes };
  }

  async function events(projectId: number): Promise<string[]> {
    const res = await api(app.url, 'GET', `/v1/logs?project_id=${projectId}&limit=100`, { token: app.admin.token });
    assert.equal(res.status, 200, res.text);
    return res.body.items.map((item: { event: string }) => item.event).sort();
  }

  /** Moves the clock, refreshing the admin's tokens in steps shorter than a refresh token's life (a refresh grant writes no audit row). */
  async function moveClockTo(days: number): Promise<void> {
    for (let step = offset / DAY + 20; step < days; step += 20) {
      offset = step * DAY;
      await refreshAdmin();
    }
    offset = days * DAY;
    await refreshAdmin();
  }

  async function refreshAdmin(): Promise<void> {
    const res = await api(app.url, 'POST', '/v1/auth/token', { form: { grant_type: 'refresh_token', refresh_token: app.admin.refreshToken } });
    assert.equal(res.status, 200, res.text);
    app.admin.token = res.body.access_token;
    app.admin.refreshToken = res.body.refresh_token;
  }

  const entry = (event: string) => ({ level: 'info', event, timestamp: '2026-01-01T00:00:00Z' });

  it('purges each project by its retention and both audit classes, and the API shows the result', async () => {
    const url = app.url;
    const groupId = await createGroup(url, app.admin.token, 'retention');
    const shortId = await createProject(url, app.admin.token, groupId, 'short', { retention_days: 1 });
    const longId = await createProject(url, app.admin.token, groupId, 'long', { retention_days: 60 });
    const shortKey = await createKey(url, app.admin.token, shortId);
    const longKey = await createKey(url, app.admin.token, longId);
    await ingestAll(url, shortKey.secret, [entry('old one'), entry('old two'), entry('old three')]);
    await ingestAll(url, longKey.secret, [entry('kept one'), entry('kept two')]);

    await moveClockTo(2);
    await ingestAll(url, shortKey.secret, [entry('new one')]);
    const first = await app.svc.service.runPurgeOnce();
    assert.equal(first.ran, true);
    assert.equal(first.logEntries, 3);
    assert.deepEqual(await events(shortId), ['new one']);
    assert.deepEqual(await events(longId), ['kept one', 'kept two']);
    const bytesOf = (e: object) => Buffer.byteLength(JSON.stringify(e), 'utf8');
    assert.deepEqual(await usage(shortId), { entry_count: 1, total_bytes: bytesOf(entry('new one')) });
    assert.deepEqual(await usage(longId), { entry_count: 2, total_bytes: bytesOf(entry('kept one')) + bytesOf(entry('kept two')) });
    assert.deepEqual(first.audit, { auth: 0, admin: 0 }, 'no audit row is old enough yet');

    const before = await api(url, 'GET', '/v1/audit-log?limit=200', { token: app.admin.token });
    assert.equal(before.status, 200, before.text);
    assert.equal(before.body.audit_retention_days, 30);
    assert.equal(before.body.auth_event_retention_days, 7);
    const authRows = before.body.items.filter((row: { action: string }) => row.action.startsWith('auth.')).length;
    const adminRows = before.body.items.length - authRows;
    assert.ok(authRows > 0 && adminRows > 0);

    await moveClockTo(40);
    const second = await app.svc.service.runPurgeOnce();
    assert.deepEqual(second.audit, { auth: authRows, admin: adminRows });
    assert.equal(second.logEntries, 1, "the short project's last entry expired too");
    assert.deepEqual(await usage(shortId), { entry_count: 0, total_bytes: 0 });
    assert.equal((await usage(longId)).entry_count, 2);

    const after = await api(url, 'GET', '/v1/audit-log?limit=200', { token: app.admin.token });
    assert.equal(after.status, 200, after.text);
    const purged = after.body.items.filter((row: { action: string }) => row.action === 'audit.purged');
    assert.equal(purged.length, 2);
    assert.deepEqual(purged.map((row: { metadata: { scope: string; deleted_count: number } }) => [row.metadata.scope, row.metadata.deleted_count]).sort(), [
      ['admin', adminRows],
      ['auth', authRows],
    ]);
    for (const row of purged) {
      assert.equal(row.actor_user_id, null);
      assert.equal(row.target_type, 'audit');
      assert.equal(row.target_id, null);
      assert.match(row.metadata.older_than, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    // Only the purge's own rows remain.
    assert.equal(after.body.items.length, 2);

    const third = await app.svc.service.runPurgeOnce();
    assert.deepEqual(third.audit, { auth: 0, admin: 0 });
    const unchanged = await api(url, 'GET', '/v1/audit-log?action=audit.purged', { token: app.admin.token });
    assert.equal(unchanged.body.items.length, 2, 'a pass that removes nothing writes no audit.purged row');
  });

  it('keeps histograms exact through a purge: purged entries leave their minutes, newer entries of the same minutes stay counted', async () => {
    const url = app.url;
    const groupId = await createGroup(url, app.admin.token, 'retention-minutes');
    const projectId = await createProject(url, app.admin.token, groupId, 'minutes', { retention_days: 1 });
    const key = await createKey(url, app.admin.token, projectId);
    const at = (second: number, level: string, event: string) => ({ level, event, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
    const histogram = async (params: string) => {
      const res = await api(url, 'GET', `/v1/logs/histogram?project_id=${projectId}&${params}`, { token: app.admin.token });
      assert.equal(res.status, 200, res.text);
      return res.body.buckets.map((b: { counts: Record<string, number> }) => Object.fromEntries(Object.entries(b.counts).filter(([, n]) => n > 0)));
    };
    const minutes = 'from=2026-01-01T00:00:00Z&to=2026-01-01T00:04:59.999Z&buckets=5';
    const partial = 'from=2026-01-01T00:00:05Z&to=2026-01-01T00:03:25Z&buckets=4';
    const hours = 'from=2025-12-31T23:00:00Z&to=2026-01-01T01:59:59.999Z&buckets=3';
    await ingestAll(url, key.secret, [at(10, 'info', 'old a'), at(70, 'error', 'old b'), at(75, 'error', 'old c'), at(130, 'warning', 'old d')]);
    const day = offset / DAY;
    await moveClockTo(day + 2);
    await ingestAll(url, key.secret, [at(80, 'error', 'new b'), at(200, 'info', 'new e')]);
    assert.deepEqual(await histogram(minutes), [{ info: 1 }, { error: 3 }, { warning: 1 }, { info: 1 }, {}]);
    assert.deepEqual(await histogram(hours), [{}, { info: 2, error: 3, warning: 1 }, {}]);

    const purged = await app.svc.service.runPurgeOnce();
    assert.equal(purged.logEntries, 4);
    assert.deepEqual(await histogram(minutes), [{}, { error: 1 }, {}, { info: 1 }, {}]);
    assert.deepEqual(await histogram(partial), [{}, { error: 1 }, {}, { info: 1 }]);
    assert.deepEqual(await histogram(`${minutes}&level=error`), [{}, { error: 1 }, {}, {}, {}]);
    assert.deepEqual(await histogram(hours), [{}, { info: 1, error: 1 }, {}]);
    // The rest expires too: every minute is empty again.
    await moveClockTo(day + 4);
    assert.equal((await app.svc.service.runPurgeOnce()).logEntries, 2);
    assert.deepEqual(await histogram(minutes), [{}, {}, {}, {}, {}]);
    assert.deepEqual(await histogram(hours), [{}, {}, {}]);
  });
});
