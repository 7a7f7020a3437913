/**
 * `GET /metrics` over HTTP on both backends, with `metricsEnabled` and a
 * token: the token enforced, and the documented counters and levels moving
 * after ingestion (accepted and rejected by reason, per project), live
 * streams, requests by route template and a retention pass. Every scrape is
 * parsed as the Prometheus text format (test/support/prometheus.ts).
 * metrics-switch.test.ts covers metrics off, and the base path.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus, createGroup, createKey, createProject } from '../support/actors.js';
import { ingest } from '../support/logs.js';
import { assertOpen, openRawStream } from '../support/sse.js';
import { parseScrape, type Scrape } from '../support/prometheus.js';

const TOKEN = 'metrics-token-0123456789';
const DAY = 86_400_000;

async function scrape(url: string, token: string | null = TOKEN): Promise<Scrape> {
  const res = await api(url, 'GET', '/metrics', { token });
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseScrape(res.text);
}

/**
 * Scrapes until `done` holds of the scrape (10 s at most): a request is
 * counted when its response closes, which the server may see just after
 * the client has read the answer.
 */
async function scrapeUntil(url: string, done: (s: Scrape) => boolean): Promise<Scrape> {
  const deadline = Date.now() + 10_000;
  let s = await scrape(url);
  while (!done(s) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    s = await scrape(url);
  }
  return s;
}

const entry = (event: string) => ({ level: 'info', event, timestamp: '2026-01-01T00:00:00Z' });

describeEachBackend('GET /metrics', (backend: BackendName) => {
  /** Added to the real clock, to make entries expire for the retention pass. */
  let offset = 0;

  const app = serviceWithAdmin(backend, {
    settings: { metricsEnabled: true, metricsToken: TOKEN },
    now: () => Date.now() + offset,
    scheduledPurge: false,
  });

  it('requires the bearer token when one is set: 401 without it or with another, 200 with it', async () => {
    assertStatus(await api(app.url, 'GET', '/metrics'), 401, 'unauthorized');
    assertStatus(await api(app.url, 'GET', '/metrics', { token: 'metrics-token-wrong' }), 401, 'unauthorized');
    assertStatus(await api(app.url, 'GET', '/metrics', { token: `${TOKEN}x` }), 401, 'unauthorized');
    assertStatus(await api(app.url, 'GET', '/metrics', { headers: { authorization: TOKEN } }), 401, 'unauthorized');
    const res = await api(app.url, 'GET', '/metrics', { token: TOKEN });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('serves the process metrics and every documented family with its type', async () => {
    const s = await scrape(app.url);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      assert.ok(s.types.has(name), `${name} is served`);
    }
    const expected: Record<string, string> = {
      logkeep_http_requests_total: 'counter',
      logkeep_http_request_duration_seconds: 'histogram',
      logkeep_ingest_entries_accepted_total: 'counter',
      logkeep_ingest_entries_rejected_total: 'counter',
      logkeep_ingest_entry_bytes_total: 'counter',
      logkeep_ingest_body_bytes_total: 'counter',
      logkeep_ingest_transactions_total: 'counter',
      logkeep_ingest_transaction_entries: 'histogram',
      logkeep_ingest_transaction_duration_seconds: 'histogram',
      logkeep_ingest_budget_capacity_bytes: 'gauge',
      logkeep_ingest_budget_in_use_bytes: 'gauge',
      logkeep_ingest_budget_waiting_requests: 'gauge',
      logkeep_ingest_queue_waiting_requests: 'gauge',
      logkeep_live_streams_open: 'gauge',
      logkeep_live_frames_sent_total: 'counter',
      logkeep_live_reads_total: 'counter',
      logkeep_db_connections_open: 'gauge',
      logkeep_db_connections_in_use: 'gauge',
      logkeep_db_waiting: 'gauge',
      logkeep_password_hashes_running: 'gauge',
      logkeep_password_hashes_waiting: 'gauge',
      logkeep_password_hash_duration_seconds: 'histogram',
      logkeep_retention_passes_total: 'counter',
      logkeep_retention_rows_purged_total: 'counter',
    };
    for (const [name, type] of Object.entries(expected)) assert.equal(s.types.get(name), type, name);
    // Idle between requests: nothing holds the budget or waits for a connection.
    assert.equal(s.value('logkeep_ingest_budget_in_use_bytes'), 0);
    assert.equal(s.value('logkeep_ingest_budget_waiting_requests'), 0);
    assert.equal(s.value('logkeep_db_waiting'), 0);
    assert.ok(s.value('logkeep_db_connections_open')! >= 1);
    assert.ok(s.value('logkeep_ingest_budget_capacity_bytes')! > app.svc.service.config.maxIngestBodyBytes);
    // The admin signed in: one hash at least, none running now.
    assert.ok(s.value('logkeep_password_hash_duration_seconds_count')! >= 1);
    assert.equal(s.value('logkeep_password_hashes_running'), 0);
  });

  it('counts requests by route template and status, never by raw path', async () => {
    const group = await createGroup(app.url, app.admin.token, 'routes');
    const project = await createProject(app.url, app.admin.token, group, 'routes');
    const before = await scrape(app.url);
    assertStatus(await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token }), 200);
    assertStatus(await api(app.url, 'GET', '/v1/projects/999999', { token: app.admin.token }), 404);
    assertStatus(await api(app.url, 'GET', '/no/such/path/42'), 404);
    const found = { method: 'GET', route: '/v1/projects/:id', status: '200' };
    const missing = { method: 'GET', route: '/v1/projects/:id', status: '404' };
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    const countedIn = (x: Scrape, labels: Record<string, string>) =>
      x.sum('logkeep_http_requests_total', labels) - before.sum('logkeep_http_requests_total', labels);
    const s = await scrapeUntil(app.url, (x) => [found, missing, unmatched].every((labels) => countedIn(x, labels) >= 1));
    const moved = (labels: Record<string, string>) => countedIn(s, labels);
    assert.equal(moved(found), 1);
    assert.equal(moved(missing), 1);
    assert.equal(moved(unmatched), 1);
    assert.ok(
      s.samples.every((x) => !('route' in x.labels) || x.labels.route === 'unmatched' || x.labels.route === 'preflight' || x.labels.route.startsWith('/')),
    );
    assert.ok(!s.samples.some((x) => /\/\d+(\/|$)/.test(x.labels.route ?? '')), 'no raw id in a route label');
    // The previous scrape was counted under its template once it ended.
    assert.ok(s.sum('logkeep_http_requests_total', { route: '/metrics', status: '200' }) >= 1);
    assert.ok(s.sum('logkeep_http_request_duration_seconds_count', { method: 'GET', route: '/v1/projects/:id' }) >= 2);
  });

  it('counts entries accepted and rejected by reason per project, their bytes and the group-commit transactions', async () => {
    const group = await createGroup(app.url, app.admin.token, 'ingest');
    const limited = await createProject(app.url, app.admin.token, group, 'limited', { max_entries: 3 });
    const other = await createProject(app.url, app.admin.token, group, 'other');
    const limitedKey = (await createKey(app.url, app.admin.token, limited)).secret;
    const otherKey = (await createKey(app.url, app.admin.token, other)).secret;
    const before = await scrape(app.url);

    // Entry 1 is invalid; entries 0, 2, 3 fill the quota of 3; entry 4 exceeds it.
    const batch = [entry('a'), { level: 'nope' }, entry('b'), entry('c'), entry('d')];
    const res = await ingest(app.url, limitedKey, batch);
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.accepted, 3);
    assert.equal((await ingest(app.url, otherKey, [entry('x'), entry('y')])).status, 202);

    const ingested = { method: 'POST', route: '/v1/logs', status: '202' };
    const s = await scrapeUntil(app.url, (x) => x.sum('logkeep_http_requests_total', ingested) - before.sum('logkeep_http_requests_total', ingested) >= 2);
    const id = String(limited);
    assert.equal(s.value('logkeep_ingest_entries_accepted_total', { project_id: id }), 3);
    assert.equal(s.value('logkeep_ingest_entries_rejected_total', { project_id: id, reason: 'validation' }), 1);
    assert.equal(s.value('logkeep_ingest_entries_rejected_total', { project_id: id, reason: 'quota' }), 1);
    const bytes = [batch[0], batch[2], batch[3]].reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e), 'utf8'), 0);
    assert.equal(s.value('logkeep_ingest_entry_bytes_total', { project_id: id }), bytes);
    assert.equal(s.value('logkeep_ingest_entries_accepted_total', { project_id: String(other) }), 2);
    assert.equal(s.value('logkeep_ingest_entries_rejected_total', { project_id: String(other), reason: 'quota' }), 0);

    const delta = (name: string, labels: Record<string, string> = {}) => s.sum(name, labels) - before.sum(name, labels);
    const bodies = Buffer.byteLength(JSON.stringify(batch)) + Buffer.byteLength(JSON.stringify([entry('x'), entry('y')]));
    assert.equal(delta('logkeep_ingest_body_bytes_total'), bodies);
    // Four entries reached storage in the first batch (the quota is checked there), two in the second.
    assert.equal(delta('logkeep_ingest_transaction_entries_sum'), 6);
    const transactions = delta('logkeep_ingest_transactions_total', { outcome: 'committed' });
    assert.ok(transactions >= 1 && transactions <= 2, `one or two transactions, got ${transactions}`);
    assert.equal(delta('logkeep_ingest_transaction_duration_seconds_count'), transactions);
    assert.equal(delta('logkeep_http_requests_total', ingested), 2);
  });

  it('counts an OTLP export like a batch: its body bytes and its entries accepted', async () => {
    const group = await createGroup(app.url, app.admin.token, 'otlp');
    const project = await createProject(app.url, app.admin.token, group, 'otlp');
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    const before = await scrape(app.url);
    const body = JSON.stringify({
      resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '1767225600000000000', severityNumber: 9, body: { stringValue: 'from otlp' } }] }] }],
    });
    const res = await api(app.url, 'POST', '/v1/otlp/v1/logs', { token: key, raw: body, headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 200, res.text);
    const exported = { method: 'POST', route: '/v1/otlp/v1/logs', status: '200' };
    const s = await scrapeUntil(app.url, (x) => x.sum('logkeep_http_requests_total', exported) - before.sum('logkeep_http_requests_total', exported) >= 1);
    assert.equal(s.sum('logkeep_ingest_body_bytes_total') - before.sum('logkeep_ingest_body_bytes_total'), Buffer.byteLength(body));
    assert.equal(s.value('logkeep_ingest_entries_accepted_total', { project_id: String(project) }), 1);
  });

  it('shows open live streams and counts the frames sent to them', async () => {
    const group = await createGroup(app.url, app.admin.token, 'live');
    const project = await createProject(app.url, app.admin.token, group, 'live');
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    const before = await scrape(app.url);
    assert.equal(before.value('logkeep_live_streams_open'), 0);

    const streams = [
      assertOpen(await openRawStream(app.url, `/v1/logs/stream?project_id=${project}`, { token: app.admin.token })),
      assertOpen(await openRawStream(app.url, `/v1/logs/stream?project_id=${project}`, { token: app.admin.token })),
    ];
    try {
      assert.equal((await scrape(app.url)).value('logkeep_live_streams_open'), 2);
      assert.equal((await ingest(app.url, key, [entry('one'), entry('two'), entry('three')])).status, 202);
      for (const stream of streams) await stream.waitForLogs(3);
      const s = await scrape(app.url);
      // Three entries to each of two streams.
      assert.equal(s.sum('logkeep_live_frames_sent_total') - before.sum('logkeep_live_frames_sent_total'), 6);

      // Caught up, the streams get each later commit from memory: no read.
      assert.equal((await ingest(app.url, key, [entry('four')])).status, 202);
      assert.equal((await ingest(app.url, key, [entry('five'), entry('six')])).status, 202);
      for (const stream of streams)
        assert.deepEqual(
          (await stream.waitForLogs(6)).map((e) => e.event),
          ['one', 'two', 'three', 'four', 'five', 'six'],
        );
      const later = await scrape(app.url);
      assert.equal(later.sum('logkeep_live_frames_sent_total') - s.sum('logkeep_live_frames_sent_total'), 6);
      assert.equal(later.sum('logkeep_live_reads_total'), s.sum('logkeep_live_reads_total'), 'no read');
    } finally {
      for (const stream of streams) stream.close();
    }
    // The hub notices each client leaving.
    const deadline = Date.now() + 10_000;
    let open = (await scrape(app.url)).value('logkeep_live_streams_open');
    while (open !== 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      open = (await scrape(app.url)).value('logkeep_live_streams_open');
    }
    assert.equal(open, 0);
  });

  it('counts retention passes and the rows they purge', async () => {
    const group = await createGroup(app.url, app.admin.token, 'retention');
    const project = await createProject(app.url, app.admin.token, group, 'short', { retention_days: 1 });
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    assert.equal((await ingest(app.url, key, [entry('old one'), entry('old two')])).status, 202);
    const before = await scrape(app.url);
    offset = 2 * DAY;
    try {
      const report = await app.svc.service.runPurgeOnce();
      assert.equal(report.ran, true);
      assert.equal(report.logEntries, 2);
    } finally {
      offset = 0;
    }
    const s = await scrape(app.url);
    const delta = (name: string, labels: Record<string, string>) => s.sum(name, labels) - before.sum(name, labels);
    assert.equal(delta('logkeep_retention_passes_total', { outcome: 'ran' }), 1);
    assert.equal(delta('logkeep_retention_rows_purged_total', { kind: 'log_entries' }), 2);
  });
});
