/**
 * A live feed sends a committed transaction's entries from memory to the
 * streams that have everything before it, and reads for every other
 * stream: no entry is lost, sent twice or sent out of order whichever way
 * an entry arrives, and a stream that falls behind comes back to memory
 * after one read. Also: what ingestion reports of a commit (the stored
 * rows, refused entries left out, in id order).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Horizons } from '../../lib/live/horizons.js';
import { ReadGate } from '../../lib/live/read-gate.js';
import { committedEntries } from '../../lib/ingest/committed-entries.js';
import { CHUNK_ENTRIES, encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { readLogFilter } from '../../lib/logs/log-query-params.js';
import { entryMatcher } from '../../lib/search/entry-match.js';
import { ChunkWords, wordProbeOf } from '../../lib/search/chunk-words.js';
import { fixtureQueries, mixedEntries } from '../support/logs.js';
import type { PreparedEntry } from '../../lib/storage/types-logs.js';
import { FakeReads, GROUP, PAGE, PROJECT, setUp, subscribe } from '../support/live-fakes.js';

/** A project feed on in-order storage, its stream caught up with `history` entries. */
async function caughtUp(history = 20) {
  const reads = new FakeReads();
  reads.add(1, history, true);
  const set = setUp(PROJECT, reads);
  set.sub.cursor = 0;
  await set.feed.kick();
  assert.equal(set.sub.cursor, reads.lastId());
  return { reads, ...set };
}

describe('live feed: entries from memory', () => {
  it('sends a transaction to a caught-up stream without reading, matches only', async () => {
    const { reads, feed, res, sub } = await caughtUp();
    const readsBefore = reads.readsAfter.length;
    const before = reads.lastId();
    reads.add(1, 3);
    const wanted = reads.add(1, 2, true);
    feed.takeCommitted(reads.committed(before), [1], true);
    feed.entriesMayExist(wanted);
    await feed.idle();
    assert.deepEqual(res.sentIds().slice(-2), [wanted - 1, wanted]);
    assert.equal(res.sentIds().length, 22);
    assert.equal(sub.cursor, wanted);
    assert.equal(reads.readsAfter.length, readsBefore, 'nothing was read');
  });

  it('where ids commit in order, keeps up through transactions of other projects', async () => {
    const { reads, feed, res, sub } = await caughtUp();
    const readsBefore = reads.readsAfter.length;
    for (let i = 0; i < 4; i++) {
      const before = reads.lastId();
      const other = reads.add(2, 5, true);
      feed.takeCommitted(reads.committed(before), [], true);
      feed.entriesMayExist(other);
      assert.equal(sub.cursor, other);
    }
    const before = reads.lastId();
    const wanted = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(before), [1], true);
    await feed.idle();
    assert.equal(res.sentIds().at(-1), wanted);
    assert.equal(reads.readsAfter.length, readsBefore, 'nothing was read');
  });

  it('a stream behind the transaction is served by a read, then from memory again', async () => {
    const { reads, feed, res, sub } = await caughtUp();
    // A transaction the feed never heard of (say, its report was lost).
    const missed = reads.add(1, 1, true);
    const before = reads.lastId();
    const next = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(before), [1], true);
    assert.equal(sub.cursor, missed - 1, 'not served from memory: the cursor cannot vouch for the entry before');
    feed.entriesMayExist(next);
    await feed.idle();
    assert.deepEqual(res.sentIds().slice(-2), [missed, next], 'the read sends both, in order');
    const reads1 = reads.readsAfter.length;
    const last = reads.lastId();
    const third = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(last), [1], true);
    feed.entriesMayExist(third);
    await feed.idle();
    assert.equal(res.sentIds().at(-1), third);
    assert.equal(reads.readsAfter.length, reads1, 'back to memory after one read');
    assert.equal(new Set(res.sentIds()).size, res.sentIds().length, 'no entry twice');
  });

  it('does not send again what a read that ran after the commit already sent', async () => {
    const { reads, feed, res, sub } = await caughtUp();
    const before = reads.lastId();
    const wanted = reads.add(1, 3, true);
    // The read sees the committed transaction before its report arrives.
    feed.entriesMayExist(wanted);
    await feed.idle();
    assert.equal(sub.cursor, wanted);
    feed.takeCommitted(reads.committed(before), [1], true);
    const sent = res.sentIds();
    assert.equal(sent.length, 23);
    assert.equal(new Set(sent).size, sent.length, 'no entry twice');
  });

  it('a paused stream is left to reads once it drains', async () => {
    const { reads, feed, res, sub } = await caughtUp();
    res.accepts = false;
    let before = reads.lastId();
    const first = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(before), [1], true);
    assert.equal(sub.paused, true);
    res.accepts = true;
    before = reads.lastId();
    const second = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(before), [1], true);
    feed.entriesMayExist(second);
    await feed.idle();
    assert.equal(sub.cursor, first, 'nothing more while paused');
    res.emit('drain');
    await feed.idle();
    assert.deepEqual(res.sentIds().slice(-2), [first, second]);
  });

  it('a transaction larger than a few pages is read (the index narrows it), with the same result', async () => {
    const { reads, feed, res } = await caughtUp();
    const readsBefore = reads.readsAfter.length;
    const before = reads.lastId();
    reads.add(1, PAGE.entries * 3 + 1);
    const wanted = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(before), [1], true);
    feed.entriesMayExist(wanted);
    await feed.idle();
    assert.equal(res.sentIds().at(-1), wanted);
    assert.equal(reads.readsAfter.length, readsBefore + 1);
  });

  it('a transaction beyond one page of bytes sends one page from memory and reads the rest', async () => {
    const reads = new FakeReads();
    const { feed, res, sub } = setUp(PROJECT, reads, null, { entries: PAGE.entries, bytes: 1_000 });
    sub.cursor = 0;
    await feed.kick();
    const wanted = reads.add(1, 40, true);
    feed.takeCommitted(reads.committed(0), [1], true);
    const fromMemory = res.sentIds().length;
    assert.ok(fromMemory > 0 && fromMemory < 40, `one page from memory (${fromMemory})`);
    feed.entriesMayExist(wanted);
    await feed.idle();
    assert.deepEqual(
      res.sentIds(),
      Array.from({ length: 40 }, (_, i) => i + 1),
      'all, once, in order',
    );
  });

  it('streams at different cursors each get what they lack', async () => {
    const { reads, feed, res } = await caughtUp();
    const late = subscribe(PROJECT);
    feed.add(late.sub);
    late.sub.cursor = 15;
    const before = reads.lastId();
    reads.add(1, 2, true);
    feed.takeCommitted(reads.committed(before), [1], true);
    assert.equal(late.res.sentIds().length, 0, 'behind: left to a read');
    feed.entriesMayExist(reads.lastId());
    await feed.idle();
    assert.deepEqual(late.res.sentIds(), [16, 17, 18, 19, 20, 21, 22]);
    assert.deepEqual(res.sentIds().slice(-2), [21, 22]);
  });

  it('on PostgreSQL, a project stream takes a transaction whose project had nothing after its cursor', async () => {
    const reads = new FakeReads();
    reads.add(1, 5, true);
    const horizons = new Horizons(reads.asReadOps(), new ReadGate(2));
    const { feed, res, sub } = setUp(PROJECT, reads, horizons);
    sub.cursor = 0;
    await feed.kick();
    const readsBefore = reads.readsAfter.length;
    // Another project's entries in between do not matter to a project stream.
    reads.add(2, 3, true);
    let before = reads.lastId();
    const wanted = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(before, true), [1], false);
    assert.equal(res.sentIds().at(-1), wanted);
    assert.equal(sub.cursor, wanted);
    assert.equal(reads.readsAfter.length, readsBefore);
    // Another process stored entries of the project: its last id before the next transaction is past the cursor.
    const foreign = reads.add(1, 1, true);
    before = reads.lastId();
    const next = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(before, true), [1], false);
    assert.equal(sub.cursor, wanted, 'not from memory');
    feed.entriesMayExist(next);
    await feed.idle();
    assert.deepEqual(res.sentIds().slice(-2), [foreign, next]);
  });

  it('on PostgreSQL, a group stream always reads (ids of its projects may commit out of order)', async () => {
    const reads = new FakeReads();
    const horizons = new Horizons(reads.asReadOps(), new ReadGate(2));
    const { feed, res, sub } = setUp(GROUP, reads, horizons);
    sub.cursor = 0;
    await feed.kick();
    const wanted = reads.add(1, 1, true);
    feed.takeCommitted(reads.committed(0, true), [1], false);
    assert.equal(res.sentIds().length, 0);
    feed.entriesMayExist(wanted, horizons.tick());
    await feed.idle();
    assert.deepEqual(res.sentIds(), [wanted]);
  });

  it("a group stream on in-order storage takes its projects' entries, but not those of a project it has not resolved", async () => {
    const reads = new FakeReads();
    const { feed, res, sub } = setUp(GROUP, reads);
    sub.cursor = 0;
    await feed.kick();
    let before = reads.lastId();
    reads.add(1, 1, true);
    const two = reads.add(2, 1, true);
    feed.takeCommitted(reads.committed(before), [1, 2], true);
    assert.deepEqual(res.sentIds(), [1, two]);
    // Project 3 joined the group after the feed resolved it.
    reads.groupProjects = [1, 2, 3];
    before = reads.lastId();
    const three = reads.add(3, 1, true);
    feed.takeCommitted(reads.committed(before), [3], true);
    assert.equal(sub.cursor, two, 'not from memory');
    feed.refreshProjects();
    feed.entriesMayExist(three);
    await feed.idle();
    assert.deepEqual(res.sentIds(), [1, two, three]);
  });
});

/** Varied entries committed in chunks of 7: each holds a few entries, so most filters pass some and not others. */
function smallChunks() {
  const entries = entriesFromValues(mixedEntries(300, 5)).entries;
  const requests = [];
  for (let i = 0; i < entries.length; i += 7) requests.push(encodeRequest(1, 0, entries.slice(i, i + 7)));
  let id = 0;
  return committedEntries(
    requests,
    requests.map((r) => r.sizes.map(() => ({ id: ++id }))),
    null,
  )!;
}

describe('committed entries: what ingestion reports', () => {
  const prepared = (event: string, level = 1): PreparedEntry => {
    const body = JSON.stringify({ level: 'info', event, timestamp: '2025-01-01T00:00:00.000Z' });
    return { body, bytes: Buffer.byteLength(body), level, timestamp: Date.parse('2025-01-01T00:00:00.000Z') };
  };

  it('decodes the stored rows in id order, across chunks, refused entries left out', () => {
    const big = Array.from({ length: CHUNK_ENTRIES + 3 }, (_, i) => prepared(`a${i}`));
    const requests = [encodeRequest(7, 1000, big), encodeRequest(8, 2000, [prepared('b0', 3), prepared('b1'), prepared('b2')])];
    // Ids as a backend would give them: the second request's first, then the first's; one refused.
    const outcomes = [big.map((_, i) => ({ id: 10 + i })), [{ id: 1 }, { quota: 'max_entries' as const }, { id: 2 }]];
    const committed = committedEntries(requests, outcomes, null)!;
    assert.equal(committed.firstId, 1);
    assert.equal(committed.maxId, 10 + big.length - 1);
    assert.deepEqual(
      [...committed.counts],
      [
        [7, big.length],
        [8, 2],
      ],
    );
    const rows = committed.rows([7, 8]);
    assert.equal(rows.length, big.length + 2);
    assert.deepEqual(
      rows.map((r) => r.id),
      [1, 2, ...big.map((_, i) => 10 + i)],
    );
    assert.deepEqual(rows[0], {
      id: 1,
      projectId: 8,
      receivedAt: 2000,
      timestamp: Date.parse('2025-01-01T00:00:00.000Z'),
      level: 3,
      body: prepared('b0', 3).body,
    });
    assert.equal(rows[1]!.body, prepared('b2').body);
    assert.equal(rows.at(-1)!.body, big.at(-1)!.body);
    assert.equal(rows.at(-1)!.receivedAt, 1000);
    assert.equal(committed.rows([8])[0], rows[0], 'decoded once');
    assert.deepEqual(
      committed.rows([8]).map((r) => r.id),
      [1, 2],
      'only the projects asked for',
    );
  });

  it("a filter's words tested on a chunk's rows never leave out a chunk holding a match", () => {
    const committed = smallChunks();
    let narrowed = 0;
    for (const params of fixtureQueries()) {
      const filter = readLogFilter(new URLSearchParams(params));
      const test = entryMatcher(filter) ?? (() => true);
      const probe = wordProbeOf(filter);
      if (!probe) continue;
      const holds = new ChunkWords([probe]).forCommit();
      const kept = committed.rows([1], (rows) => holds(rows, probe));
      const all = committed.rows([1]);
      assert.deepEqual(
        kept.filter((r) => test(r.body)).map((r) => r.id),
        all.filter((r) => test(r.body)).map((r) => r.id),
        new URLSearchParams(params).toString(),
      );
      if (kept.length < all.length) narrowed += 1;
    }
    assert.ok(narrowed > 10, `the terms leave chunks out for many filters (${narrowed})`);
  });

  it("a level tested on a chunk's counts per level never leaves out an entry at that level", () => {
    const committed = smallChunks();
    const all = committed.rows([1]);
    let narrowed = 0;
    for (const minLevel of [null, 0, 1, 2, 3, 4]) {
      const kept = committed.rows([1], undefined, minLevel);
      const atLevel = (rows: readonly { id: number; level: number }[]) => rows.filter((r) => r.level >= (minLevel ?? 0)).map((r) => r.id);
      assert.deepEqual(atLevel(kept), atLevel(all), `minLevel ${minLevel}`);
      if (kept.length < all.length) narrowed += 1;
    }
    assert.ok(narrowed > 0, 'the levels leave chunks out');
  });

  it('reports nothing when every entry was refused', () => {
    const requests = [encodeRequest(7, 1000, [prepared('a')])];
    assert.equal(committedEntries(requests, [[{ quota: 'max_bytes' }]], null), null);
  });
});
