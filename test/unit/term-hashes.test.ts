/**
 * Sealing hashes a frame's terms without making strings
 * (lib/storage/log-index/term-hashes.ts): the filter it builds must have
 * exactly the bytes of the filter built from the strings `addSealedTerms`
 * makes, or a query probing with a term's string would miss frames. Checked
 * on the fixtures, on the benchmark's varied entries, and over random
 * entries full of what makes words hard (capitals, long runs, letters
 * outside ASCII, the two characters that lower-case to ASCII, surrogates,
 * numbers of every shape, booleans, nesting, keys that cannot be addressed).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildBlockFilter, buildBlockFilterFromHashes, termProbe } from '../../lib/storage/log-index/block-filter.js';
import { addSealedTerms } from '../../lib/storage/log-index/sealed-terms.js';
import { addEntryTermHashes, FrameTermHashes } from '../../lib/storage/log-index/term-hashes.js';
import { mixedEntries } from '../support/logs.js';

/** A block's filter both ways, frames of `perFrame` entries. */
function bothFilters(entries: readonly Record<string, unknown>[], perFrame: number): { strings: Uint8Array[]; hashes: Uint8Array[] } {
  const sets: Set<string>[] = [];
  const frames: FrameTermHashes[] = [];
  entries.forEach((entry, i) => {
    if (i % perFrame === 0) {
      sets.push(new Set());
      frames.push(new FrameTermHashes());
    }
    // As stored: the compact JSON text, parsed again.
    const stored = JSON.parse(JSON.stringify(entry)) as Record<string, unknown>;
    addSealedTerms(stored, sets[sets.length - 1]!);
    addEntryTermHashes(stored, frames[frames.length - 1]!);
  });
  return { strings: buildBlockFilter(sets), hashes: buildBlockFilterFromHashes(frames.map((f) => f.done())) };
}

function assertSameFilter(entries: readonly Record<string, unknown>[], perFrame: number): void {
  const { strings, hashes } = bothFilters(entries, perFrame);
  assert.equal(hashes.length, strings.length);
  strings.forEach((shard, i) => {
    assert.deepEqual(Buffer.from(hashes[i]!), Buffer.from(shard), `shard ${i}`);
  });
}

describe('term hashes: a frame filter without term strings', () => {
  it('builds the same filter bytes as the term strings, over the fixtures', () => {
    assertSameFilter(mixedEntries(900, 11), 128);
    assertSameFilter(mixedEntries(40, 3), 7);
  });

  const hard = fc.constantFrom(
    'a',
    'Zed',
    'ABC',
    '42',
    '0x1F',
    ' ',
    '-',
    '.',
    '"',
    '\\',
    '\n',
    '\u0001',
    'é',
    'İ',
    'İx',
    '\u212Aelvin',
    '中文',
    'σας',
    '\ud83d\ude00',
    '\ud800',
    'x'.repeat(70),
    'Y'.repeat(64),
    'ab',
    'abc',
    'true',
  );
  const text = fc.array(hard, { maxLength: 10 }).map((parts) => parts.join(''));
  const leaf = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
  const entry = fc.record({
    event: text,
    n: leaf,
    context: fc.dictionary(fc.constantFrom('user', 'id', 'a.b', '', 'K', 'x'), fc.oneof(leaf, fc.dictionary(fc.constantFrom('id', 'z'), leaf)), {
      maxKeys: 4,
    }),
    tags: fc.array(leaf, { maxLength: 3 }),
  });

  it('builds the same filter bytes as the term strings over random hard entries (property)', () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 5 }), (entries, perFrame) => {
        assertSameFilter(entries, perFrame);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps each pair once, growing past its first table', () => {
    const set = new FrameTermHashes();
    for (let i = 0; i < 10_000; i++) {
      const p = termProbe(`term${i}`);
      assert.equal(set.add(p.h1, p.h2), true);
    }
    for (let i = 0; i < 10_000; i += 7) {
      const p = termProbe(`term${i}`);
      assert.equal(set.add(p.h1, p.h2), false, `term${i} again`);
    }
    assert.equal(set.size, 10_000);
    const pairs = set.done();
    assert.equal(pairs.length, 20_000);
    const p = termProbe('term9999');
    assert.deepEqual([pairs[2 * 9999], pairs[2 * 9999 + 1]], [p.h1, p.h2]);
  });
});
