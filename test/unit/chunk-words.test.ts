/**
 * The chunk pre-filter of live streams and alert rules (search/chunk-words.ts)
 * reads a committed chunk's rows as stored and must never leave out a chunk
 * holding a match: checked against the entry matcher itself over the
 * fixture queries, and over random entries full of what makes words hard
 * (escapes at both JSON levels, letters outside ASCII, the two characters
 * that lower-case to ASCII, runs longer than a word), with filters made
 * from the entries' own words, prefixes and values.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ChunkWords, wordProbeOf } from '../../lib/search/chunk-words.js';
import { entryMatcher } from '../../lib/search/entry-match.js';
import type { LogFilter } from '../../lib/search/log-filter.js';
import { wordsOf } from '../../lib/search/search-terms.js';
import { readLogFilter } from '../../lib/logs/log-query-params.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { fixtureQueries, mixedEntries } from '../support/logs.js';

const NO_FILTER: LogFilter = { minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };

/** Chunks of `size` entries, as ingestion encodes them: each chunk's rows bytes and its bodies. */
function chunksOf(values: readonly Record<string, unknown>[], size: number): { rows: Uint8Array; bodies: string[] }[] {
  const { entries } = entriesFromValues(values);
  const out = [];
  for (let i = 0; i < entries.length; i += size) {
    const part = entries.slice(i, i + size);
    for (const chunk of encodeRequest(1, 0, part).chunks) out.push({ rows: chunk.rows, bodies: part.map((e) => e.body) });
  }
  return out;
}

/** Whether the pre-filter let through every chunk holding an entry that matches; counts the chunks it left out. */
function neverLeavesOut(filter: LogFilter, chunks: ReturnType<typeof chunksOf>): { ok: boolean; skipped: number } {
  const probe = wordProbeOf(filter);
  const match = entryMatcher(filter);
  if (probe === null || match === null) return { ok: true, skipped: 0 };
  const test = new ChunkWords([probe]).forCommit();
  let skipped = 0;
  for (const chunk of chunks) {
    if (test(chunk.rows, probe)) continue;
    skipped += 1;
    if (chunk.bodies.some((b) => match(b))) return { ok: false, skipped };
  }
  return { ok: true, skipped };
}

describe('chunk words: the commit pre-filter', () => {
  it('never leaves out a chunk holding a match of a fixture query, and leaves many out', () => {
    const chunks = chunksOf(mixedEntries(600, 7), 5);
    let narrowed = 0;
    for (const params of fixtureQueries()) {
      const filter = readLogFilter(new URLSearchParams(params));
      const { ok, skipped } = neverLeavesOut(filter, chunks);
      assert.ok(ok, new URLSearchParams(params).toString());
      if (skipped > 0) narrowed += 1;
    }
    assert.ok(narrowed > 10, `it narrows many filters (${narrowed})`);
  });

  const hard = fc.constantFrom(
    'a',
    'Zed',
    '42',
    ' ',
    '-',
    '.',
    '"',
    '\\',
    '\\n',
    '\n',
    '\t',
    '\u0001',
    '/',
    'é',
    'İ',
    'İx',
    '\u212Aelvin',
    '中文',
    'σας',
    '\ud83d\ude00',
    '\ud800',
    'n',
    'u0041',
    'x'.repeat(70),
    'Y'.repeat(64),
  );
  const text = fc.array(hard, { maxLength: 12 }).map((parts) => parts.join(''));
  const entry = fc.record({ event: text, note: text, n: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })) });

  it('never leaves out a match among random hard texts: words, prefixes and exact values (property)', () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), (raw, pick, cutAt) => {
        const values = raw.map((e) => ({ level: 'info', timestamp: '2025-01-01T00:00:00Z', ...e }));
        const chunks = chunksOf(values, 2);
        const source = values[pick % values.length]!;
        const words = wordsOf(`${source.event}\n${source.note}\n${JSON.stringify(source.n)}`);
        const filters: LogFilter[] = [{ ...NO_FILTER, exact: [{ path: ['event'], value: source.event }] }];
        if (words.length > 0) {
          const word = words[pick % words.length]!;
          filters.push({ ...NO_FILTER, words: [word] });
          filters.push({ ...NO_FILTER, prefixes: [word.slice(0, Math.max(2, 1 + (cutAt % word.length)))] });
          filters.push({ ...NO_FILTER, words: words.slice(0, 3) });
        }
        for (const filter of filters) assert.ok(neverLeavesOut(filter, chunks).ok, JSON.stringify(filter));
      }),
      { numRuns: 400 },
    );
  });

  it('reads the two characters that lower-case to ASCII as their letters, and escapes as separators', () => {
    const [chunk] = chunksOf([{ level: 'info', timestamp: '2025-01-01T00:00:00Z', event: '\u212Aelvin İstanbul a\nb c\\d "q"' }], 1);
    const probe = (words: string[], prefixes: string[] = []) => ({ words, prefixes });
    const test = new ChunkWords([probe(['kelvin']), probe(['b']), probe(['d']), probe(['q']), probe([], ['i']), probe(['nb'])]).forCommit();
    assert.equal(test(chunk!.rows, probe(['kelvin'])), true);
    assert.equal(test(chunk!.rows, probe([], ['i'])), true);
    assert.equal(test(chunk!.rows, probe(['b'])), true, 'the word after an escaped newline');
    assert.equal(test(chunk!.rows, probe(['d'])), true, 'the word after an escaped backslash');
    assert.equal(test(chunk!.rows, probe(['q'])), true, 'a word inside escaped quotes');
    assert.equal(test(chunk!.rows, probe(['nb'])), false, "an escape's letter is not part of a word");
  });

  it('one scan serves many probes: finds words among thousands that share hash buckets', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => ({ words: [`marker${i}`], prefixes: [] }));
    const words = new ChunkWords([...many, { words: [], prefixes: ['mark'] }]);
    const [chunk] = chunksOf([{ level: 'info', timestamp: '2025-01-01T00:00:00Z', event: 'marker17 Marker4999 marker' }], 1);
    const holds = words.forCommit();
    assert.deepEqual(
      many.filter((m) => holds(chunk!.rows, m)).map((m) => m.words[0]),
      ['marker17', 'marker4999'],
    );
    assert.equal(holds(chunk!.rows, { words: [], prefixes: ['mark'] }), true);
    assert.equal(new ChunkWords([]).scan(chunk!.rows).size, 0, 'nothing to look for: nothing held');
  });

  it('has no probe for filters without ASCII words: their chunks are all read', () => {
    assert.equal(wordProbeOf({ ...NO_FILTER, words: ['中文'] }), null);
    assert.equal(wordProbeOf({ ...NO_FILTER, exact: [{ path: ['ok'], value: '' }] }), null);
    assert.deepEqual(wordProbeOf({ ...NO_FILTER, words: ['abc'], exact: [{ path: ['host'], value: 'Web-99' }], prefixes: ['ti'] }), {
      words: ['abc', 'web', '99'],
      prefixes: ['ti'],
    });
  });
});
