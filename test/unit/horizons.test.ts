/**
 * Horizons (PostgreSQL live streams): each settle for a set of projects
 * tells storage the highest position already settled for it, so storage
 * answers at once when it can pass it and waits only for what holds it
 * there; a stream's start position asks for the full wait.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Horizons } from '../../lib/live/horizons.js';
import { ReadGate } from '../../lib/live/read-gate.js';

/** A storage stand-in answering settles from a list, recording what each asked. */
function fakeStorage(answers: number[]) {
  const calls: { projectIds: readonly number[] | undefined; above: number | undefined }[] = [];
  return {
    calls,
    async lastLogId(projectIds?: readonly number[], above?: number): Promise<number> {
      calls.push({ projectIds, above });
      const answer = answers.shift();
      if (answer === undefined) throw new Error('no more answers');
      return answer;
    },
  };
}

describe('Horizons', () => {
  it('passes the highest position settled so far for the same projects, whatever their order', async () => {
    const db = fakeStorage([10, 7, 25, 3]);
    const horizons = new Horizons(db, new ReadGate(2));
    assert.equal(await horizons.settle([1, 2], horizons.tick()), 10);
    assert.equal(await horizons.settle([2, 1], horizons.tick()), 7);
    assert.equal(await horizons.settle([1, 2], horizons.tick()), 25);
    assert.equal(await horizons.settle([1, 3], horizons.tick()), 3);
    assert.deepEqual(
      db.calls.map((c) => c.above),
      [-1, 10, 10, -1],
      'nothing settled yet: -1; then the highest answer for that set (never lowered); another set starts over',
    );
  });

  it('a stream’s start position waits for the ingestion in flight (no `above`) and does not count as settled', async () => {
    const db = fakeStorage([40, 12]);
    const horizons = new Horizons(db, new ReadGate(2));
    assert.equal(await horizons.start([1, 2]), 40);
    assert.equal(db.calls[0]!.above, undefined);
    assert.equal(await horizons.settle([1, 2], horizons.tick()), 12);
    assert.equal(db.calls[1]!.above, -1);
  });

  it('feeds asking while a settle started late enough is under way share it', async () => {
    let finish!: (n: number) => void;
    const calls: (number | undefined)[] = [];
    const db = {
      lastLogId(_projectIds?: readonly number[], above?: number): Promise<number> {
        calls.push(above);
        return new Promise<number>((resolve) => {
          finish = resolve;
        });
      },
    };
    const horizons = new Horizons(db, new ReadGate(2));
    const clock = horizons.tick();
    const first = horizons.settle([1, 2], clock);
    const second = horizons.settle([2, 1], clock);
    await new Promise((r) => setImmediate(r));
    finish(9);
    assert.deepEqual(await Promise.all([first, second]), [9, 9]);
    assert.equal(calls.length, 1);
  });

  it('news about a project set feeds read lately starts its settle at once, which their next read joins', async () => {
    const answers: ((n: number) => void)[] = [];
    const calls: (number | undefined)[] = [];
    const db = {
      lastLogId(_projectIds?: readonly number[], above?: number): Promise<number> {
        calls.push(above);
        return new Promise<number>((resolve) => answers.push(resolve));
      },
    };
    const horizons = new Horizons(db, new ReadGate(2));
    const first = horizons.settle([1, 2], horizons.tick());
    answers.shift()!(5);
    assert.equal(await first, 5);
    assert.equal(calls.length, 1);

    horizons.tick([7]);
    assert.equal(calls.length, 1, 'news about other projects starts nothing');
    const clock = horizons.tick([2]);
    assert.equal(calls.length, 2, 'news about one of the set’s projects starts a settle');
    assert.equal(calls[1], 5);
    const next = horizons.settle([2, 1], clock);
    assert.equal(calls.length, 2, 'the feed joins the settle under way');
    answers.shift()!(9);
    assert.equal(await next, 9);
    horizons.tick(null);
    assert.equal(calls.length, 3, 'news about any project starts one too');
    answers.shift()!(9);
  });

  it('a settle still queued at the gate takes later news along', async () => {
    const answers: ((n: number) => void)[] = [];
    let calls = 0;
    const db = {
      lastLogId(): Promise<number> {
        calls += 1;
        return new Promise<number>((resolve) => answers.push(resolve));
      },
    };
    const horizons = new Horizons(db, new ReadGate(1));
    const busy = horizons.settle([3, 4], horizons.tick());
    const queued = horizons.settle([1, 2], horizons.tick());
    const joined = horizons.settle([1, 2], horizons.tick());
    assert.equal(calls, 1);
    answers.shift()!(1);
    await busy;
    await new Promise((r) => setImmediate(r));
    assert.equal(calls, 2, 'one settle for both asks');
    answers.shift()!(8);
    assert.deepEqual(await Promise.all([queued, joined]), [8, 8]);
  });
});
