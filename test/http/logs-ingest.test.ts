/**
 * POST /v1/logs over HTTP on both backends: the top-level order (401 →
 * 403 project_blocked before the body → 413 → 400), every entry validation
 * rule with its message and index, entries stored exactly as submitted, and
 * the quotas entry by entry, also under concurrent batches.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus, createActor, createGroup, createKey, createProject } from '../support/actors.js';
import { ingest, ingestAll, queryAllPages, submittedPart } from '../support/logs.js';

const BODY_LIMIT = 64 * 1024;
const ok = (i: number, extra: Record<string, unknown> = {}) => ({ level: 'info', event: `event ${i}`, timestamp: '2025-01-01T00:00:00Z', ...extra });

/** A raw request, to control Content-Length and chunking. */
function rawPost(url: string, headers: Record<string, string>, chunks: Buffer[]): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/logs`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describeEachBackend('POST /v1/logs', (backend) => {
  let projectId: number;
  let secret: string;
  const app = serviceWithAdmin(backend, { group: 'ingest', settings: { maxIngestBodyBytes: BODY_LIMIT } });
  before(async () => {
    projectId = await createProject(app.url, app.admin.token, app.groupId, 'main');
    secret = (await createKey(app.url, app.admin.token, projectId)).secret;
  });

  it('answers 401 without a key, with an access token, an unknown key or a revoked one (at once)', async () => {
    assertStatus(await ingest(app.url, null, [ok(1)]), 401, 'unauthorized');
    assertStatus(await ingest(app.url, app.admin.token, [ok(1)]), 401, 'unauthorized');
    assertStatus(await ingest(app.url, 'slk_not-a-real-key', [ok(1)]), 401, 'unauthorized');
    assertStatus(await api(app.url, 'POST', '/v1/logs', { raw: '[]', headers: { authorization: `Basic ${secret}` } }), 401, 'unauthorized');
    const project = await createProject(app.url, app.admin.token, app.groupId, 'revoked-key');
    const key = await createKey(app.url, app.admin.token, project);
    assertStatus(await ingest(app.url, key.secret, [ok(1)]), 202);
    assertStatus(await api(app.url, 'DELETE', `/v1/projects/${project}/secret-keys/${key.id}`, { token: app.admin.token }), 204);
    assertStatus(await ingest(app.url, key.secret, [ok(2)]), 401, 'unauthorized');
    // 401 comes before everything else, even a body over the limit.
    assertStatus(await ingest(app.url, key.secret, 'x'.repeat(BODY_LIMIT + 1)), 401, 'unauthorized');
  });

  it('answers 403 project_blocked before reading the body, then serves again after unblock', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'blocked');
    const key = await createKey(app.url, app.admin.token, project);
    assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/block`, { token: app.admin.token }), 200);
    assertStatus(await ingest(app.url, key.secret, [ok(1)]), 403, 'project_blocked');
    assertStatus(await ingest(app.url, key.secret, 'not json'), 403, 'project_blocked');
    assertStatus(await ingest(app.url, key.secret, 'x'.repeat(BODY_LIMIT + 10)), 403, 'project_blocked');
    assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/unblock`, { token: app.admin.token }), 200);
    const res = await ingest(app.url, key.secret, [ok(1)]);
    assertStatus(res, 202);
    assert.equal(res.body.accepted, 1);
  });

  it('answers 413 for a body over the limit, declared or streamed, and stores nothing', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'too-large');
    const key = await createKey(app.url, app.admin.token, project);
    const big = Buffer.from(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ok(i))));
    assert.ok(big.length > BODY_LIMIT);
    assertStatus(await ingest(app.url, key.secret, big.toString()), 413, 'payload_too_large');
    const chunked = await rawPost(app.url, { authorization: `Bearer ${key.secret}`, 'transfer-encoding': 'chunked' }, [
      big.subarray(0, 40_000),
      big.subarray(40_000),
    ]);
    assert.equal(chunked.status, 413, chunked.text);
    const exact = Buffer.from(JSON.stringify([ok(1, { pad: 'p'.repeat(BODY_LIMIT - 200) })]));
    const padded = Buffer.concat([exact, Buffer.alloc(BODY_LIMIT - exact.length, ' ')]);
    assertStatus(await ingest(app.url, key.secret, padded.toString()), 202, undefined, 'a body of exactly the limit is accepted');
    const usage = await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token });
    assert.equal(usage.body.entry_count, 1);
  });

  it('answers 400 for malformed JSON or anything but an array, 202 for []', async () => {
    for (const body of ['{', '', '{"level":"info"}', '42', '"x"', 'null', '[1,]']) {
      assertStatus(await ingest(app.url, secret, body), 400, 'invalid_request', JSON.stringify(body));
    }
    const empty = await ingest(app.url, secret, '[]');
    assertStatus(empty, 202);
    assert.deepEqual(empty.body, { accepted: 0, rejected: [], rejected_count: 0 });
  });

  it('rejects each invalid entry with its index and first failed rule, accepting the rest', async () => {
    const batch: unknown[] = [
      ok(0),
      null,
      [ok(1)],
      'text',
      ok(4, { id: 9 }),
      ok(5, { project_id: 1 }),
      ok(6, { received_at: 'x', level: 'LOUD' }),
      ok(7, { level: 'warn' }),
      { event: 'no level', timestamp: '2025-01-01T00:00:00Z' },
      ok(9, { event: '' }),
      { level: 'info', timestamp: '2025-01-01T00:00:00Z' },
      ok(11, { event: 7 }),
      ok(12, { timestamp: '2025-02-30T00:00:00Z' }),
      ok(13, { timestamp: 1735689600000 }),
      { level: 'info', event: 'no timestamp' },
      ok(15, { timestamp: '2025-01-01T10:00' }),
      ok(16, { category: 5 }),
      ok(17, { logger: true }),
      ok(18, { request_id: { a: 1 } }),
      ok(19, { connection_generation: 3 }),
      ok(20, { connection_generation: 3.5 }),
      ok(21, { session_id: null, tool_call_id: 't', message_id: null, operation_id: 'o' }),
      ok(22, { level: 'error', event: '', timestamp: 'bad' }),
    ];
    const res = await ingest(app.url, secret, batch);
    assertStatus(res, 202);
    const expected: [number, RegExp][] = [
      [1, /not a JSON object/],
      [2, /not a JSON object/],
      [3, /not a JSON object/],
      [4, /'id'/],
      [5, /'project_id'/],
      [6, /'received_at'/],
      [7, /'level'/],
      [8, /'level'/],
      [9, /'event'/],
      [10, /'event'/],
      [11, /'event'/],
      [12, /'timestamp'/],
      [13, /'timestamp'/],
      [14, /'timestamp'/],
      [16, /'category'/],
      [17, /'logger'/],
      [18, /'request_id'/],
      [20, /'connection_generation'/],
      [22, /'event'/],
    ];
    assert.deepEqual(
      res.body.rejected.map((r: any) => [r.index, r.error]),
      expected.map(([i]) => [i, 'validation_error']),
    );
    for (const [i, pattern] of expected) assert.match(res.body.rejected.find((r: any) => r.index === i).message, pattern, `entry ${i}`);
    assert.equal(res.body.accepted, batch.length - expected.length);
  });

  it('stores entries exactly as submitted (custom keys, nesting, unicode, __proto__) plus id, project_id, received_at', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'round-trip');
    const key = await createKey(app.url, app.admin.token, project);
    const texts = [
      '{"timestamp":"2025-01-01 10:00:00.123456+02:00","level":"critical","event":"ünï😀 \\u0000 \\"quoted\\"","zeta":{"deep":[1,{"x":[null,true,1.5e-7]}]},"alpha":-0}',
      '{"level":"debug","event":"proto","timestamp":"2025-01-01T00:00:00Z","__proto__":{"admin":true},"constructor":"c","category":null,"connection_generation":-3}',
      '{"event":"order","level":"info","timestamp":"2025-01-01T00:00Z","b":1,"a":2,"request_id":"r","logger":"l","session_id":"s","tool_call_id":"t","message_id":"m","operation_id":"o","category":"c","connection_generation":"g"}',
    ];
    const started = Date.now();
    const res = await ingest(app.url, key.secret, `[${texts.join(',')}]`);
    assertStatus(res, 202);
    assert.deepEqual(res.body, { accepted: 3, rejected: [], rejected_count: 0 });
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(project)]], 50);
    assert.equal(items.length, 3);
    const stored = [...items].reverse();
    for (let i = 0; i < texts.length; i++) {
      // The stored text is the parsed object's compact JSON: -0 reads back as 0.
      const submitted = JSON.parse(JSON.stringify(JSON.parse(texts[i]!)));
      const item = stored[i]!;
      assert.deepEqual(Object.keys(item).slice(0, 3), ['id', 'project_id', 'received_at']);
      assert.equal(item.project_id, project);
      assert.ok(Date.parse(item.received_at) >= started - 1000 && Date.parse(item.received_at) <= Date.now() + 1000);
      assert.match(item.received_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(submittedPart(item, submitted), submitted);
      assert.deepEqual(Object.keys(submittedPart(item, submitted)), Object.keys(submitted), 'key order kept');
    }
    assert.ok(Object.hasOwn(stored[1], '__proto__'));
    assert.deepEqual(stored[1].__proto__, { admin: true });
    // Absent nullable fields read as null; submitted ones are kept as sent.
    assert.equal(stored[0].category, null);
    assert.equal(stored[0].operation_id, null);
    assert.equal(stored[1].connection_generation, -3);
    assert.equal(stored[2].connection_generation, 'g');
    assert.ok(stored[0].id < stored[1].id && stored[1].id < stored[2].id);
  });

  it('applies max_entries entry by entry and counts exactly', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'max-entries', { max_entries: 3 });
    const key = await createKey(app.url, app.admin.token, project);
    const res = await ingest(app.url, key.secret, [ok(0), { bad: true }, ok(2), ok(3), ok(4), ok(5)]);
    assertStatus(res, 202);
    assert.equal(res.body.accepted, 3);
    assert.deepEqual(
      res.body.rejected.map((r: any) => [r.index, r.error]),
      [
        [1, 'validation_error'],
        [4, 'quota_exceeded'],
        [5, 'quota_exceeded'],
      ],
    );
    assert.match(res.body.rejected[1].message, /max_entries/);
    const again = await ingest(app.url, key.secret, [ok(6)]);
    assert.deepEqual(again.body, {
      accepted: 0,
      rejected: [{ index: 0, error: 'quota_exceeded', message: again.body.rejected[0].message }],
      rejected_count: 1,
    });
    const usage = await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token });
    assert.equal(usage.body.entry_count, 3);
  });

  it('applies max_bytes entry by entry: a refused entry consumes nothing, so a later smaller one fits', async () => {
    const small = ok(0);
    const size = Buffer.byteLength(JSON.stringify(small));
    const project = await createProject(app.url, app.admin.token, app.groupId, 'max-bytes', { max_bytes: size * 2 + 10 });
    const key = await createKey(app.url, app.admin.token, project);
    const big = ok(1, { pad: 'x'.repeat(size) });
    const res = await ingest(app.url, key.secret, [small, big, { ...small, event: 'ünï' }, small]);
    assertStatus(res, 202);
    assert.equal(res.body.accepted, 2);
    assert.deepEqual(
      res.body.rejected.map((r: any) => [r.index, r.error]),
      [
        [1, 'quota_exceeded'],
        [3, 'quota_exceeded'],
      ],
    );
    assert.match(res.body.rejected[0].message, /max_bytes/);
    const usage = await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token });
    assert.equal(usage.body.entry_count, 2);
    assert.equal(usage.body.total_bytes, size + Buffer.byteLength(JSON.stringify({ ...small, event: 'ünï' })));
  });

  it('checks max_entries before max_bytes', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'both-quotas', { max_entries: 1, max_bytes: 10 });
    const key = await createKey(app.url, app.admin.token, project);
    const res = await ingest(app.url, key.secret, [ok(0)]);
    assert.match(res.body.rejected[0].message, /max_bytes/);
    const tiny = await createProject(app.url, app.admin.token, app.groupId, 'entries-first', { max_entries: 0, max_bytes: 10 });
    const tinyKey = await createKey(app.url, app.admin.token, tiny);
    const both = await ingest(app.url, tinyKey.secret, [ok(0)]);
    assert.match(both.body.rejected[0].message, /max_entries/);
  });

  it('keeps quotas exact under 10 concurrent batches, and entry_count/total_bytes equal the stored rows', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'concurrent', { max_entries: 37 });
    const key = await createKey(app.url, app.admin.token, project);
    const batches = Array.from({ length: 10 }, (_, b) => Array.from({ length: 10 }, (_, i) => ok(b * 10 + i, { pad: 'y'.repeat((b * 7 + i) % 13) })));
    const results = await Promise.all(batches.map((batch) => ingest(app.url, key.secret, batch)));
    for (const r of results) assertStatus(r, 202);
    const accepted = results.reduce((sum, r) => sum + r.body.accepted, 0);
    assert.equal(accepted, 37);
    assert.equal(
      results.reduce((sum, r) => sum + r.body.rejected.length, 0),
      63,
    );
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(project)]], 200);
    assert.equal(items.length, 37);
    const usage = await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token });
    assert.equal(usage.body.entry_count, 37);
    const storedBytes = items.reduce((sum: number, item: any) => {
      const { id: _i, project_id: _p, received_at: _r, ...rest } = item;
      return sum + Buffer.byteLength(JSON.stringify(submittedPart(item, Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null)))));
    }, 0);
    assert.equal(usage.body.total_bytes, storedBytes);
  });

  it('keeps max_bytes exact under concurrent batches from several keys', async () => {
    const entry = ok(0);
    const size = Buffer.byteLength(JSON.stringify(entry));
    const project = await createProject(app.url, app.admin.token, app.groupId, 'concurrent-bytes', { max_bytes: size * 23 });
    const keys = await Promise.all([1, 2, 3].map(() => createKey(app.url, app.admin.token, project)));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, b) =>
        ingest(
          app.url,
          keys[b % 3]!.secret,
          Array.from({ length: 5 }, () => entry),
        ),
      ),
    );
    assert.equal(
      results.reduce((sum, r) => sum + r.body.accepted, 0),
      23,
    );
    const usage = await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token });
    assert.deepEqual([usage.body.entry_count, usage.body.total_bytes], [23, size * 23]);
  });

  it('answers 202 only once entries are readable, also for concurrent small batches (group commit)', async () => {
    const project = await createProject(app.url, app.admin.token, app.groupId, 'group-commit');
    const key = await createKey(app.url, app.admin.token, project);
    const reader = await createActor(app.url, app.admin.token, `gc-reader-${backend}`, {
      grants: [{ role: 'user', scope_type: 'project', scope_id: project }],
    });
    await Promise.all(
      Array.from({ length: 20 }, async (_, c) => {
        await ingestAll(app.url, key.secret, [ok(c, { client: `c${c}` })]);
        const res = await api(app.url, 'GET', `/v1/logs?project_id=${project}&context.client=c${c}`, { token: reader.token });
        assert.equal(res.body.items.length, 1, `client ${c} sees its entry right after the 202`);
      }),
    );
  });
});

describeEachBackend('POST /v1/logs with large bodies (the reusable body buffer)', (backend) => {
  let projectId: number;
  let secret: string;
  const app = serviceWithAdmin(backend);
  before(async () => {
    const groupId = await createGroup(app.url, app.admin.token, 'large');
    projectId = await createProject(app.url, app.admin.token, groupId, 'large');
    secret = (await createKey(app.url, app.admin.token, projectId)).secret;
  });

  /** ~1.3 MB of entries, each naming its batch and position. */
  const batch = (tag: string) => Array.from({ length: 2600 }, (_, i) => ok(i, { tag, filler: `${tag}-${i}-${'y'.repeat(420)}` }));

  it('stores every entry of large bodies sent together and one after another, also after a refused one', async () => {
    const sent = ['a', 'b', 'c'].map(batch);
    await Promise.all(sent.map((entries) => ingestAll(app.url, secret, entries)));
    // A malformed large body is refused whole, and the next large one is read intact.
    const malformed = JSON.stringify(batch('bad')).slice(0, -2);
    assert.ok(Buffer.byteLength(malformed) > 1024 * 1024);
    assertStatus(await ingest(app.url, secret, malformed), 400, 'invalid_request');
    sent.push(batch('d'));
    await ingestAll(app.url, secret, sent[3]!);
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(projectId)]], 200);
    assert.equal(items.length, 4 * 2600);
    const expected = new Map(sent.flat().map((e) => [(e as unknown as { filler: string }).filler, e]));
    for (const item of items) {
      const submitted = expected.get(item.filler);
      assert.ok(submitted, `unexpected entry ${String(item.filler).slice(0, 20)}`);
      assert.deepEqual(submittedPart(item, submitted), submitted);
      expected.delete(item.filler);
    }
    assert.equal(expected.size, 0);
  });
});
