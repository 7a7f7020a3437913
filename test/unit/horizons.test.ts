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
});
