import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { outcomesOf, planIngest, type AdmittedEntry, type ProjectUsage } from '../../lib/storage/log-quota.js';
import { BLOCK_MAX_ENTRIES, BLOCK_MAX_TERM_BYTES, buildBlocks } from '../../lib/storage/log-blocks.js';
import type { LogIngestRequest, PreparedEntry } from '../../lib/storage/storage.js';
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

/** Random requests over a few projects, each entry tagged (in its body) with where it came from. */
const requestsArb = fc.array(
  fc.record({
    projectId: fc.integer({ min: 1, max: 4 }),
    receivedAt: fc.integer({ min: 0, max: 10 }),
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

describe('ingest order (one block per project)', () => {
  it('admits project by project, ascending, keeping request then entry order', () => {
    const e = (tag: string): PreparedEntry => ({ body: JSON.stringify(tag), bytes: 1, level: 1, timestamp: 0, terms: tag });
    const plan = planIngest(
      [
        { projectId: 3, receivedAt: 1, entries: [e('r0a'), e('r0b')] },
        { projectId: 1, receivedAt: 2, entries: [e('r1a')] },
        { projectId: 3, receivedAt: 3, entries: [e('r2a')] },
        { projectId: 2, receivedAt: 4, entries: [e('r3a'), e('r3b')] },
        { projectId: 1, receivedAt: 5, entries: [e('r4a'), e('r4b')] },
      ],
      new Map([
        [1, usage({})],
        [2, usage({ maxEntries: 1 })],
        [3, usage({})],
      ]),
    );
    assert.deepEqual(
      plan.admitted.map((a) => [a.projectId, a.receivedAt, a.entry.terms]),
      [
        [1, 2, 'r1a'],
        [1, 5, 'r4a'],
        [1, 5, 'r4b'],
        [2, 4, 'r3a'],
        [3, 1, 'r0a'],
        [3, 1, 'r0b'],
        [3, 3, 'r2a'],
      ],
    );
    // Slots stay per request in request order and name those entries.
    assert.deepEqual(plan.slots, [[4, 5], [0], [6], [3, { quota: 'max_entries' }], [1, 2]]);
    assert.deepEqual(outcomesOf(plan, [10, 11, 12, 13, 14, 15, 16])[4], [{ id: 11 }, { id: 12 }]);
  });

  it('groups by project with request order kept, and decides quotas exactly as request order would (property)', () => {
    fc.assert(
      fc.property(requestsArb, fc.dictionary(fc.constantFrom('1', '2', '3', '4'), quotaArb), (raw, quotas) => {
        const requests: LogIngestRequest[] = raw.map((r, ri) => ({
          projectId: r.projectId,
          receivedAt: r.receivedAt,
          entries: r.sizes.map((bytes, ei) => ({ body: JSON.stringify([ri, ei]), bytes, level: 0, timestamp: 0, terms: `r${ri}e${ei}` })),
        }));
        const fresh = () => new Map([1, 2, 3, 4].map((id) => [id, usage(quotas[String(id)] ?? {})]));
        const plan = planIngest(requests, fresh());

        // Reference: one request after another, entry after entry.
        const ref = fresh();
        const expected: ('in' | 'max_entries' | 'max_bytes')[][] = requests.map((r) =>
          r.entries.map((entry) => {
            const u = ref.get(r.projectId)!;
            if (u.maxEntries !== null && u.entryCount + 1 > u.maxEntries) return 'max_entries';
            if (u.maxBytes !== null && u.totalBytes + entry.bytes > u.maxBytes) return 'max_bytes';
            u.entryCount += 1;
            u.totalBytes += entry.bytes;
            return 'in';
          }),
        );
        assert.deepEqual(
          plan.slots.map((slots) => slots.map((s) => (typeof s === 'number' ? 'in' : s.quota))),
          expected,
        );

        // Every admitted entry is named by exactly one slot, the slot of that very entry.
        const named = new Set<number>();
        plan.slots.forEach((slots, ri) =>
          slots.forEach((slot, ei) => {
            if (typeof slot !== 'number') return;
            assert.ok(!named.has(slot), `slot ${slot} named twice`);
            named.add(slot);
            const a = plan.admitted[slot]!;
            assert.equal(a.entry, requests[ri]!.entries[ei]);
            assert.equal(a.projectId, requests[ri]!.projectId);
            assert.equal(a.receivedAt, requests[ri]!.receivedAt);
          }),
        );
        assert.equal(named.size, plan.admitted.length);

        // Order: project ascending, then request, then entry.
        const keys = plan.admitted.map((a) => JSON.parse(a.entry.body) as [number, number]);
        for (let i = 1; i < plan.admitted.length; i++) {
          const [p, q] = [plan.admitted[i - 1]!, plan.admitted[i]!];
          const [a, b] = [keys[i - 1]!, keys[i]!];
          assert.ok(p.projectId < q.projectId || (p.projectId === q.projectId && (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]))), JSON.stringify([a, b]));
        }

        // Counters: what was admitted, per project.
        for (const [projectId, sum] of plan.added) {
          const mine = plan.admitted.filter((a) => a.projectId === projectId);
          assert.deepEqual(sum, { entries: mine.length, bytes: mine.reduce((t, a) => t + a.entry.bytes, 0) });
        }
        for (const a of plan.admitted) assert.ok(plan.added.has(a.projectId), `project ${a.projectId} counted`);
      }),
    );
  });
});

describe('search-index blocks', () => {
  const prepared = (terms: string, level = 1): PreparedEntry => ({ body: '{}', bytes: 2, level, timestamp: 0, terms });
  const admittedOf = (entries: [projectId: number, entry: PreparedEntry][]): AdmittedEntry[] => entries.map(([projectId, entry]) => ({ projectId, receivedAt: 0, entry }));
  /** The admitted indexes a block covers, found through its ids. */
  const span = (ids: readonly number[], firstId: number, lastId: number): number[] => {
    const from = ids.indexOf(firstId);
    const to = ids.indexOf(lastId);
    assert.ok(from >= 0 && to >= from, `block ${firstId}–${lastId} starts and ends on admitted ids`);
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  };
  const isExtra = (t: string) => /^§[pl][0-9]+$/.test(t);

  it('never mixes projects or exceeds the entry cap; covers every entry once, in order; adds project and level terms (property)', () => {
    const termArb = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', '42', 'σας', '中文', '§0123456789ab', '§vvvvvvvvvvvv');
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            projectId: fc.integer({ min: 1, max: 3 }),
            count: fc.integer({ min: 1, max: 300 }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        fc.array(fc.record({ terms: fc.uniqueArray(termArb, { maxLength: 4 }), level: fc.integer({ min: 0, max: 4 }) }), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 20 }),
        (runs, shapes, firstId, gaps) => {
          // Runs of one project each, the way planIngest lays them out (a project once).
          const seen = new Set<number>();
          const entries: [number, PreparedEntry][] = [];
          for (const run of runs) {
            if (seen.has(run.projectId)) continue;
            seen.add(run.projectId);
            for (let i = 0; i < run.count; i++) {
              const shape = shapes[(entries.length * 7) % shapes.length]!;
              entries.push([run.projectId, prepared(shape.terms.join(' '), shape.level)]);
            }
          }
          const admitted = admittedOf(entries);
          // Ascending ids, not necessarily consecutive.
          const ids: number[] = [];
          for (let i = 0, id = firstId; i < admitted.length; i++, id += gaps[i % gaps.length]!) ids.push(id);

          const blocks = buildBlocks(admitted, ids);
          const covered: number[] = [];
          for (const block of blocks) {
            const members = span(ids, block.firstId, block.lastId);
            covered.push(...members);
            assert.ok(members.length >= 1 && members.length <= BLOCK_MAX_ENTRIES, `${members.length} entries`);
            for (const m of members) assert.equal(admitted[m]!.projectId, block.projectId, 'one project per block');

            const terms = block.terms.split(' ');
            assert.ok(terms.every((t) => t.length > 0), 'no empty term');
            // Repeats are left to the index (one posting per block and term).
            const union = new Set(members.flatMap((m) => admitted[m]!.entry.terms.split(' ').filter((t) => t.length > 0)));
            assert.deepEqual(new Set(terms.filter((t) => !isExtra(t))), union, 'the union of its entries\' terms');
            const extras = terms.filter(isExtra);
            assert.equal(new Set(extras).size, extras.length, 'project and level terms once each');
            const levels = new Set(members.map((m) => `§l${admitted[m]!.entry.level}`));
            assert.deepEqual(new Set(extras), new Set([`§p${block.projectId}`, ...levels]), 'its project and exactly the levels present');
          }
          assert.deepEqual(covered, admitted.map((_, i) => i), 'every entry once, in order');
          // Small entries: blocks are only cut by a new project or the cap.
          const projectRuns = [...seen].map((p) => entries.filter(([q]) => q === p).length);
          assert.equal(blocks.length, projectRuns.reduce((n, count) => n + Math.ceil(count / BLOCK_MAX_ENTRIES), 0));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('cuts a block before its terms outgrow the byte bound; an oversized entry stands alone', () => {
    // Each entry: 10,000 distinct 7-letter words, ~240 kB counted at 3 bytes per code unit.
    let next = 0;
    const bulky = () => prepared(Array.from({ length: 10_000 }, () => `w${(next++).toString(36).padStart(6, '0')}`).join(' '));
    const admitted = admittedOf(Array.from({ length: 5 }, () => [1, bulky()]));
    const ids = admitted.map((_, i) => 100 + i);
    const blocks = buildBlocks(admitted, ids);
    assert.deepEqual(blocks.map((b) => [b.firstId, b.lastId]), [[100, 101], [102, 103], [104, 104]]);
    for (const b of blocks) {
      const own = b.terms.split(' ').filter((t) => !isExtra(t)).join(' ');
      assert.ok(own.length * 3 <= BLOCK_MAX_TERM_BYTES, `${own.length * 3} bytes`);
    }

    const huge = prepared(Array.from({ length: 40_000 }, (_, i) => `h${i.toString(36).padStart(6, '0')}`).join(' '));
    const mixed = admittedOf([[1, prepared('a')], [1, huge], [1, prepared('b')], [1, prepared('c')]]);
    const mixedBlocks = buildBlocks(mixed, [1, 2, 3, 4]);
    assert.deepEqual(mixedBlocks.map((b) => [b.firstId, b.lastId]), [[1, 1], [2, 2], [3, 4]]);
    assert.ok(mixedBlocks[1]!.terms.includes('h000000') && mixedBlocks[1]!.terms.includes('§p1'), 'the oversized entry\'s own block');
  });

  it('makes no block of nothing', () => {
    assert.deepEqual(buildBlocks([], []), []);
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
