/**
 * The histogram's pure parts: the grid a range and a bucket count give,
 * how each bucket is split between the rollup and the entries, and the
 * text an entry matching an exact-match filter must hold.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { histogramGrid } from '../../lib/logs/log-histogram.js';
import { exactFilterNeedle, splitBuckets } from '../../lib/storage/log-index/histogram-plan.js';

const at = (iso: string) => Date.parse(iso);

describe('histogram grid', () => {
  it('takes the smallest nice step whose aligned buckets fit, then whole days', () => {
    assert.deepEqual(histogramGrid(at('2025-03-01T00:00:30Z'), at('2025-03-01T01:00:30Z'), 60), {
      origin: at('2025-03-01T00:00:00Z'),
      stepMs: 120_000,
      count: 31,
    });
    assert.deepEqual(histogramGrid(at('2025-03-01T00:00:00Z'), at('2025-03-01T00:00:00Z'), 500), {
      origin: at('2025-03-01T00:00:00Z'),
      stepMs: 1000,
      count: 1,
    });
    assert.deepEqual(histogramGrid(at('2025-03-01T00:00:00Z'), at('2025-03-01T23:59:59.999Z'), 24), {
      origin: at('2025-03-01T00:00:00Z'),
      stepMs: 3_600_000,
      count: 24,
    });
    const year = histogramGrid(at('2024-01-01T00:00:00Z'), at('2024-12-31T23:59:59.999Z'), 12);
    assert.equal(year.stepMs % 86_400_000, 0);
    assert.ok(year.count <= 12 && year.origin <= at('2024-01-01T00:00:00Z') && year.origin + year.count * year.stepMs > at('2024-12-31T23:59:59.999Z'));
    // Before 1970 too: aligned down, never up.
    const old = histogramGrid(at('1969-12-31T23:59:59.500Z'), at('1970-01-01T00:00:00.500Z'), 2);
    assert.deepEqual(old, { origin: at('1969-12-31T23:59:59Z'), stepMs: 1000, count: 2 });
  });
});

describe('histogram grid bounds', () => {
  it('finds a grid of at most `buckets` buckets covering any range of up to 100 years, wherever it lies, or refuses one bucket over the epoch', () => {
    const DAY = 86_400_000;
    const MIN = Date.parse('0000-01-01T00:00:00Z');
    const MAX = Date.parse('9999-12-31T23:59:59.999Z');
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const cases: [number, number, number][] = [
      [-DAY, 0, 1],
      [-1, 0, 1],
      [-DAY, 0, 2],
      [(-36_525 * DAY) / 2, (36_525 * DAY) / 2, 2],
      [MAX - 36_525 * DAY, MAX, 1],
      [MIN, MIN + 36_525 * DAY, 1],
    ];
    for (let i = 0; i < 3000; i++) {
      // Ranges around the epoch, and anywhere in the four-digit years.
      const from = i % 2 === 0 ? Math.round((random() - 0.5) * 400 * DAY) : MIN + Math.round(random() * (MAX - MIN - 36_525 * DAY));
      const to = from + Math.round(random() ** 3 * 36_525 * DAY);
      cases.push([from, to, 1 + Math.floor(random() ** 2 * 500)]);
    }
    for (const [from, to, buckets] of cases) {
      if (buckets === 1 && from < 0 && to >= 0) {
        assert.throws(
          () => histogramGrid(from, to, buckets),
          (err: any) => err.details?.field === 'buckets',
        );
        continue;
      }
      const grid = histogramGrid(from, to, buckets);
      assert.ok(grid.count >= 1 && grid.count <= buckets, `${from} ${to} ${buckets}`);
      assert.ok(grid.origin <= from && grid.origin + grid.count * grid.stepMs > to);
      assert.equal(grid.origin % grid.stepMs === 0 || Object.is(grid.origin % grid.stepMs, -0), true, 'aligned on the step');
    }
  });
});

describe('exact-match needle', () => {
  it('is key and quoted value for a value only a string can equal, the bare value otherwise', () => {
    assert.equal(exactFilterNeedle({ path: ['category'], value: 'db' }), '"category":"db"');
    assert.equal(exactFilterNeedle({ path: ['user', 'plan'], value: 'p"ro' }), '"plan":"p\\"ro"');
    assert.equal(exactFilterNeedle({ path: ['http', 'status'], value: '500' }), '500');
    assert.equal(exactFilterNeedle({ path: ['d'], value: '12.5' }), '12.5');
    assert.equal(exactFilterNeedle({ path: ['ok'], value: 'true' }), 'true');
    // Never a number's JSON text: only a string can equal them.
    assert.equal(exactFilterNeedle({ path: ['n'], value: '1e21' }), '"n":"1e21"');
    assert.equal(exactFilterNeedle({ path: ['n'], value: '-0' }), '"n":"-0"');
    assert.equal(exactFilterNeedle({ path: ['n'], value: '' }), '"n":""');
  });
});

describe('bucket split', () => {
  it("tiles each bucket's part of the range exactly: whole hours, then whole minutes, then entries, none overlapping", () => {
    const ranges: [string, string, number][] = [
      ['2025-03-01T00:00:30.250Z', '2025-03-01T07:13:09.999Z', 7],
      ['2025-03-01T00:00:00Z', '2025-03-03T23:59:59.999Z', 60],
      ['2025-03-01T10:02:10Z', '2025-03-01T10:04:50Z', 60],
      ['1969-12-31T22:30:00.001Z', '1970-01-01T01:29:59.998Z', 5],
      ['2025-03-01T00:00:00Z', '2025-12-31T23:59:59Z', 500],
    ];
    for (const [fromIso, toIso, buckets] of ranges) {
      const from = at(fromIso);
      const to = at(toIso);
      const grid = histogramGrid(from, to, buckets);
      const { entries, rollup } = splitBuckets(grid, from, to);
      for (const r of rollup) {
        assert.ok([60_000, 3_600_000].includes(r.span));
        assert.equal(((r.first % r.span) + r.span) % r.span, 0, 'a rollup range starts on its span');
        assert.equal((r.last - r.first) % r.span, 0);
      }
      const pieces = [...entries.map((e) => ({ ...e, end: e.last })), ...rollup.map((r) => ({ ...r, end: r.last + r.span - 1 }))].sort(
        (a, b) => a.first - b.first,
      );
      let next = from;
      for (const piece of pieces) {
        assert.equal(piece.first, next, `${fromIso} ${toIso}: no gap or overlap at ${new Date(next).toISOString()}`);
        assert.equal(piece.bucket, Math.floor((piece.first - grid.origin) / grid.stepMs));
        assert.equal(piece.bucket, Math.floor((piece.end - grid.origin) / grid.stepMs), 'a piece stays in its bucket');
        next = piece.end + 1;
      }
      assert.equal(next, to + 1);
      if (grid.stepMs >= 3_600_000)
        assert.ok(
          rollup.some((r) => r.span === 3_600_000),
          'hour buckets read hour rows',
        );
      if (grid.stepMs < 60_000) assert.equal(rollup.length, 0, 'sub-minute buckets read entries only');
    }
  });
});
