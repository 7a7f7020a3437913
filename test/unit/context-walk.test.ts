/**
 * The console's context walk against a reader with `GET /v1/logs`'s rules
 * (inclusive `from`/`to`, newest stored first, a cursor after the last id, a
 * next cursor only when more match): for random projects (bursts sharing a
 * millisecond, clocks ahead and behind, late batches, entries years apart)
 * and any position and direction, the walk returns exactly the nearest
 * entries in time order (ties by id), nearest first, with a bounded number
 * of requests; an entry stored before another but dated after it is on the
 * right side of it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compare, MAX_WALK_REQUESTS, positionOf, walk, type Page, type ReadWindow } from '../../console/src/context-walk.js';

interface E {
  id: number;
  timestamp: string;
}

function reader(entries: E[]): { read: ReadWindow<E>; calls: () => number } {
  let calls = 0;
  const byIdDesc = [...entries].sort((a, b) => b.id - a.id);
  const read: ReadWindow<E> = async (from, to, cursor, limit) => {
    calls++;
    assert.ok(limit >= 1 && limit <= 200);
    const after = cursor === null ? Infinity : Number(cursor);
    const matching = byIdDesc.filter((e) => {
      const ms = positionOf(e).ms;
      return e.id < after && (from === null || ms >= from) && (to === null || ms <= to);
    });
    const kept = matching.slice(0, limit);
    const page: Page<E> = { items: kept, next_cursor: matching.length > limit ? String(kept.at(-1)!.id) : null };
    return page;
  };
  return { read, calls: () => calls };
}

function expected(entries: E[], origin: E, direction: 'before' | 'after', count: number): number[] {
  const sign = direction === 'after' ? 1 : -1;
  return entries
    .filter((e) => sign * compare(positionOf(e), positionOf(origin)) > 0)
    .sort((a, b) => sign * compare(positionOf(a), positionOf(b)))
    .slice(0, count)
    .map((e) => e.id);
}

const BASE = Date.parse('2024-03-01T12:00:00.000Z');

/** Entries in storage order: each a time offset from BASE, some sharing a millisecond, some far away. */
const project = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: -600_000, max: 600_000 }).map((d) => [d]) },
      // A batch sharing one millisecond.
      {
        weight: 1,
        arbitrary: fc.tuple(fc.integer({ min: -600_000, max: 600_000 }), fc.integer({ min: 2, max: 450 })).map(([d, n]) => Array(n).fill(d) as number[]),
      },
      // A clock years off, either way.
      { weight: 1, arbitrary: fc.integer({ min: -200 * 365, max: 200 * 365 }).map((days) => [days * 86_400_000]) },
    ),
    { minLength: 1, maxLength: 40 },
  )
  .map((groups) => groups.flat().map((offset, i) => ({ id: i + 1, timestamp: new Date(BASE + offset).toISOString() })));

describe('context walk', () => {
  it('returns the nearest entries in time order (ties by id), nearest first, in bounded requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        project,
        fc.nat(),
        fc.constantFrom('before' as const, 'after' as const),
        fc.integer({ min: 1, max: 60 }),
        async (entries, pick, direction, count) => {
          const origin = entries[pick % entries.length]!;
          const { read, calls } = reader(entries);
          const got = await walk(read, positionOf(origin), direction, count);
          const want = expected(entries, origin, direction, count);
          assert.deepEqual(
            got.entries.map((e) => e.id),
            want,
          );
          assert.ok(calls() <= MAX_WALK_REQUESTS + 3, `${calls()} requests`);
          if (want.length < count) assert.equal(got.exhausted, true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('puts an entry stored before the origin but dated after it among the entries after, and one stored after but dated before among those before', async () => {
    const at = (s: number) => new Date(BASE + s * 1000).toISOString();
    const entries: E[] = [
      { id: 1, timestamp: at(0) },
      { id: 2, timestamp: at(30) }, // stored before the origin, dated after it
      { id: 3, timestamp: at(10) }, // the origin
      { id: 4, timestamp: at(5) }, // stored after the origin, dated before it
      { id: 5, timestamp: at(20) },
    ];
    const { read } = reader(entries);
    const origin = positionOf(entries[2]!);
    assert.deepEqual(
      (await walk(read, origin, 'before', 20)).entries.map((e) => e.id),
      [4, 1],
    );
    assert.deepEqual(
      (await walk(read, origin, 'after', 20)).entries.map((e) => e.id),
      [5, 2],
    );
  });

  it('reads a millisecond shared by a large batch page after page, in storage order', async () => {
    const ts = new Date(BASE).toISOString();
    const entries: E[] = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, timestamp: ts }));
    const { read } = reader(entries);
    const origin = positionOf(entries[499]!);
    assert.deepEqual(
      (await walk(read, origin, 'before', 20)).entries.map((e) => e.id),
      Array.from({ length: 20 }, (_, i) => 499 - i),
    );
    assert.deepEqual(
      (await walk(read, origin, 'after', 20)).entries.map((e) => e.id),
      Array.from({ length: 20 }, (_, i) => 501 + i),
    );
  });

  it('crosses years of nothing in a few requests and says when nothing is left', async () => {
    const entries: E[] = [
      { id: 1, timestamp: '1990-01-01T00:00:00.000Z' },
      { id: 2, timestamp: '2024-03-01T12:00:00.000Z' },
      { id: 3, timestamp: '2090-01-01T00:00:00.000Z' },
    ];
    const { read, calls } = reader(entries);
    const before = await walk(read, positionOf(entries[1]!), 'before', 20);
    assert.deepEqual(
      before.entries.map((e) => e.id),
      [1],
    );
    assert.equal(before.exhausted, true);
    const after = await walk(read, positionOf(entries[1]!), 'after', 20);
    assert.deepEqual(
      after.entries.map((e) => e.id),
      [3],
    );
    assert.equal(after.exhausted, true);
    assert.ok(calls() <= 16, `${calls()} requests`);
  });
});
