/**
 * The byte budget's line (lib/ingest/byte-budget.ts) on a clock the tests
 * move: a body slower than MIN_BODY_RATE loses its place to a waiting body
 * behind it, time paused for the budget is not held against a body, a move
 * that would break the budget's rule is not made, and the rule holds
 * through any sequence of steps.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteBudget, MIN_BODY_RATE, RATE_WINDOW_MS, type BodyHold } from '../../lib/ingest/byte-budget.js';

const MiB = 1024 * 1024;
const tick = () => new Promise((r) => setImmediate(r));

/** A budget on a clock that moves only when told; the review timer is left to tests (a day). */
function clocked(capacity: number) {
  let now = 0;
  const budget = new ByteBudget(capacity, { now: () => now, reviewMs: 86_400_000 });
  return {
    budget,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** Whether `promise` has settled (after the microtasks queued so far). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await tick();
  return done;
}

/** The budget's rule: every body in line, at its largest, fits beside what the bodies behind it hold. */
function assertRule(budget: ByteBudget): void {
  let behind = 0;
  for (let i = budget.line.length - 1; i >= 0; i--) {
    const hold = budget.line[i]!;
    assert.ok(hold.maxBytes + behind <= budget.capacity, `body ${i} of ${budget.line.length}: ${hold.maxBytes} + ${behind} > ${budget.capacity}`);
    behind += hold.held;
  }
}

describe('byte budget: slow bodies lose their place', () => {
  it('moves a trickling body behind a large batch that waits, so the batch is served within a window, and the trickle goes on', async () => {
    // The service's sizing: one 10 MiB body plus 2 MiB.
    const { budget, advance } = clocked(12 * MiB);
    const trickle = budget.open(10 * MiB);
    assert.ok(trickle.take(1));
    const batch = budget.open(3 * MiB);
    assert.ok(batch.take(MiB));
    assert.ok(batch.take(MiB));
    assert.equal(batch.take(MiB), false, 'the trickle might still need 10 MiB of 12');
    const waiting = batch.wait(MiB);
    for (let t = 0; t < RATE_WINDOW_MS - 500; t += 500) {
      advance(500);
      assert.ok(trickle.take(1));
      budget.review();
      assert.equal(await settled(waiting), false, 'within the window the trickle keeps its place');
    }
    advance(1000);
    budget.review();
    assert.equal(await settled(waiting), true, 'once slow, the trickle moved behind the batch');
    assert.deepEqual(budget.line, [batch, trickle]);
    assert.equal(batch.held, 3 * MiB, 'the batch has its whole body');
    assertRule(budget);
    assert.ok(trickle.take(1), 'the trickle still takes bytes while the rule allows');
    batch.finishReading();
    batch.release();
    trickle.release();
    assert.equal(budget.free, budget.capacity);
  });

  it('keeps the place of a body sending at MIN_BODY_RATE', async () => {
    const { budget, advance } = clocked(12 * MiB);
    const steady = budget.open(10 * MiB);
    const batch = budget.open(3 * MiB);
    assert.ok(batch.take(2 * MiB));
    const waiting = batch.wait(MiB);
    for (let second = 0; second < 10; second++) {
      advance(1000);
      assert.ok(steady.take(MIN_BODY_RATE));
      budget.review();
    }
    assert.equal(await settled(waiting), false);
    assert.deepEqual(budget.line, [steady, batch]);
    steady.release();
    assert.equal(await settled(waiting), true);
    batch.release();
  });

  it('does not count time a body spends waiting for the budget', async () => {
    const { budget, advance } = clocked(150);
    const first = budget.open(100);
    assert.ok(first.take(100));
    first.finishReading();
    // The second waits a long time for the first's commit: not its fault.
    const second = budget.open(100);
    const granted = second.wait(60);
    advance(60_000);
    budget.review();
    first.release();
    assert.equal(await settled(granted), true);
    assert.equal(second.isSlow(0 + 60_000), false, 'the wait is not held against it');
    const third = budget.open(80);
    assert.equal(third.take(60), false, 'the second might still need 100 of 150: the third waits behind it');
    const thirdGranted = third.wait(60);
    budget.review();
    assert.equal(await settled(thirdGranted), false, 'the second keeps its place');
    advance(RATE_WINDOW_MS + 1);
    budget.review();
    assert.equal(await settled(thirdGranted), true, 'sending nothing once the wait ended, it is slow a window later');
    second.release();
    third.release();
    assert.equal(budget.free, 150);
  });

  it('does not move a slow body when what it holds would leave a body it passes unable to finish', async () => {
    const { budget, advance } = clocked(150);
    const slow = budget.open(100);
    assert.ok(slow.take(60));
    const later = budget.open(100);
    assert.ok(later.take(40));
    const waiting = later.wait(20);
    advance(10 * RATE_WINDOW_MS);
    budget.review();
    assert.ok(slow.isSlow(10 * RATE_WINDOW_MS));
    assert.equal(await settled(waiting), false);
    assert.deepEqual(budget.line, [slow, later], 'behind it, the slow body would hold 60 beside a body that may need 100 of 150');
    slow.release();
    assert.equal(await settled(waiting), true);
    later.release();
    assert.equal(budget.free, 150);
  });

  it('keeps its rule through any steps, and gives every byte back (property)', async () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('open' as const), max: fc.integer({ min: 1, max: 120 }) }),
      fc.record({ op: fc.constant('take' as const), body: fc.nat(), bytes: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ op: fc.constant('wait' as const), body: fc.nat(), bytes: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3 * RATE_WINDOW_MS }) }),
      fc.record({ op: fc.constant('review' as const) }),
      fc.record({ op: fc.constant('finish' as const), body: fc.nat() }),
      fc.record({ op: fc.constant('release' as const), body: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const { budget, advance } = clocked(150);
        const holds: BodyHold[] = [];
        const sizes = new Map<BodyHold, number>();
        const pick = (n: number) => (holds.length === 0 ? null : holds[n % holds.length]!);
        for (const s of steps) {
          if (s.op === 'open') {
            const hold = budget.open(s.max);
            holds.push(hold);
            sizes.set(hold, 0);
          } else if (s.op === 'advance') advance(s.ms);
          else if (s.op === 'review') budget.review();
          else {
            const hold = pick(s.body);
            if (hold === null) continue;
            const room = hold.maxBytes - sizes.get(hold)!;
            if (s.op === 'take' && !hold.isWaiting && s.bytes <= room && hold.take(s.bytes)) sizes.set(hold, sizes.get(hold)! + s.bytes);
            else if (s.op === 'wait' && !hold.isWaiting && s.bytes <= room) {
              sizes.set(hold, sizes.get(hold)! + s.bytes);
              void hold.wait(s.bytes);
            } else if (s.op === 'finish' && !hold.isWaiting) hold.finishReading();
            else if (s.op === 'release') hold.release();
          }
          await tick();
          assertRule(budget);
          assert.ok(budget.free >= 0);
        }
        // No deadlock: releasing bodies one by one, first in line first, lets every wait end or be dropped.
        for (const hold of holds) hold.release();
        assert.equal(budget.free, 150);
      }),
      { numRuns: 300 },
    );
  });
});
