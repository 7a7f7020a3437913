/**
 * OpenIngestion: this pool's ingestion transactions by backend pid, so a
 * live-stream settle awaits their end instead of polling; and the pause
 * between two polls for other processes' transactions, cut short when a
 * notification arrives.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OpenIngestion } from '../../lib/storage/postgres/ingesting.js';

describe('OpenIngestion', () => {
  it('answers the end of a marked transaction until it ends, committed or rolled back', async () => {
    const open = new OpenIngestion();
    let finish!: () => void;
    let fail!: (err: Error) => void;
    const events: string[] = [];
    const committed = open.track(async (marked) => {
      marked(101);
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      return 'done';
    });
    const rolledBack = open.track(async (marked) => {
      marked(102);
      await new Promise<void>((_resolve, reject) => {
        fail = reject;
      });
    });
    assert.equal(open.ended(103), null, 'a backend never marked is unknown');
    const first = open.ended(101);
    const second = open.ended(102);
    assert.ok(first && second);
    void first.then(() => events.push('101 ended'));
    void second.then(() => events.push('102 ended'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, [], 'not ended while the transactions run');
    finish();
    assert.equal(await committed, 'done');
    fail(new Error('rolled back'));
    await assert.rejects(rolledBack, /rolled back/);
    await Promise.all([first, second]);
    assert.deepEqual(events, ['101 ended', '102 ended']);
    assert.equal(open.ended(101), null);
    assert.equal(open.ended(102), null);
  });

  it('a transaction that never marked is not registered', async () => {
    const open = new OpenIngestion();
    await open.track(async () => 'no ingestion');
    assert.equal(open.ended(0), null);
  });

  it('a nudge ends every pause under way at once', async () => {
    const open = new OpenIngestion();
    // An hour: only the nudge can end them before the test runner gives up.
    const pauses = [open.pause(3_600_000), open.pause(3_600_000)];
    open.nudge();
    await Promise.all(pauses);
    // Pauses begun after the nudge wait for the next one.
    let later = false;
    const next = open.pause(3_600_000).then(() => (later = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(later, false);
    open.nudge();
    await next;
  });
});
