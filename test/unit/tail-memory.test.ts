/**
 * The sealer's memory of the tail rows its process committed
 * (log-index/tail-memory.ts): when it is trusted, the full run it gives,
 * what a seal takes from it, and its bound. The seal transaction's check
 * that a run from memory is exactly the tail's oldest rows is tested on
 * PostgreSQL (test/storage/postgres-sealing.test.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TailMemory } from '../../lib/storage/log-index/tail-memory.js';
import { SEAL_MAX_ENTRIES } from '../../lib/storage/log-index/sealed-block.js';

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
/** A piece of `n` rows with ids from `from` (the rows' bytes only matter for the bound). */
const piece = (from: number, n: number, size = 10) => ({ rows: new Uint8Array(size), ids: range(from, n), bytes: n * 100 });

describe('tail memory', () => {
  it('is trusted once a commit leaves the tail holding just its rows, and gives the oldest full run across pieces', () => {
    const memory = new TailMemory();
    memory.committed(1, [piece(1, 700)], 900);
    memory.committed(1, [piece(701, 700)], 1600);
    assert.equal(memory.fullRun(1), null, 'the tail held rows memory never saw');
    memory.committed(1, [piece(2001, 600)], 600);
    memory.committed(1, [piece(2601, 300), piece(2901, 300)], 1200);
    const run = memory.fullRun(1)!;
    assert.deepEqual(run.ids, [...range(2001, 600), ...range(2601, 300), ...range(2901, SEAL_MAX_ENTRIES - 900)]);
    assert.deepEqual(
      run.pieces.map((p) => p.skip),
      [0, 0, 0],
    );
    assert.equal(memory.fullRun(2), null);
  });

  it('drops what a seal took, part of a piece included, and trusts or distrusts by the tail left', () => {
    const memory = new TailMemory();
    memory.committed(1, [piece(1, 600)], 600);
    memory.committed(1, [piece(601, 600)], 1200);
    memory.committed(1, [piece(1201, 600)], 1800);
    memory.sealed(1, SEAL_MAX_ENTRIES, 1800 - SEAL_MAX_ENTRIES);
    assert.equal(memory.fullRun(1), null, 'fewer than a full run left');
    memory.committed(1, [piece(1801, 400)], 1800 - SEAL_MAX_ENTRIES + 400);
    const run = memory.fullRun(1)!;
    assert.equal(run.ids[0], SEAL_MAX_ENTRIES + 1);
    assert.deepEqual(
      run.pieces.map((p) => p.skip),
      [SEAL_MAX_ENTRIES - 600, 0, 0],
    );
    // A seal that leaves more in the tail than memory holds: another process's rows are there.
    memory.sealed(1, 1100, 1200);
    assert.equal(memory.fullRun(1), null);
    memory.committed(1, [piece(2201, 500)], 1700);
    assert.equal(memory.fullRun(1), null, 'still not trusted');
    memory.sealed(1, 1700, 1000);
    memory.committed(1, [piece(2701, 100)], 1100);
    assert.equal(memory.fullRun(1)!.ids[0], 1701, 'a seal left the tail holding as many rows as memory: trusted again');
    memory.distrust(1);
    assert.equal(memory.fullRun(1), null);
  });

  it('keeps nothing of a project past its bound or told out of order', () => {
    const memory = new TailMemory(1000);
    memory.committed(1, [piece(1, 600, 600)], 600);
    memory.committed(2, [piece(601, 600, 600)], 600);
    assert.equal(memory.heldBytes(), 600, 'the second project would go over the bound');
    memory.committed(1, [piece(1201, 600, 300)], 1200);
    assert.ok(memory.fullRun(1) !== null);
    memory.committed(1, [piece(1000, 10, 10)], 1210);
    assert.equal(memory.fullRun(1), null, 'an id below one held: told out of order');
    assert.equal(memory.heldBytes(), 0);
  });
});
