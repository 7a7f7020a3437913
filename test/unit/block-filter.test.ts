/**
 * A sealed block's filter (lib/storage/log-index/block-filter.ts): it
 * never misses a term of a frame it was built with, names the frames that
 * hold it, rarely claims absent terms, keeps every term's bits in the one
 * shard a query reads, and refuses malformed shards.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allFrames, buildBlockFilter, FILTER_SHARDS, framesMaybeHolding, termProbe, termShard } from '../../lib/storage/log-index/block-filter.js';

/** Distinct pseudo-terms, deterministic. */
const terms = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${(i * 2654435761) >>> 0}`);

describe('block filter', () => {
  it('finds every term in the frames that hold it, and only in its shard', () => {
    const frames = [terms('a', 3000), terms('b', 500), [...terms('a', 10), 'shared'], ['shared']];
    const shards = buildBlockFilter(frames);
    assert.equal(shards.length, FILTER_SHARDS);
    frames.forEach((list, f) => {
      for (const term of list) {
        const p = termProbe(term);
        assert.notEqual(framesMaybeHolding(shards[p.shard]!, p) & (1 << f), 0, `frame ${f} lost ${term}`);
      }
    });
    const shared = termProbe('shared');
    assert.equal(framesMaybeHolding(shards[shared.shard]!, shared) & 0b1100, 0b1100);
  });

  it('claims few absent terms: at most 2 % per frame at 10 bits per term', () => {
    const shards = buildBlockFilter([terms('present', 20_000)]);
    const absent = terms('absent', 20_000);
    const claimed = absent.filter((t) => {
      const p = termProbe(t);
      return framesMaybeHolding(shards[p.shard]!, p) !== 0;
    }).length;
    assert.ok(claimed / absent.length < 0.02, `false positives ${claimed} of ${absent.length}`);
  });

  it('spreads terms over all shards and sizes each by its frames’ terms', () => {
    const shards = buildBlockFilter([terms('t', 250 * FILTER_SHARDS), terms('u', 100)]);
    const seen = new Set(terms('t', 50 * FILTER_SHARDS).map(termShard));
    assert.equal(seen.size, FILTER_SHARDS);
    for (const shard of shards) {
      assert.equal(shard[0], 2);
      // ~250 terms per shard at 10 bits: ~310 B per frame, two frames.
      assert.ok(shard.length > 2 * 200 && shard.length < 2 * 500, `shard of ${shard.length} B`);
    }
  });

  it('answers no for a shard without terms, and all frames for a block with no probes', () => {
    const shards = buildBlockFilter([[], []]);
    const p = termProbe('anything');
    assert.equal(framesMaybeHolding(shards[p.shard]!, p), 0);
    assert.equal(allFrames(8), 0xff);
  });

  it('counts a term repeated in a frame once', () => {
    const once = buildBlockFilter([terms('r', 500)]);
    const repeated = buildBlockFilter([[...terms('r', 500), ...terms('r', 500)]]);
    assert.deepEqual(repeated, once);
  });

  it('refuses malformed shards and too many frames', () => {
    const [shard] = buildBlockFilter([['x']]);
    assert.throws(() => framesMaybeHolding(shard!.subarray(0, 3), termProbe('x')), RangeError);
    assert.throws(() => framesMaybeHolding(shard!.subarray(0, shard!.length - 1), termProbe('x')), RangeError);
    assert.throws(() => buildBlockFilter([]), RangeError);
    assert.throws(() => buildBlockFilter(Array.from({ length: 32 }, () => ['x'])), RangeError);
  });
});
