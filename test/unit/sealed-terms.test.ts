/**
 * Terms of sealed blocks (lib/storage/log-index/sealed-terms.ts) and the
 * query side of sealed blocks (seal-run.ts): a one-word value gets an exact
 * term of its own path (the `context.user.id=57` case), prefixes of three
 * characters probe the filter, and over sealed blocks every filter finds
 * exactly what checking each entry by brute force finds.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exactTerm } from '../../lib/search/search-terms.js';
import { entryMatcher } from '../../lib/search/entry-match.js';
import type { LogFilter } from '../../lib/search/log-filter.js';
import {
  addSealedTerms,
  PREFIX_TERM_MARK,
  prefixTerm,
  probedPrefixTerm,
  sealedEntryTerms,
  sealedFilterTerms,
} from '../../lib/storage/log-index/sealed-terms.js';
import { filterProbes, probeFrames, sealedCandidates, sealRun } from '../../lib/storage/log-index/seal-run.js';
import { cutSealRuns, readSealedHeader, type SealInput } from '../../lib/storage/log-index/sealed-block.js';

const filter = (f: Partial<LogFilter>): LogFilter => ({ minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [], ...f });

describe('sealed terms', () => {
  it('gives a one-word value the exact term of its path, beside its word', () => {
    const terms = sealedEntryTerms({ context: { user: { id: 57 } }, duration_ms: 57, tags: ['x57'] });
    assert.ok(terms.includes(exactTerm(['context', 'user', 'id'], '57')));
    assert.ok(terms.includes(exactTerm(['duration_ms'], '57')));
    assert.ok(terms.includes('57'));
    // An entry where 57 is only a duration lacks the user id's exact term.
    assert.ok(!sealedEntryTerms({ duration_ms: 57, context: { user: { id: 12 } } }).includes(exactTerm(['context', 'user', 'id'], '57')));
  });

  it('gives strings, numbers and booleans exact terms, but not values below arrays or unaddressable keys', () => {
    const terms = sealedEntryTerms({ a: 'two words', n: 1.5, t: true, list: [{ inner: 'v' }], 'dotted.key': 'w', '': 'e' });
    assert.ok(terms.includes(exactTerm(['a'], 'two words')));
    assert.ok(terms.includes(exactTerm(['n'], '1.5')));
    assert.ok(terms.includes(exactTerm(['t'], 'true')));
    assert.ok(!terms.includes(exactTerm(['list', 'inner'], 'v')));
    assert.ok(!terms.includes(exactTerm(['dotted.key'], 'w')));
    for (const w of ['two', 'words', '1', '5', 'v', 'w', 'e']) assert.ok(terms.includes(w), w);
    assert.ok(!terms.includes('true'));
  });

  it('adds the two- and three-character prefix terms of each word, by code point', () => {
    const terms = sealedEntryTerms({ message: 'Vosajun ab x 𝒳𝒴z' });
    for (const t of [prefixTerm('vosajun', 2), prefixTerm('vosajun', 3), prefixTerm('ab', 2), prefixTerm('𝒳𝒴z', 3)]) assert.ok(terms.includes(t!), t!);
    assert.equal(prefixTerm('ab', 3), null);
    assert.equal(prefixTerm('x', 2), null);
    assert.equal(prefixTerm('𝒳𝒴z', 2), `${PREFIX_TERM_MARK}𝒳𝒴`);
    assert.equal(probedPrefixTerm('vosa'), prefixTerm('vosajun', 3));
    assert.equal(probedPrefixTerm('lo'), prefixTerm('lorem', 2));
  });

  it("gathers a frame's terms as the union of its entries' terms, repeated words included", () => {
    const entries = [
      { event: 'disk full', host: 'db1', context: { user: { id: 57 } } },
      { event: 'disk ok', host: 'db1', context: { user: { id: 58 } }, note: 'ünïcode wörds' },
      { event: 'full stop', tags: ['disk', 'x'], code: 'E57' },
    ];
    const union = new Set(entries.flatMap((e) => sealedEntryTerms(e)));
    const frame = new Set<string>();
    for (const e of entries) addSealedTerms(e, frame);
    assert.deepEqual([...frame].sort(), [...union].sort());
    assert.ok(frame.has(prefixTerm('disk', 3)!) && frame.has('wörds'), 'prefix terms and non-ASCII words are there');
  });

  it('probes q words, prefixes by their longest prefix term, and exact filters', () => {
    const terms = sealedFilterTerms({ words: ['error'], prefixes: ['vosa', 'lo'], exact: [{ path: ['context', 'user', 'id'], value: '57' }] });
    assert.deepEqual(terms.sort(), ['error', prefixTerm('vos', 3)!, prefixTerm('lo', 2)!, exactTerm(['context', 'user', 'id'], '57')].sort());
  });

  it('gives a long one-word value (an id) no exact term: its word serves', () => {
    const id = '819fe6088cf8352f';
    assert.ok(!sealedEntryTerms({ request_id: id }).includes(exactTerm(['request_id'], id)));
    assert.deepEqual(sealedFilterTerms({ words: [], prefixes: [], exact: [{ path: ['request_id'], value: id.toUpperCase() }] }), [id]);
    assert.ok(sealedEntryTerms({ request_id: id }).includes(id));
  });
});

/** Deterministic entries where short numbers occur everywhere. */
function corpus(n: number): SealInput[] {
  let seed = 42;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const words = ['alpha', 'beta', 'gamma', 'delta', 'vosajun', 'vosa', 'lorem', 'ipsum'];
  return Array.from({ length: n }, (_, i) => {
    const level = Math.floor(rnd() * 5);
    const body = JSON.stringify({
      timestamp: new Date(1_700_000_000_000 + i * 1000).toISOString(),
      level: ['debug', 'info', 'warning', 'error', 'critical'][level],
      message: `${words[Math.floor(rnd() * words.length)]} ${words[Math.floor(rnd() * words.length)]} ${Math.floor(rnd() * 100)}`,
      duration_ms: Math.floor(rnd() * 100),
      context: { user: { id: Math.floor(rnd() * 100) }, ok: rnd() < 0.5 },
      category: rnd() < 0.5 ? 'db' : 'http',
    });
    return { id: 10 + i * 2, receivedAt: 1_700_000_000_000 + i, ts: 1_700_000_000_000 + i * 1000, level, body };
  });
}

describe('sealed blocks answer exactly', () => {
  const entries = corpus(2500);
  const runs = cutSealRuns(entries, true).map((run) => sealRun(run, null));
  const filters: LogFilter[] = [
    filter({ exact: [{ path: ['context', 'user', 'id'], value: '57' }] }),
    filter({ exact: [{ path: ['context', 'ok'], value: 'true' }], minLevel: 3 }),
    filter({ words: ['vosajun', '57'] }),
    filter({ prefixes: ['vos'] }),
    filter({ prefixes: ['lo'], from: 1_700_000_500_000, to: 1_700_001_200_000 }),
    filter({ exact: [{ path: ['category'], value: 'db' }], words: ['gamma'] }),
    filter({ words: ['absentword'] }),
    filter({ minLevel: 4 }),
  ];
  for (const f of filters) {
    it(`finds what brute force finds: ${JSON.stringify({ ...f, from: f.from !== null, to: f.to !== null })}`, () => {
      const matches = entryMatcher(f);
      const expected = entries
        .filter(
          (e) =>
            (f.minLevel === null || e.level >= f.minLevel) &&
            (f.from === null || e.ts >= f.from) &&
            (f.to === null || e.ts <= f.to) &&
            (matches === null || matches(e.body)),
        )
        .map((e) => e.id)
        .reverse();
      const probes = filterProbes(f);
      const found: number[] = [];
      for (const run of [...runs].reverse()) {
        const mask = probeFrames(probes, readSealedHeader(run.block).frames.length, (s) => run.shards[s]!);
        found.push(...sealedCandidates(run.block, null, mask, f, { afterId: 0, beforeId: Infinity }).map((e) => e.id));
      }
      assert.deepEqual(found, expected);
    });
  }

  it('skips the frames whose filter lacks a term', () => {
    const probes = filterProbes(filter({ words: ['absentword'] }));
    for (const run of runs)
      assert.equal(
        probeFrames(probes, readSealedHeader(run.block).frames.length, (s) => run.shards[s]!),
        0,
      );
  });

  it('keeps the id bounds of a page', () => {
    const run = runs[0]!;
    const got = sealedCandidates(run.block, null, 0xff, filter({}), { afterId: 20, beforeId: 30 }).map((e) => e.id);
    assert.deepEqual(got, [28, 26, 24, 22]);
  });

  it('summarises a run for its row: ids, times, levels and submitted bytes', () => {
    const run = runs[0]!;
    const first = entries.slice(0, run.count);
    assert.equal(run.firstId, first[0]!.id);
    assert.equal(run.lastId, first[first.length - 1]!.id);
    assert.equal(
      run.bytes,
      first.reduce((n, e) => n + Buffer.byteLength(e.body), 0),
    );
    assert.equal(run.minTs, first[0]!.ts);
    assert.equal(
      run.levels,
      first.reduce((m, e) => m | (1 << e.level), 0),
    );
  });
});
