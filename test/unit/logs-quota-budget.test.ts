import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { outcomesOf, planIngest, type ProjectUsage } from '../../lib/storage/log-quota.js';
import type { PreparedEntry } from '../../lib/storage/storage.js';
import { ByteBudget } from '../../lib/logs/byte-budget.js';

const entry = (bytes: number): PreparedEntry => ({ body: '{}', bytes, level: 1, timestamp: 0, terms: 'x' });
const usage = (u: Partial<ProjectUsage>): ProjectUsage => ({ maxEntries: null, maxBytes: null, entryCount: 0, totalBytes: 0, ...u });

describe('quota plan (D23)', () => {
  it('checks entries first, then bytes, and a refused entry consumes nothing', () => {
    const plan = planIngest(
      [{ projectId: 1, receivedAt: 0, entries: [entry(5), entry(50), entry(5), entry(1)] }],
      new Map([[1, usage({ maxEntries: 2, maxBytes: 20, totalBytes: 8 })]]),
    );
    assert.deepEqual(plan.slots, [[0, { quota: 'max_bytes' }, 1, { quota: 'max_entries' }]]);
    assert.deepEqual(plan.added.get(1), { entries: 2, bytes: 10 });
    assert.deepEqual(outcomesOf(plan, [7, 8]), [[{ id: 7 }, { quota: 'max_bytes' }, { id: 8 }, { quota: 'max_entries' }]]);
  });

  it('shares one project budget across requests in order, and keeps projects apart', () => {
    const plan = planIngest(
      [
        { projectId: 1, receivedAt: 0, entries: [entry(1), entry(1)] },
        { projectId: 2, receivedAt: 0, entries: [entry(1)] },
        { projectId: 1, receivedAt: 0, entries: [entry(1), entry(1)] },
      ],
      new Map([
        [1, usage({ maxEntries: 3 })],
        [2, usage({ maxEntries: 0 })],
      ]),
    );
    assert.deepEqual(plan.slots, [[0, 1], [{ quota: 'max_entries' }], [2, { quota: 'max_entries' }]]);
    assert.equal(plan.admitted.length, 3);
  });

  it('never exceeds a quota and admits greedily in order (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 100 }), { maxLength: 60 }),
        fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 2000 }), { nil: null }),
        (sizes, maxEntries, maxBytes) => {
          const plan = planIngest([{ projectId: 1, receivedAt: 0, entries: sizes.map(entry) }], new Map([[1, usage({ maxEntries, maxBytes })]]));
          const admitted = plan.admitted.map((a) => a.entry.bytes);
          const bytes = admitted.reduce((s, b) => s + b, 0);
          if (maxEntries !== null) assert.ok(admitted.length <= maxEntries);
          if (maxBytes !== null) assert.ok(bytes <= maxBytes);
          // Greedy: every refused entry really did not fit at its turn.
          let count = 0;
          let sum = 0;
          plan.slots[0]!.forEach((slot, i) => {
            const fits = (maxEntries === null || count + 1 <= maxEntries) && (maxBytes === null || sum + sizes[i]! <= maxBytes);
            assert.equal(typeof slot === 'number', fits);
            if (fits) {
              count += 1;
              sum += sizes[i]!;
            }
          });
        },
      ),
    );
  });

  it('refuses to plan for a project it has no counters for', () => {
    assert.throws(() => planIngest([{ projectId: 9, receivedAt: 0, entries: [entry(1)] }], new Map()));
  });
});

describe('byte budget', () => {
  it('grants in FIFO order within the capacity and caps oversized requests at the capacity', async () => {
    const budget = new ByteBudget(100);
    const order: string[] = [];
    const a = await budget.acquire(60);
    const b = budget.acquire(60).then((release) => (order.push('b'), release));
    const c = budget.acquire(10).then((release) => (order.push('c'), release));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, [], 'c waits behind b even though it would fit');
    a();
    a();
    const releaseB = await b;
    const releaseC = await c;
    assert.deepEqual(order, ['b', 'c']);
    assert.equal(budget.free, 30);
    releaseB();
    releaseC();
    const huge = await budget.acquire(10_000);
    assert.equal(budget.free, 0);
    huge();
    assert.equal(budget.free, 100);
  });
});
