/**
 * GET /v1/logs/stream on both backends: every refusal answered as the same
 * plain JSON error `GET /v1/logs` gives (in its order) before any stream opens;
 * then the event-stream head, the opening comment, `log` frames whose
 * data is byte for byte the LogEntry of `GET /v1/logs`, heartbeats, CORS,
 * and the real `eventsource` client.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject, type TestActor } from '../support/actors.js';
import { ingestAll, queryLogs } from '../support/logs.js';
import { assertOpen, authedEventSource, openRawStream, type RawStream } from '../support/sse.js';
import { waitUntil } from '../support/wait.js';

const ORIGIN = 'https://app.example';

describeEachBackend('live stream: refusals, frames, heartbeats', (backend) => {
  let member: TestActor;
  let groupG: number;
  let groupH: number;
  let projectA: number;
  let projectBlocked: number;
  let projectH: number;
  let keyA: string;
  const open: RawStream[] = [];

  const stream = async (path: string, token: string, headers?: Record<string, string>) => {
    const s = assertOpen(await openRawStream(app.url, path, { token, ...(headers ? { headers } : {}) }));
    open.push(s);
    return s;
  };

  after(async () => {
    for (const s of open) s.close();
  });
  const app = serviceWithAdmin(backend, { settings: { sseHeartbeatIntervalSeconds: 1, corsAllowedOrigins: [ORIGIN] } });
  before(async () => {
    groupG = await createGroup(app.url, app.admin.token, 'G');
    groupH = await createGroup(app.url, app.admin.token, 'H');
    projectA = await createProject(app.url, app.admin.token, groupG, 'A');
    projectBlocked = await createProject(app.url, app.admin.token, groupG, 'blocked');
    projectH = await createProject(app.url, app.admin.token, groupH, 'H1');
    keyA = (await createKey(app.url, app.admin.token, projectA)).secret;
    assertStatus(await api(app.url, 'POST', `/v1/projects/${projectBlocked}/block`, { token: app.admin.token }), 200);
    member = await createActor(app.url, app.admin.token, `member-${backend}`, { grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }] });
  });

  it('answers every refusal of GET /v1/logs identically, as plain JSON, in the same order', async () => {
    const cases: [string, number, string][] = [
      ['', 400, 'invalid_request'],
      ['level=info', 400, 'invalid_request'],
      [`project_id=${projectA}&group_id=${groupG}`, 400, 'invalid_request'],
      ['project_id=abc', 400, 'invalid_request'],
      ['group_id=0', 400, 'invalid_request'],
      ['project_id=999999&level=bogus&since_id=x', 404, 'not_found'],
      ['group_id=999999', 404, 'not_found'],
      [`project_id=${projectH}&level=bogus&since_id=x`, 403, 'forbidden'],
      [`group_id=${groupH}`, 403, 'forbidden'],
      [`project_id=${projectBlocked}&level=bogus&since_id=x`, 403, 'project_blocked'],
      [`project_id=${projectA}&level=bogus`, 400, 'invalid_request'],
      [`project_id=${projectA}&from=yesterday`, 400, 'invalid_request'],
      [`project_id=${projectA}&to=2025-02-30T00:00:00Z`, 400, 'invalid_request'],
      [`project_id=${projectA}&context.a..b=x`, 400, 'invalid_request'],
      [`group_id=${groupG}&q=***`, 400, 'invalid_request'],
    ];
    for (const [qs, status, code] of cases) {
      const listed = await queryLogs(app.url, member.token, qs);
      assertStatus(listed, status, code, `GET /v1/logs?${qs}`);
      const refused = await openRawStream(app.url, `/v1/logs/stream?${qs}`, { token: member.token });
      assert.ok(!('frames' in refused), `stream ?${qs} must not open`);
      assert.equal(refused.status, status, `stream ?${qs}: ${refused.text}`);
      assert.match(refused.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(refused.body, listed.body, `stream ?${qs} answers like GET /v1/logs`);
    }
  });

  it('refuses bad credentials and the forced password change like every JWT route', async () => {
    for (const token of [undefined, 'not-a-jwt', keyA]) {
      const refused = await openRawStream(app.url, `/v1/logs/stream?project_id=${projectA}`, token === undefined ? {} : { token });
      assert.equal(refused.status, 401);
      assert.ok(!('frames' in refused));
      assert.equal(refused.body.error, 'unauthorized');
    }
    const created = await api(app.url, 'POST', '/v1/users', { token: app.admin.token, json: { username: `fresh-${backend}`, password: 'temporary-pass-1' } });
    assertStatus(created, 201);
    const fresh = await api(app.url, 'POST', '/v1/auth/token', {
      form: { grant_type: 'password', username: `fresh-${backend}`, password: 'temporary-pass-1' },
    });
    const refused = await openRawStream(app.url, `/v1/logs/stream?project_id=${projectA}`, { token: fresh.body.access_token });
    assert.equal(refused.status, 403);
    assert.equal(!('frames' in refused) && refused.body.error, 'must_change_password');
  });

  it('checks since_id and then Last-Event-ID last; since_id wins over the header', async () => {
    const bad = await openRawStream(app.url, `/v1/logs/stream?project_id=${projectA}&since_id=-1`, { token: member.token });
    assert.equal(bad.status, 400);
    assert.ok(!('frames' in bad));
    assert.deepEqual(bad.body.details, { field: 'since_id', reason: 'invalid' });
    const badHeader = await openRawStream(app.url, `/v1/logs/stream?project_id=${projectA}`, { token: member.token, headers: { 'last-event-id': 'abc' } });
    assert.equal(badHeader.status, 400);
    assert.ok(!('frames' in badHeader));
    assert.deepEqual(badHeader.body.details, { field: 'Last-Event-ID', reason: 'invalid' });
    const wins = await stream(`/v1/logs/stream?project_id=${projectA}&since_id=0`, member.token, { 'last-event-id': 'abc' });
    assert.equal(wins.status, 200);
    wins.close();
  });

  it('opens with the event-stream headers and a comment at once, then sends log frames with the exact LogEntry JSON', async () => {
    const s = await stream(`/v1/logs/stream?project_id=${projectA}`, member.token);
    assert.equal(s.headers.get('content-type'), 'text/event-stream');
    assert.equal(s.headers.get('cache-control'), 'no-cache');
    assert.equal(s.headers.get('x-accel-buffering'), 'no');
    await s.waitFor((x) => x.text.length > 0, 5_000, 'the opening comment');
    assert.match(s.text, /^:[^\n]*\n\n/, 'the first frame is a comment');
    assert.equal(s.frames.length, 0, 'entries stored before the subscription are not sent');

    const tricky: Record<string, unknown>[] = [
      { level: 'info', event: 'line\nbreak\r\nand\rcarriage', timestamp: '2025-01-01T00:00:00Z', note: 'sep\u2028para\u2029end' },
      { level: 'error', event: 'ünïcødé 数据库', timestamp: '2025-01-01T00:00:01+02:00', nested: { deep: [1, { x: null }] }, category: 'db' },
    ];
    Object.defineProperty(tricky[1]!, '__proto__', { value: { kept: true }, enumerable: true, writable: true, configurable: true });
    await ingestAll(app.url, keyA, tricky);
    await s.waitForLogs(2);
    const listed = await queryLogs(app.url, member.token, `project_id=${projectA}`);
    assertStatus(listed, 200);
    const frames = s.frames.filter((f) => f.event === 'log');
    assert.deepEqual(
      frames.map((f) => Number(f.id)),
      listed.body.items.map((i: { id: number }) => i.id).reverse(),
    );
    for (const frame of frames) {
      assert.ok(listed.text.includes(frame.data), `frame data is the LogEntry text of GET /v1/logs: ${frame.data}`);
      assert.ok(s.text.includes(`id: ${frame.id}\nevent: log\ndata: ${frame.data}\n\n`), 'frame layout');
    }
    assert.equal(s.logs()[1].__proto__.kept, true);
  });

  it('sends a `: ping` comment at every heartbeat', async () => {
    const s = await stream(`/v1/logs/stream?group_id=${groupG}`, member.token);
    const started = Date.now();
    await s.waitFor((x) => x.comments.filter((c) => c === 'ping').length >= 2, 5_000, 'two pings');
    assert.ok(Date.now() - started >= 900, 'pings are a heartbeat apart');
    assert.ok(s.text.includes('\n\n: ping\n\n') || s.text.startsWith(': ping\n\n'));
    assert.equal(s.closed, false, 'the stream stays open');
  });

  it('carries CORS headers for an allowed origin', async () => {
    const s = await stream(`/v1/logs/stream?project_id=${projectA}`, member.token, { origin: ORIGIN });
    assert.equal(s.headers.get('access-control-allow-origin'), ORIGIN);
    s.close();
  });

  it('works with the eventsource client: log events with ids, then a terminal end event', async () => {
    const project = await createProject(app.url, app.admin.token, groupG, `es-${backend}`);
    const key = (await createKey(app.url, app.admin.token, project)).secret;
    const source = authedEventSource(`${app.url}/v1/logs/stream?project_id=${project}`, member.token);
    try {
      const received: { id: string; entry: any }[] = [];
      let ended: string | null = null;
      source.addEventListener('log', (e) => received.push({ id: e.lastEventId, entry: JSON.parse(e.data) }));
      source.addEventListener('end', (e) => {
        ended = JSON.parse(e.data).reason;
        source.close();
      });
      await new Promise<void>((resolve, reject) => {
        source.onopen = () => resolve();
        source.onerror = (e) => reject(new Error(`eventsource error: ${e.message}`));
      });
      await ingestAll(app.url, key, [
        { level: 'info', event: 'one', timestamp: '2025-01-01T00:00:00Z' },
        { level: 'info', event: 'two', timestamp: '2025-01-01T00:00:00Z' },
      ]);
      await waitUntil(() => received.length === 2, 'two log events');
      assert.deepEqual(
        received.map((r) => r.entry.event),
        ['one', 'two'],
      );
      assert.ok(received.every((r) => r.id === String(r.entry.id) && r.entry.project_id === project));
      assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/block`, { token: app.admin.token }), 200);
      await waitUntil(() => ended !== null, 'the end event');
      assert.equal(ended, 'project_blocked');
    } finally {
      source.close();
    }
  });
});
