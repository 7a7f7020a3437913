/**
 * A live feed moves a stream's read position past entries it has checked
 * and found not to match, without sending anything: after a short read,
 * the next read starts at the largest id that read was sure to see (the
 * projects' last id read before it, and on PostgreSQL over several
 * projects no further than the settled horizon), not at the last entry
 * sent. A filter that matches nothing for a while so stops re-reading the
 * whole history after its cursor at every notification. The client's
 * position (the `id:` lines) is still the last entry sent.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Feed } from '../../lib/live/feed.js';
import { Horizons } from '../../lib/live/horizons.js';
import { ReadGate } from '../../lib/live/read-gate.js';
import { FakeReads, FILTER, GROUP, PAGE, PROJECT, setUp, subscribe } from '../support/live-fakes.js';

describe('live feed: reading past checked entries', () => {
  it('after a short read, the next read starts at the last id stored before it, and only matches are sent', async () => {
    const reads = new FakeReads();
    const history = reads.add(1, 1000);
    const { feed, res, sub } = setUp(PROJECT, reads);
    sub.cursor = 0;
    await feed.kick();
    assert.equal(sub.cursor, history, 'the whole history was checked once');

    const noise = reads.add(1, 5);
    feed.entriesMayExist(noise);
    await feed.idle();
    const wanted = reads.add(1, 1, true);
    feed.entriesMayExist(wanted);
    await feed.idle();
    assert.deepEqual(reads.readsAfter, [0, history, noise], 'each read starts after what the last one checked');
    assert.deepEqual(res.sentIds(), [wanted]);
    assert.equal(sub.cursor, wanted);

    // Nothing new past the cursor: no read at all.
    feed.entriesMayExist(wanted);
    await feed.idle();
    assert.equal(reads.readsAfter.length, 3);
  });

  it('never passes an entry that commits between reading the last id and the read', async () => {
    const reads = new FakeReads();
    const history = reads.add(1, 300);
    const ops = reads.asReadOps();
    const read = ops.logsAfter;
    let late = 0;
    // The read's view misses an entry committed after the last id was read.
    ops.logsAfter = async (selection, afterId, limit) => {
      const rows = await read(selection, afterId, limit);
      if (late === 0) late = reads.add(1, 1, true);
      return rows;
    };
    const feed = new Feed('k', PROJECT, FILTER, { db: ops, horizons: null, page: PAGE, onReadError: (err) => assert.fail(String(err)) });
    const { res, sub } = subscribe(PROJECT);
    feed.add(sub);
    sub.cursor = 0;
    await feed.kick();
    assert.equal(sub.cursor, history, 'the position stops at the last id read before the read');
    feed.entriesMayExist(late);
    await feed.idle();
    assert.deepEqual(res.sentIds(), [late], 'the entry committed meanwhile is sent');
    assert.deepEqual(reads.readsAfter, [0, history]);
  });

  it('over several projects with a settled horizon, stops at the horizon', async () => {
    const reads = new FakeReads();
    reads.add(1, 200);
    reads.add(2, 200);
    reads.settledAt = 250;
    const horizons = new Horizons(reads.asReadOps(), new ReadGate(2));
    const { feed, res, sub } = setUp(GROUP, reads, horizons);
    sub.cursor = 0;
    await feed.kick();
    assert.equal(sub.cursor, 250, 'no further than the settled horizon');
    reads.settledAt = null;
    const wanted = reads.add(2, 1, true);
    feed.entriesMayExist(wanted, horizons.tick());
    await feed.idle();
    assert.deepEqual(reads.readsAfter, [0, 250]);
    assert.deepEqual(res.sentIds(), [wanted]);
  });

  it('over a group, does not pass the entries of a project it has not read yet (created or unblocked since)', async () => {
    const reads = new FakeReads();
    const history = reads.add(1, 100);
    const { feed, res, sub } = setUp(GROUP, reads);
    sub.cursor = 0;
    await feed.kick();
    assert.equal(sub.cursor, history);
    // Project 3 joins the group and gets an entry; then project 1 gets more,
    // and its news is served before the feed hears of project 3.
    reads.groupProjects = [1, 2, 3];
    const late = reads.add(3, 1, true);
    const noise = reads.add(1, 10);
    feed.entriesMayExist(noise);
    await feed.idle();
    assert.equal(sub.cursor, history, 'the position stays while a project of the group was not read');
    feed.entriesMayExist(late);
    await feed.idle();
    assert.deepEqual(res.sentIds(), [late]);
    assert.equal(sub.cursor, noise, 'once every project is read, the position moves on');
  });

  it("over a group on PostgreSQL, reads the projects' last id only while its reads send nothing", async () => {
    const reads = new FakeReads();
    reads.add(1, 50);
    const horizons = new Horizons(reads.asReadOps(), new ReadGate(2));
    const { feed, res, sub } = setUp(GROUP, reads, horizons);
    sub.cursor = 0;
    await feed.kick();
    assert.equal(reads.probes, 1, 'the first read');
    for (let i = 0; i < 5; i++) {
      reads.add(1, 3);
      feed.entriesMayExist(reads.add(1, 1, true), horizons.tick());
      await feed.idle();
    }
    assert.equal(res.sentIds().length, 5);
    assert.equal(reads.probes, 2, 'only the first read after one that sent nothing');
    feed.entriesMayExist(reads.add(1, 4), horizons.tick());
    await feed.idle();
    feed.entriesMayExist(reads.add(1, 4), horizons.tick());
    await feed.idle();
    assert.equal(reads.probes, 3, 'the read after one that sent nothing');
    assert.equal(sub.cursor, reads.lastId());
  });

  it('where ids commit in order, every short read passes the cursor to the last id of all', async () => {
    const reads = new FakeReads();
    reads.add(1, 5, true);
    const { feed, res, sub } = setUp(PROJECT, reads);
    sub.cursor = 0;
    await feed.kick();
    const other = reads.add(2, 7);
    feed.entriesMayExist(other);
    await feed.idle();
    assert.equal(res.sentIds().length, 5);
    assert.equal(sub.cursor, other, "another project's entries are passed too: the next transaction can come from memory");
    assert.equal(reads.probes, 0, 'no per-project probe');
  });

  it('a full page moves the position only to the last entry sent', async () => {
    const reads = new FakeReads();
    reads.add(1, 10);
    reads.add(1, PAGE.entries + 50, true);
    const { feed, res, sub } = setUp(PROJECT, reads);
    sub.cursor = 0;
    await feed.kick();
    const sent = res.sentIds();
    assert.equal(sent.length, PAGE.entries + 50);
    assert.equal(new Set(sent).size, sent.length, 'no entry twice');
    assert.deepEqual(reads.readsAfter, [0, sent[PAGE.entries - 1]]);
    assert.equal(sub.cursor, reads.lastId());
  });
});
