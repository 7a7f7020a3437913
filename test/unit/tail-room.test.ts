/**
 * Backpressure from sealing: a request for a project whose tail is over
 * the bound waits until a seal makes room, never longer than the longest
 * wait, and stops waiting for a while once sealing made no progress.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TAIL_ENTRIES, TailRoom } from '../../lib/storage/log-index/tail-room.js';

/** A room over a mutable set of full tails, counting reads and kicks. */
function roomOver(full: Set<number>, options: { maxWaitMs?: number; bypassMs?: number; fail?: boolean; nonEmpty?: Set<number> } = {}) {
  const seen = { reads: 0, kicks: 0, limits: [] as number[], warnings: [] as string[] };
  const room = new TailRoom({
    tailsOver: async (limit) => {
      seen.reads += 1;
      seen.limits.push(limit);
      if (options.fail) throw new Error('database gone');
      return limit === 1 ? [...new Set([...full, ...(options.nonEmpty ?? [])])] : [...full];
    },
    kick: () => void (seen.kicks += 1),
    logger: { warn: (m: string) => void seen.warnings.push(m) } as never,
    ...options,
  });
  return { room, seen };
}

const settled = async (p: Promise<void>, ms: number): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('tail room', () => {
  // The room's timers do not hold the process open (a service's server does): this does, for the tests.
  const keepAlive = setInterval(() => {}, 1000);
  after(() => clearInterval(keepAlive));

  it('lets a project with room through at once, asking for tails over the bound', async () => {
    const { room, seen } = roomOver(new Set([2]));
    assert.equal(await settled(room.wait(1), 50), true);
    assert.deepEqual(seen.limits, [MAX_TAIL_ENTRIES, 1], 'and for tails holding anything, in the same refresh');
    assert.equal(seen.kicks, 0);
  });

  it('tells an empty tail, one holding some entries, and a full one', async () => {
    const nonEmpty = new Set([1, 2]);
    const { room } = roomOver(new Set([9]), { nonEmpty });
    assert.equal(await room.fill(3), 'empty');
    assert.equal(await room.fill(1), 'some');
    assert.equal(await room.fill(9), 'full');
    nonEmpty.delete(1);
    assert.equal(await room.fill(1), 'some', 'what was read stays for TAIL_CHECK_MS');
    room.sealed();
    assert.equal(await room.fill(1), 'empty', 'a seal has the tails read again');
    const { room: unreadable } = roomOver(new Set(), { fail: true });
    assert.equal(await unreadable.fill(1), 'full', 'a tail that cannot be read is not taken for empty');
  });

  it('holds a project with a full tail until a seal makes room, and asks sealing to run', async () => {
    const full = new Set([1]);
    const { room, seen } = roomOver(full);
    const waiting = room.wait(1);
    assert.equal(await settled(waiting, 300), false, 'still waiting after several checks');
    assert.equal(seen.kicks, 1);
    assert.ok(seen.reads >= 2, 'looked again while waiting');
    full.delete(1);
    room.sealed();
    assert.equal(await settled(waiting, 50), true, 'the seal woke it');
    assert.equal(await settled(room.wait(2), 50), true, 'other projects were never held');
  });

  it('gives up after the longest wait, then lets requests through for a while, saying so', async () => {
    const { room, seen } = roomOver(new Set([1]), { maxWaitMs: 150, bypassMs: 400 });
    const started = performance.now();
    await room.wait(1);
    assert.ok(performance.now() - started >= 140, 'waited its time');
    assert.equal(seen.warnings.length, 1);
    assert.match(seen.warnings[0]!, /ingestion goes on without waiting/);
    assert.equal(await settled(room.wait(1), 50), true, 'bypassed');
    await new Promise((r) => setTimeout(r, 450));
    assert.equal(await settled(room.wait(1), 50), false, 'held again once the bypass is over');
    room.close();
  });

  it('holds nothing back when the tails cannot be read, or once closed', async () => {
    assert.equal(await settled(roomOver(new Set([1]), { fail: true }).room.wait(1), 50), true);
    const { room } = roomOver(new Set([1]));
    const waiting = room.wait(1);
    room.close();
    assert.equal(await settled(waiting, 50), true);
    assert.equal(await settled(room.wait(1), 50), true);
  });
});
