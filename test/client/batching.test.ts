/**
 * The ingestion client's batching against a real logkeep (SQLite file), seen
 * through a recording server in front of it: batches close by count, by
 * size and by age (a manual clock), `flush()` sends partial batches, the
 * buffer's bound drops the oldest or blocks, and `close()` delivers what is
 * left.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IngestClient } from 'logkeep/client';
import { startService, type RunningService } from '../support/service.js';
import { ManualClock, entry, newProject, settle, startFrontServer, storedEntries, type FrontServer, type TestProject } from './client-support.js';
import { waitUntil } from '../support/wait.js';

describe('ingest client batching', () => {
  let svc: RunningService;
  before(async () => {
    svc = await startService('file');
  });
  after(() => svc.stop({ dropDatabase: true }));

  async function setup(name: string, script?: Parameters<typeof startFrontServer>[1]): Promise<{ project: TestProject; front: FrontServer }> {
    const project = await newProject(svc.url, name);
    const front = await startFrontServer(svc.url, script);
    return { project, front };
  }

  it('sends a batch as soon as maxBatchEntries are buffered, and the rest on flush()', async () => {
    const { project, front } = await setup('by-count');
    const clock = new ManualClock();
    const client = new IngestClient({ url: front.url, secretKey: project.secret, maxBatchEntries: 3, clock });
    for (let i = 0; i < 7; i++) await client.log(entry(i));
    await waitUntil(() => client.stats.batches === 2, 'two full batches');
    assert.deepEqual(
      front.requests.map((r) => r.entries.length),
      [3, 3],
    );
    assert.equal(client.stats.buffered, 1, 'the seventh waits for its batch to fill');
    await client.flush();
    assert.deepEqual(
      front.requests.map((r) => r.entries.map((e) => e.n)),
      [[0, 1, 2], [3, 4, 5], [6]],
    );
    assert.ok(front.requests.every((r) => r.path === '/v1/logs' && r.authorization === `Bearer ${project.secret}`));
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      [0, 1, 2, 3, 4, 5, 6],
    );
    await client.close();
    await front.close();
  });

  it('closes a batch before its JSON body would pass maxBatchBytes', async () => {
    const { project, front } = await setup('by-bytes');
    const sizeOf = JSON.stringify(entry(0, { pad: 'x'.repeat(100) })).length;
    // Room for two entries and their brackets and comma, not three.
    const maxBatchBytes = 2 * sizeOf + 3;
    const client = new IngestClient({ url: front.url, secretKey: project.secret, maxBatchBytes, clock: new ManualClock() });
    for (let i = 0; i < 5; i++) await client.log(entry(i, { pad: 'x'.repeat(100) }));
    await waitUntil(() => client.stats.batches === 2, 'two full batches');
    await client.flush();
    assert.deepEqual(
      front.requests.map((r) => r.entries.length),
      [2, 2, 1],
    );
    assert.ok(
      front.requests.every((r) => r.bytes <= maxBatchBytes),
      'no body over the limit',
    );
    assert.equal(front.requests[0]!.bytes, maxBatchBytes);
    assert.equal((await storedEntries(svc.url, project)).length, 5);
    await client.close();
    await front.close();
  });

  it('sends an entry larger than maxBatchBytes alone rather than holding it forever', async () => {
    const { project, front } = await setup('oversized');
    const client = new IngestClient({ url: front.url, secretKey: project.secret, maxBatchBytes: 200, clock: new ManualClock() });
    await client.log(entry(0));
    await client.log(entry(1, { pad: 'y'.repeat(500) }));
    await client.log(entry(2));
    await client.flush();
    assert.deepEqual(
      front.requests.map((r) => r.entries.map((e) => e.n)),
      [[0], [1], [2]],
    );
    assert.equal(client.stats.accepted, 3);
    await client.close();
    await front.close();
  });

  it('sends a partial batch once its oldest entry is flushIntervalMs old', async () => {
    const { project, front } = await setup('by-age');
    const clock = new ManualClock();
    const client = new IngestClient({ url: front.url, secretKey: project.secret, flushIntervalMs: 1000, clock });
    await client.log(entry(0));
    clock.advance(400);
    await client.log(entry(1));
    assert.deepEqual(clock.pending(), [1000], 'one timer, for the oldest entry');
    clock.advance(599);
    await settle();
    assert.equal(front.requests.length, 0, 'nothing sent before the interval');
    clock.advance(1);
    await waitUntil(() => client.stats.batches === 1, 'the timed batch');
    assert.deepEqual(
      front.requests.map((r) => r.entries.map((e) => e.n)),
      [[0, 1]],
    );
    // A new entry starts a new interval, counted from its own arrival.
    await client.log(entry(2));
    clock.advance(999);
    await settle();
    assert.equal(front.requests.length, 1);
    clock.advance(1);
    await waitUntil(() => client.stats.batches === 2, 'the second timed batch');
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      [0, 1, 2],
    );
    await client.close();
    await front.close();
  });

  it('fills in a missing timestamp and sends the rest of the entry untouched', async () => {
    const { project, front } = await setup('timestamp');
    const clock = new ManualClock(Date.UTC(2025, 5, 1, 8, 30, 0, 123));
    const client = new IngestClient({ url: front.url, secretKey: project.secret, clock });
    const original = { level: 'warning' as const, event: 'disk almost full', context: { disk: '/dev/sda1', free: 0.03 }, tags: ['a', 'b'] };
    await client.log(original);
    original.context.free = 0.5; // serialised at log(): later changes are not sent
    await client.log({ level: 'info', event: 'dated', timestamp: new Date(Date.UTC(2024, 0, 2)) });
    await client.close();
    const [first, second] = await storedEntries(svc.url, project);
    assert.deepEqual(
      { event: first!.event, level: first!.level, context: first!.context, tags: first!.tags, timestamp: first!.timestamp },
      { event: 'disk almost full', level: 'warning', context: { disk: '/dev/sda1', free: 0.03 }, tags: ['a', 'b'], timestamp: '2025-06-01T08:30:00.123Z' },
    );
    assert.equal(second!.timestamp, '2024-01-02T00:00:00.000Z');
    await front.close();
  });

  it("with overflow 'drop-oldest', a full buffer drops its oldest waiting entries and counts them", async () => {
    const { project, front } = await setup('drop-oldest', (n) => (n === 0 ? 'hold' : 'forward'));
    const client = new IngestClient({ url: front.url, secretKey: project.secret, maxBatchEntries: 2, maxBufferedEntries: 4, clock: new ManualClock() });
    await client.log(entry(0));
    await client.log(entry(1));
    await waitUntil(() => front.requests.length === 1, 'the first batch in flight');
    for (let i = 2; i < 10; i++) await client.log(entry(i));
    assert.deepEqual(
      { buffered: client.stats.buffered, inFlight: client.stats.inFlight, dropped: client.stats.dropped },
      { buffered: 4, inFlight: 2, dropped: 4 },
    );
    front.release();
    await client.close();
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      [0, 1, 6, 7, 8, 9],
    );
    assert.equal(client.stats.dropped, 4);
    assert.equal(client.stats.accepted, 6);
    await front.close();
  });

  it('bounds the buffer by bytes as well as by count', async () => {
    const { project, front } = await setup('drop-by-bytes', (n) => (n === 0 ? 'hold' : 'forward'));
    const size = Buffer.byteLength(JSON.stringify(entry(0, { pad: 'z'.repeat(200) })));
    const client = new IngestClient({ url: front.url, secretKey: project.secret, maxBatchEntries: 1, maxBufferedBytes: 3 * size, clock: new ManualClock() });
    await client.log(entry(0, { pad: 'z'.repeat(200) }));
    await waitUntil(() => front.requests.length === 1, 'the first batch in flight');
    for (let i = 1; i < 6; i++) await client.log(entry(i, { pad: 'z'.repeat(200) }));
    assert.deepEqual(
      { buffered: client.stats.buffered, bytes: client.stats.bufferedBytes, dropped: client.stats.dropped },
      { buffered: 3, bytes: 3 * size, dropped: 2 },
    );
    front.release();
    await client.close();
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      [0, 3, 4, 5],
    );
    await front.close();
  });

  it("with overflow 'block', log() waits for room and nothing is dropped", async () => {
    const { project, front } = await setup('block', (n) => (n === 0 ? 'hold' : 'forward'));
    const client = new IngestClient({
      url: front.url,
      secretKey: project.secret,
      maxBatchEntries: 2,
      maxBufferedEntries: 3,
      overflow: 'block',
      clock: new ManualClock(),
    });
    await client.log(entry(0));
    await client.log(entry(1));
    await waitUntil(() => front.requests.length === 1, 'the first batch in flight');
    for (let i = 2; i < 5; i++) await client.log(entry(i));
    let admitted = false;
    const blocked = client.log(entry(5)).then(() => (admitted = true));
    const alsoBlocked = client.log(entry(6));
    await settle();
    assert.equal(admitted, false, 'the buffer is full');
    assert.equal(client.stats.waiting, 2);
    front.release();
    await blocked;
    await alsoBlocked;
    await client.close();
    assert.equal(client.stats.dropped, 0);
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      [0, 1, 2, 3, 4, 5, 6],
    );
    await front.close();
  });

  it('close() delivers everything buffered, then refuses new entries; flush() and close() are safe to repeat', async () => {
    const { project, front } = await setup('close');
    const client = new IngestClient({ url: front.url, secretKey: project.secret, flushIntervalMs: 3_600_000 });
    for (let i = 0; i < 25; i++) await client.log(entry(i));
    assert.equal(front.requests.length, 0);
    await Promise.all([client.close(), client.close(), client.flush()]);
    assert.equal(client.stats.accepted, 25);
    assert.throws(() => client.log(entry(99)), /closed/);
    await client.flush();
    await client.close();
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      Array.from({ length: 25 }, (_, i) => i),
    );
    await front.close();
  });

  it('reaches a service mounted under a path prefix', async () => {
    const mounted = await startService('file', { basePath: '/logs' });
    try {
      const project = await newProject(`${mounted.url}/logs`, 'prefixed');
      const client = new IngestClient({ url: `${mounted.url}/logs/`, secretKey: project.secret });
      await client.log(entry(1));
      await client.close();
      assert.equal(client.stats.accepted, 1);
      assert.deepEqual(
        (await storedEntries(`${mounted.url}/logs`, project)).map((e) => e.n),
        [1],
      );
    } finally {
      await mounted.stop({ dropDatabase: true });
    }
  });

  it('checks its options', () => {
    assert.throws(() => new IngestClient({ url: 'ftp://x', secretKey: 'slk_x' }), /http or https/);
    assert.throws(() => new IngestClient({ url: 'http://x', secretKey: 'an-access-token' }), /slk_/);
    assert.throws(() => new IngestClient({ url: 'http://x', secretKey: 'slk_x', maxBatchEntries: 0 }), /maxBatchEntries/);
    assert.throws(() => new IngestClient({ url: 'http://x', secretKey: 'slk_x', flushIntervalMs: 1.5 }), /flushIntervalMs/);
    assert.throws(() => new IngestClient({ url: 'http://x', secretKey: 'slk_x', overflow: 'spill' as never }), /overflow/);
  });
});
