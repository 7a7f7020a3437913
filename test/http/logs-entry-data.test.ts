/**
 * What entry data and filter values cannot break, over HTTP on both
 * backends: entries nest at most 100 levels (each deeper one is its index's
 * validation_error, the rest of the batch stored); an over-deep entry
 * already in storage (written before the bound existed) breaks no search or
 * stream; U+0000 inside entries is stored and returned as sent, while in a
 * filter it answers 400 naming the parameter; and `q` and the exact-match
 * filters are bounded, with the same answers on both backends.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { assertStatus } from '../support/actors.js';
import { ingest, ingestAll, queryLogs, submittedPart } from '../support/logs.js';
import { assertOpen, openRawStream, type RawStream } from '../support/sse.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { exactTerm } from '../../lib/search/search-terms.js';
import { silentLogger } from '../../lib/core/logger.js';

const TS = '2025-01-01T00:00:00Z';
const entry = (extra: Record<string, unknown>) => ({ level: 'info', event: 'plain', timestamp: TS, ...extra });

/** The JSON text of an entry nesting `depth` levels of arrays (built as text: serialising it would overflow the stack here too). */
function deepText(depth: number, event: string, word: string): string {
  return `{"level":"info","event":"${event}","timestamp":"${TS}","inner":${'['.repeat(depth - 1)}"${word}"${']'.repeat(depth - 1)}}`;
}

/** An entry whose objects and arrays nest `depth` levels (the entry itself is the first). */
function nested(depth: number, word: string): Record<string, unknown> {
  let inner: unknown = word;
  for (let i = 2; i <= depth; i++) inner = i % 2 === 0 ? [inner] : { k: inner };
  return entry({ event: `nested ${depth}`, inner });
}

const NUL_FILTERS = [
  'category',
  'logger',
  'session_id',
  'request_id',
  'connection_generation',
  'tool_call_id',
  'message_id',
  'operation_id',
  'context.a.b',
  'q',
];

describeEachBackend('log entry data: nesting, U+0000 and query bounds', (backend) => {
  const open: RawStream[] = [];

  const list = async (projectId: number, params: [string, string][]) => {
    const res = await queryLogs(app.url, app.admin.token, [['project_id', String(projectId)], ...params]);
    assertStatus(res, 200);
    return res.body.items as any[];
  };
  const stream = async (projectId: number, params: [string, string][]) => {
    const qs = new URLSearchParams([['project_id', String(projectId)], ...params]).toString();
    const s = assertOpen(await openRawStream(app.url, `/v1/logs/stream?${qs}`, { token: app.admin.token }));
    open.push(s);
    return s;
  };

  after(async () => {
    for (const s of open) s.close();
  });
  const app = serviceWithAdmin(backend, { group: 'entry-data' });

  it('accepts an entry nesting 100 levels, refuses 101 and 5,000 by index, and stores the rest of the batch', async () => {
    const { project: projectId, secret } = await app.newProject('depth');
    const batch = [nested(100, 'depthword'), nested(101, 'depthword'), entry({ event: 'depthword after' })].map((e) => JSON.stringify(e));
    batch.splice(2, 0, deepText(5000, 'nested 5000', 'depthword'));
    const res = await ingest(app.url, secret, `[${batch.join(',')}]`);
    assertStatus(res, 202);
    assert.equal(res.body.accepted, 2);
    assert.deepEqual(
      res.body.rejected.map((r: any) => [r.index, r.error]),
      [
        [1, 'validation_error'],
        [2, 'validation_error'],
      ],
    );
    for (const r of res.body.rejected) assert.match(r.message, /more than 100 levels deep/);
    const found = await list(projectId, [['q', 'depthword']]);
    assert.deepEqual(
      found.map((i) => i.event),
      ['depthword after', 'nested 100'],
    );
    assert.deepEqual(submittedPart(found[1], nested(100, 'depthword')), nested(100, 'depthword'));
  });

  it('searches and streams past a 5,000-deep entry stored before nesting was bounded', async () => {
    const { project: projectId, secret } = await app.newProject('old-deep');
    // Written to storage directly, as an older release stored it.
    const depth = 5000;
    const body = deepText(depth, 'deep marker', 'bottom').replace('"inner"', '"ctx":{"id":"a-1"},"inner"');
    const storage = await openStorage(app.svc.database.config, { logger: silentLogger });
    try {
      const terms = ['deep', 'marker', 'bottom', exactTerm(['ctx', 'id'], 'a-1'), exactTerm(['timestamp'], TS)].join(' ');
      const prepared = { body, bytes: Buffer.byteLength(body), level: 1, timestamp: Date.parse(TS), terms };
      const [outcomes] = await storage.write((tx) => tx.ingestLogs([encodeRequest(projectId, Date.now(), [prepared])]));
      assert.ok(outcomes!.every((o) => 'id' in o));
    } finally {
      await storage.close();
    }
    await ingestAll(app.url, secret, [entry({ event: 'later marker', ctx: { id: 'a-1' } })]);

    const byQ = await list(projectId, [['q', 'marker']]);
    assert.deepEqual(
      byQ.map((i) => i.event),
      ['later marker', 'deep marker'],
    );
    const listed = await queryLogs(app.url, app.admin.token, [
      ['project_id', String(projectId)],
      ['q', 'bottom'],
    ]);
    assert.ok(listed.text.includes(body.slice(1, -1)), 'the deep entry comes back as stored');
    assert.deepEqual(
      (await list(projectId, [['q', 'bott*']])).map((i) => i.event),
      ['deep marker'],
    );
    assert.deepEqual(
      (await list(projectId, [['context.ctx.id', 'a-1']])).map((i) => i.event),
      ['later marker', 'deep marker'],
    );
    assert.deepEqual(await list(projectId, [['context.ctx.id', 'a-2']]), []);

    // A q stream replays past it and keeps delivering what comes later.
    const s = await stream(projectId, [
      ['q', 'marker'],
      ['since_id', '0'],
    ]);
    await s.waitForLogs(2);
    await ingestAll(app.url, secret, [entry({ event: 'third marker' })]);
    const logs = await s.waitForLogs(3);
    assert.deepEqual(
      logs.map((l) => l.event),
      ['deep marker', 'later marker', 'third marker'],
    );
  });

  it('stores U+0000 in keys and values as sent, returns it through the list and the stream, and finds the entry by q', async () => {
    const { project: projectId, secret } = await app.newProject('nul');
    const submitted = [
      entry({ event: 'nul\u0000event', category: 'c\u0000at', 'k\u0000ey': 'v\u0000al', nested: { 'a\u0000': ['x\u0000y', { '\u0000': '\u0000' }] } }),
      entry({ event: 'second', session_id: '\u0000' }),
    ];
    const res = await ingest(app.url, secret, submitted);
    assertStatus(res, 202);
    assert.deepEqual(res.body, { accepted: 2, rejected: [], rejected_count: 0 });
    const items = (await list(projectId, [])).reverse();
    assert.deepEqual(
      items.map((item, i) => submittedPart(item, submitted[i]!)),
      submitted,
    );
    assert.deepEqual(
      (await list(projectId, [['q', 'nul event']])).map((i) => i.event),
      ['nul\u0000event'],
    );
    // U+0000 is not a letter or digit: it separates words like any other such character.
    assert.deepEqual(
      (await list(projectId, [['q', 'v al x y ev*']])).map((i) => i.event),
      ['nul\u0000event'],
    );
    assert.deepEqual(await list(projectId, [['q', 'val']]), []);
    const s = await stream(projectId, [['since_id', '0']]);
    const logs = await s.waitForLogs(2);
    assert.deepEqual(
      logs.map((item, i) => submittedPart(item, submitted[i]!)),
      submitted,
    );
  });

  it('answers 400 naming the parameter for U+0000 in any filter of the list and the stream', async () => {
    const { project: projectId } = await app.newProject('nul-filters');
    const cases: [string, string][] = [
      ...NUL_FILTERS.map((f): [string, string] => [f, 'x\u0000y']),
      ['context.a\u0000b', '1'],
      ['level', '\u0000'],
      ['from', '\u0000'],
      ['cursor', '\u0000'],
      ['limit', '1\u0000'],
    ];
    for (const [field, value] of cases) {
      const params: [string, string][] = [
        ['project_id', String(projectId)],
        [field, value],
      ];
      const res = await queryLogs(app.url, app.admin.token, params);
      assertStatus(res, 400, 'invalid_request');
      assert.deepEqual(res.body.details, { field, reason: 'invalid' }, `list ${JSON.stringify(field)}`);
      if (field === 'cursor' || field === 'limit') continue;
      const s = await openRawStream(app.url, `/v1/logs/stream?${new URLSearchParams(params).toString()}`, { token: app.admin.token });
      assert.equal(s.status, 400, `stream ${JSON.stringify(field)}`);
      assert.deepEqual((s as { body: any }).body.details, { field, reason: 'invalid' });
    }
    const s = await openRawStream(app.url, `/v1/logs/stream?project_id=${projectId}&since_id=1%00`, { token: app.admin.token });
    assert.equal(s.status, 400);
    assert.deepEqual((s as { body: any }).body.details, { field: 'since_id', reason: 'invalid' });
  });

  it('bounds q at 16 words with prefixes of 2 characters or more, and exact-match filters at 16, on the list and the stream', async () => {
    const { project: projectId, secret } = await app.newProject('bounds');
    const words = Array.from({ length: 16 }, (_, i) => `w${i}`);
    await ingestAll(app.url, secret, [entry({ event: words.join(' '), ...Object.fromEntries(words.map((w) => [w, 'v'])) }), entry({ event: 'w0 only' })]);
    const contextOf = (n: number) => words.slice(0, n).map((w): [string, string] => [`context.${w}`, 'v']);
    // At the bounds: answered.
    assert.equal((await list(projectId, [['q', words.join(' ')]])).length, 1);
    assert.equal((await list(projectId, [['q', 'w0 on*']])).length, 1);
    assert.equal((await list(projectId, contextOf(16))).length, 1);
    // Past them: 400 naming the parameter, and the same refusal opening a stream.
    const refused: [[string, string][], string, RegExp][] = [
      [[['q', `${words.join(' ')} w16`]], 'q', /at most 16 distinct words/],
      [[['q', 'w0 o*']], 'q', /at least 2 letters or digits/],
      [[...contextOf(16), ['context.w16', 'v']], 'context.w16', /at most 16 exact-match filters/],
      [[['category', 'c'], ...contextOf(15), ['context.w15', 'v']], 'context.w15', /at most 16 exact-match filters/],
    ];
    for (const [params, field, message] of refused) {
      const res = await queryLogs(app.url, app.admin.token, [['project_id', String(projectId)], ...params]);
      assertStatus(res, 400, 'invalid_request');
      assert.deepEqual(res.body.details, { field, reason: 'invalid' });
      assert.match(res.body.message, message);
      const qs = new URLSearchParams([['project_id', String(projectId)], ...params]).toString();
      const s = await openRawStream(app.url, `/v1/logs/stream?${qs}`, { token: app.admin.token });
      assert.equal(s.status, 400);
      assert.deepEqual((s as { body: any }).body, res.body);
    }
  });
});
