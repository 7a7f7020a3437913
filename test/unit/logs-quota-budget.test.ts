import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { outcomesOf, planIngest, type IngestPlan, type ProjectUsage } from '../../lib/storage/log-index/log-quota.js';
import { CHUNK_ENTRIES, decodeRows, encodeRequest, type EntryRow } from '../../lib/storage/log-index/encoded-entries.js';
import { concatJsonArrays, partJson, rowParts } from '../../lib/storage/log-index/ingest-layout.js';
import type { LogIngestRequest, PreparedEntry } from '../../lib/storage/types-logs.js';
import { ByteBudget } from '../../lib/ingest/byte-budget.js';

/** A request as planIngest sees it (sizes only). */
const req = (projectId: number, sizes: number[]): LogIngestRequest => ({ projectId, sizes, chunks: [] });
const usage = (u: Partial<ProjectUsage>): ProjectUsage => ({ maxEntries: null, maxBytes: null, entryCount: 0, totalBytes: 0, ...u });

describe('quota plan', () => {
  it('checks entries first, then bytes, and a refused entry consumes nothing', () => {
    const plan = planIngest([req(1, [5, 50, 5, 1])], new Map([[1, usage({ maxEntries: 2, maxBytes: 20, totalBytes: 8 })]]));
    assert.deepEqual(plan.slots, [[0, { quota: 'max_bytes' }, 1, { quota: 'max_entries' }]]);
    assert.deepEqual(plan.added.get(1), { entries: 2, bytes: 10 });
    assert.deepEqual(outcomesOf(plan, [7, 8]), [[{ id: 7 }, { quota: 'max_bytes' }, { id: 8 }, { quota: 'max_entries' }]]);
  });

  it('shares one project budget across requests in order, and keeps projects apart', () => {
    const plan = planIngest(
      [req(1, [1, 1]), req(2, [1]), req(1, [1, 1])],
      new Map([
        [1, usage({ maxEntries: 3 })],
        [2, usage({ maxEntries: 0 })],
      ]),
    );
    assert.deepEqual(plan.slots, [[0, 1], [{ quota: 'max_entries' }], [2, { quota: 'max_entries' }]]);
    assert.equal(plan.admitted, 3);
  });

  it('never exceeds a quota and admits greedily in order (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 100 }), { maxLength: 60 }),
        fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 2000 }), { nil: null }),
        (sizes, maxEntries, maxBytes) => {
          const plan = planIngest([req(1, sizes)], new Map([[1, usage({ maxEntries, maxBytes })]]));
          const admitted = sizes.filter((_, i) => typeof plan.slots[0]![i] === 'number');
          const bytes = admitted.reduce((s, b) => s + b, 0);
          assert.equal(plan.admitted, admitted.length);
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
    assert.throws(() => planIngest([req(9, [1])], new Map()));
  });
});

/** Random requests over a few projects. */
const requestsArb = fc.array(
  fc.record({
    projectId: fc.integer({ min: 1, max: 4 }),
    sizes: fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 8 }),
  }),
  { maxLength: 12 },
);
const quotaArb = fc.record({
  maxEntries: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }),
  maxBytes: fc.option(fc.integer({ min: 0, max: 200 }), { nil: null }),
  entryCount: fc.integer({ min: 0, max: 3 }),
  totalBytes: fc.integer({ min: 0, max: 40 }),
});

/** What each rank names: [request index, entry index]. */
function byRank(plan: IngestPlan): [number, number][] {
  const named: [number, number][] = [];
  plan.slots.forEach((slots, ri) => {
    slots.forEach((slot, ei) => {
      if (typeof slot !== 'number') return;
      assert.equal(named[slot], undefined, `rank ${slot} named twice`);
      named[slot] = [ri, ei];
    });
  });
  assert.equal(named.length, plan.admitted);
  for (let rank = 0; rank < plan.admitted; rank++) assert.ok(named[rank], `rank ${rank} named`);
  return named;
}

describe('ingest order (one block per project)', () => {
  it('ranks project by project, ascending, keeping request then entry order', () => {
    const plan = planIngest(
      [req(3, [1, 1]), req(1, [1]), req(3, [1]), req(2, [1, 1]), req(1, [1, 1])],
      new Map([
        [1, usage({})],
        [2, usage({ maxEntries: 1 })],
        [3, usage({})],
      ]),
    );
    assert.deepEqual(plan.order, [1, 4, 3, 0, 2]);
    assert.deepEqual(byRank(plan), [
      [1, 0],
      [4, 0],
      [4, 1],
      [3, 0],
      [0, 0],
      [0, 1],
      [2, 0],
    ]);
    // Slots stay per request in request order and name those entries.
    assert.deepEqual(plan.slots, [[4, 5], [0], [6], [3, { quota: 'max_entries' }], [1, 2]]);
    assert.deepEqual(outcomesOf(plan, [10, 11, 12, 13, 14, 15, 16])[4], [{ id: 11 }, { id: 12 }]);
  });

  it('groups by project with request order kept, and decides quotas exactly as request order would (property)', () => {
    fc.assert(
      fc.property(requestsArb, fc.dictionary(fc.constantFrom('1', '2', '3', '4'), quotaArb), (raw, quotas) => {
        const requests = raw.map((r) => req(r.projectId, r.sizes));
        const fresh = () => new Map([1, 2, 3, 4].map((id) => [id, usage(quotas[String(id)] ?? {})]));
        const plan = planIngest(requests, fresh());

        // Reference: one request after another, entry after entry.
        const ref = fresh();
        const expected: ('in' | 'max_entries' | 'max_bytes')[][] = requests.map((r) =>
          r.sizes.map((bytes) => {
            const u = ref.get(r.projectId)!;
            if (u.maxEntries !== null && u.entryCount + 1 > u.maxEntries) return 'max_entries';
            if (u.maxBytes !== null && u.totalBytes + bytes > u.maxBytes) return 'max_bytes';
            u.entryCount += 1;
            u.totalBytes += bytes;
            return 'in';
          }),
        );
        assert.deepEqual(
          plan.slots.map((slots) => slots.map((s) => (typeof s === 'number' ? 'in' : s.quota))),
          expected,
        );

        // Ranks: each admitted entry once; project ascending, then request, then entry.
        const named = byRank(plan);
        for (let i = 1; i < named.length; i++) {
          const [a, b] = [named[i - 1]!, named[i]!];
          const [p, q] = [requests[a[0]]!.projectId, requests[b[0]]!.projectId];
          assert.ok(p < q || (p === q && (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]))), JSON.stringify([a, b]));
        }
        assert.deepEqual(
          plan.order,
          requests.map((_, i) => i).sort((a, b) => requests[a]!.projectId - requests[b]!.projectId || a - b),
        );

        // Counters: what was admitted, per project.
        for (const [projectId, sum] of plan.added) {
          const mine = named.filter(([ri]) => requests[ri]!.projectId === projectId);
          assert.deepEqual(sum, { entries: mine.length, bytes: mine.reduce((t, [ri, ei]) => t + requests[ri]!.sizes[ei]!, 0) });
        }
        for (const [ri] of named) assert.ok(plan.added.has(requests[ri]!.projectId), `project ${requests[ri]!.projectId} counted`);
      }),
    );
  });
});

describe('encoded chunks', () => {
  const prepared = (level = 1, body = '{}'): PreparedEntry => ({ body, bytes: 2, level, timestamp: 0 });
  const termArb = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', '42', 'σας', '中文', '§0123456789ab', '§vvvvvvvvvvvv');
  const shapesArb = fc.array(fc.record({ terms: fc.uniqueArray(termArb, { maxLength: 4 }), level: fc.integer({ min: 0, max: 4 }) }), {
    minLength: 1,
    maxLength: 50,
  });

  /**
   * Real encoded requests through a real plan: the rows to insert are the
   * admitted entries in rank order, each with its request's project and
   * arrival, in parts of at most a chunk.
   */
  it('lays out the rows of encoded requests exactly, whole, merged or cut short by a quota (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ projectId: fc.integer({ min: 1, max: 3 }), count: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 60, max: 1100 })) }),
          { minLength: 1, maxLength: 6 },
        ),
        shapesArb,
        fc.dictionary(fc.constantFrom('1', '2', '3'), fc.option(fc.integer({ min: 0, max: 1500 }), { nil: null })),
        (shapes, entryShapes, maxEntries) => {
          let serial = 0;
          const source: PreparedEntry[][] = [];
          const requests = shapes.map((r, ri) => {
            const entries = Array.from({ length: r.count }, () => {
              const shape = entryShapes[serial % entryShapes.length]!;
              return { ...prepared(shape.level, JSON.stringify({ n: serial++ })), timestamp: serial * 3, bytes: 1 + (serial % 5) };
            });
            source.push(entries);
            return encodeRequest(r.projectId, 1000 + ri, entries);
          });
          const plan = planIngest(requests, new Map([1, 2, 3].map((id) => [id, usage({ maxEntries: maxEntries[String(id)] ?? null })])));
          const named = byRank(plan);
          const entryOf = (rank: number) => source[named[rank]![0]]![named[rank]![1]]!;
          const parts = [...rowParts(requests, plan)];
          let rank = 0;
          for (const part of parts) {
            assert.equal(part.firstRank, rank);
            assert.ok(part.count >= 1 && part.count <= CHUNK_ENTRIES);
            const rows = decodeRows({ count: part.count, rows: partJson(part), minutes: [] });
            assert.equal(rows.length, part.count);
            rows.forEach((row, i) => {
              const e = entryOf(rank + i);
              const [ri] = named[rank + i]!;
              assert.deepEqual(row, [requests[ri]!.projectId, 1000 + ri, e.timestamp, e.level, e.bytes, e.body] satisfies EntryRow);
            });
            rank += part.count;
          }
          assert.equal(rank, plan.admitted);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('joins JSON arrays byte for byte', () => {
    const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const joined = concatJsonArrays([enc([1, 'a,]']), enc([[2]]), enc([{ x: '[' }])]);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(joined)), [1, 'a,]', [2], { x: '[' }]);
  });
});

describe('byte budget', () => {
  const tick = () => new Promise((r) => setImmediate(r));

  it('counts a body only for the bytes it has taken, whatever it may grow to', () => {
    // One maximal body (100) plus slack (50), as the service sizes it.
    const budget = new ByteBudget(150);
    const stalled = [budget.open(100), budget.open(100), budget.open(100)];
    for (const hold of stalled) assert.ok(hold.take(1));
    assert.equal(budget.free, 147);
    const small = budget.open(40);
    assert.ok(small.take(40), 'a small body beside stalled big ones is served at once');
    for (const hold of [...stalled, small]) hold.release();
    assert.equal(budget.free, 150);
  });

  it('never lets half-read bodies deadlock: the oldest body being read can always finish', async () => {
    const budget = new ByteBudget(100);
    const a = budget.open(60);
    const b = budget.open(60);
    assert.ok(a.take(30));
    assert.ok(b.take(10));
    // B holding more would leave A unable to finish (60 + 40 > 100 with B at 41).
    assert.ok(!b.take(31));
    let bGranted = false;
    const bWaits = b.wait(31).then(() => (bGranted = true));
    await tick();
    assert.equal(bGranted, false);
    assert.ok(a.take(30), 'the oldest body takes the rest of its size');
    a.finishReading();
    await tick();
    assert.equal(bGranted, false, 'only 30 bytes are free until A is committed and released');
    a.release();
    await bWaits;
    assert.equal(b.held, 41);
    assert.ok(b.take(19));
    b.release();
    assert.equal(budget.free, 100);
  });

  it('hands the bytes of a stalled body, once released, to the bodies waiting', async () => {
    const budget = new ByteBudget(150);
    const stalled = budget.open(100);
    assert.equal(stalled.take(60), true);
    const later = budget.open(80);
    assert.equal(later.take(40), true);
    // Younger bodies may hold at most 50 while the stalled one might still grow to 100.
    assert.equal(later.take(30), false);
    let granted = false;
    const waiting = later.wait(30).then(() => (granted = true));
    await tick();
    assert.equal(granted, false);
    stalled.release();
    await waiting;
    assert.equal(later.held, 70);
    assert.equal(budget.free, 80);
    later.release();
    later.release();
    assert.equal(budget.free, 150);
  });
});
