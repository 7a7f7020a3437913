/**
 * The check every candidate entry of the search index goes through
 * (lib/search/entry-match.ts): the exact-match rule and the words and
 * prefixes, decided from the stored JSON text of the entry. Checked against
 * a slow reference written from the rules, over random entries and filters
 * made from their own leaves and words (and near misses), plus the cases
 * where a text shortcut could go wrong.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { logEntry, unicodeText, type Json } from '../support/arbitraries.js';
import fc from 'fast-check';
import { EntryText, entryMatcher, entryTextMatcher, exactMatches, exactNeedle, hasTextConditions } from '../../lib/search/entry-match.js';
import { parseTextQuery } from '../../lib/search/search-terms.js';
import type { ExactFilter, LogFilter } from '../../lib/search/log-filter.js';

type TextFilter = Pick<LogFilter, 'words' | 'prefixes' | 'exact'>;

// ---- the reference, from the rules --------------------------------------------

/** Walk object keys (never into arrays); a string equals, a number or boolean by its JSON text. */
function refExact(entry: Json, filter: ExactFilter): boolean {
  let node: Json | undefined = entry;
  for (const key of filter.path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
    const own: [string, Json] | undefined = Object.entries(node).find(([k]) => k === key);
    if (own === undefined) return false;
    node = own[1];
  }
  if (typeof node === 'string') return node === filter.value;
  if (typeof node === 'number' || typeof node === 'boolean') return JSON.stringify(node) === filter.value;
  return false;
}

/** Every string value and number JSON text, keys excluded, arrays included. */
function refTexts(v: Json, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number') out.push(JSON.stringify(v));
  else if (Array.isArray(v)) for (const x of v) refTexts(x, out);
  else if (v !== null && typeof v === 'object') for (const [, x] of Object.entries(v)) refTexts(x, out);
  return out;
}

/** Runs of letters and digits of each value on its own, lower-cased, cut at 64 code points. */
function refWords(entry: Json): Set<string> {
  const words = new Set<string>();
  for (const t of refTexts(entry)) for (const run of t.match(/[\p{L}\p{N}]+/gu) ?? []) words.add([...run.toLowerCase()].slice(0, 64).join(''));
  return words;
}

function reference(entry: Json, filter: TextFilter): boolean {
  const words = refWords(entry);
  return (
    filter.exact.every((e) => refExact(entry, e)) &&
    filter.words.every((w) => words.has(w)) &&
    filter.prefixes.every((p) => [...words].some((w) => w.startsWith(p)))
  );
}

// ---- helpers --------------------------------------------------------------------

/** The matcher's answer for an entry as stored (its compact JSON). */
function matches(entry: unknown, filter: Partial<TextFilter>): boolean {
  const test = entryMatcher({ words: [], prefixes: [], exact: [], ...filter });
  assert.ok(test, 'a filter with text conditions has a matcher');
  return test(JSON.stringify(entry));
}

/** What `q` asks for, as readLogFilter passes it on. */
function q(text: string): Partial<TextFilter> {
  return parseTextQuery(text);
}

const ex = (path: string[], value: string): Partial<TextFilter> => ({ exact: [{ path, value }] });

/** Every scalar leaf reachable through object keys: its path and the text an exact filter compares. */
function leaves(v: Json, path: string[] = [], out: ExactFilter[] = []): ExactFilter[] {
  if (v === null || Array.isArray(v)) return out;
  if (typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) leaves(x, [...path, k], out);
    return out;
  }
  if (path.length > 0) out.push({ path, value: typeof v === 'string' ? v : JSON.stringify(v) });
  return out;
}

/** Every path to an object key (of any value), for near misses. */
function paths(v: Json, path: string[] = [], out: string[][] = []): string[][] {
  if (v === null || typeof v !== 'object') return out;
  for (const [k, x] of Object.entries(v)) {
    out.push([...path, k]);
    if (Array.isArray(x)) {
      out.push([...path, k, '0']);
      for (const item of x) paths(item, [...path, k, '0'], out);
    } else paths(x, [...path, k], out);
  }
  return out;
}

const text = unicodeText(24);
const entryArb = logEntry;

/** Picks from a list by a random index, or undefined when it is empty. */
const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);

describe('entry matcher agrees with the reference (property)', () => {
  it("for filters made of the entry's own leaves, words and prefixes, and near misses of them", () => {
    const seen = { match: 0, miss: 0, exactMatch: 0, exactMiss: 0 };
    fc.assert(
      fc.property(
        entryArb,
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 4 })), { maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean()), { maxLength: 2 }),
        fc.array(text, { maxLength: 2 }),
        (entry, exactPicks, wordPicks, prefixPicks, strangers) => {
          const own = leaves(entry);
          const allPaths = paths(entry);
          const words = [...refWords(entry)];
          const filter: TextFilter = { words: [], prefixes: [], exact: [] };
          for (const [i, j, how] of exactPicks) {
            const leaf = pick(own, i);
            const other = pick(own, j);
            const somePath = pick(allPaths, j) ?? ['k'];
            if (how === 0 && leaf) filter.exact.push(leaf);
            else if (how === 1 && leaf) filter.exact.push({ path: leaf.path, value: `${leaf.value}x` });
            else if (how === 2 && leaf && other) filter.exact.push({ path: leaf.path, value: other.value });
            else if (how === 3 && leaf) filter.exact.push({ path: somePath, value: leaf.value });
            else filter.exact.push({ path: somePath, value: pick(strangers, i) ?? 'null' });
          }
          for (const [i, mine] of wordPicks) {
            const w = mine
              ? pick(words, i)
              : pick(
                  strangers.flatMap((s) => [...s.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => [...m[0].toLowerCase()].slice(0, 64).join(''))),
                  i,
                );
            if (w !== undefined) filter.words.push(w);
          }
          for (const [i, cut, mine] of prefixPicks) {
            const w = mine
              ? pick(words, i)
              : pick(
                  strangers.map((s) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '')).filter((s) => s.length > 0),
                  i,
                );
            if (w === undefined) continue;
            const cps = [...w];
            filter.prefixes.push(cps.slice(0, 1 + (cut % cps.length)).join(''));
          }
          const test = entryMatcher(filter);
          const expected = reference(entry, filter);
          if (!hasTextConditions(filter)) {
            assert.equal(test, null);
            return;
          }
          assert.ok(test, 'a matcher');
          assert.equal(test(JSON.stringify(entry)), expected, JSON.stringify({ entry, filter }));
          // Tests sharing one EntryText (alert rules over one commit) answer as each alone, whichever ran first.
          const shared = new EntryText(JSON.stringify(entry));
          const parts: TextFilter[] = [
            { words: [], prefixes: filter.prefixes, exact: [] },
            { ...filter, exact: [] },
            { words: [], prefixes: [], exact: filter.exact },
            { words: filter.words, prefixes: [], exact: [] },
          ];
          for (const part of parts) {
            const partTest = entryTextMatcher(part);
            if (partTest) assert.equal(partTest(shared), reference(entry, part), JSON.stringify({ entry, part }));
          }
          assert.equal(entryTextMatcher(filter)?.(shared), expected, JSON.stringify({ entry, filter }));
          for (const e of filter.exact) assert.equal(exactMatches(entry, e), refExact(entry, e), JSON.stringify({ entry, e }));
          seen[expected ? 'match' : 'miss'] += 1;
          if (filter.exact.length > 0) seen[expected ? 'exactMatch' : 'exactMiss'] += 1;
        },
      ),
      { numRuns: 1000 },
    );
    // The property is not vacuous: both answers came up, with exact filters too.
    for (const [k, n] of Object.entries(seen)) assert.ok(n >= 20, `${k}: ${n}`);
  });

  it("always matches a filter made only of the entry's own leaves and words", () => {
    fc.assert(
      fc.property(entryArb, fc.nat(), fc.nat(), (entry, i, j) => {
        const own = leaves(entry);
        const words = [...refWords(entry)];
        const filter: TextFilter = {
          exact: own.filter((_, k) => (k + i) % 2 === 0),
          words: words.filter((_, k) => (k + j) % 2 === 0),
          prefixes: words.filter((_, k) => (k + j) % 3 === 1).map((w) => [...w].slice(0, 1 + (i % [...w].length)).join('')),
        };
        if (!hasTextConditions(filter)) return;
        assert.equal(matches(entry, filter), true, JSON.stringify({ entry, filter }));
      }),
    );
  });
});

describe('entry matcher cases', () => {
  it('has no matcher without text conditions', () => {
    assert.equal(entryMatcher({ words: [], prefixes: [], exact: [] }), null);
    assert.equal(hasTextConditions({ words: [], prefixes: [], exact: [] }), false);
    assert.equal(hasTextConditions({ words: ['a'], prefixes: [], exact: [] }), true);
    assert.equal(hasTextConditions({ words: [], prefixes: ['a'], exact: [] }), true);
    assert.equal(hasTextConditions({ words: [], prefixes: [], exact: [{ path: ['a'], value: '' }] }), true);
  });

  it('treats __proto__ and constructor as ordinary keys, present only when the entry has them', () => {
    const withProto = JSON.parse('{"__proto__":{"user":"Ada"},"constructor":"c1","event":"x"}');
    assert.equal(matches(withProto, ex(['__proto__', 'user'], 'Ada')), true);
    assert.equal(matches(withProto, ex(['constructor'], 'c1')), true);
    assert.equal(matches(withProto, q('ada c1')), true);

    const plain = { event: 'x', nested: { v: 1 } };
    for (const path of [
      ['constructor'],
      ['__proto__'],
      ['toString'],
      ['hasOwnProperty'],
      ['nested', 'constructor'],
      ['constructor', 'name'],
      ['__proto__', 'constructor', 'name'],
    ]) {
      for (const value of ['', 'Object', 'function Object() { [native code] }', '[object Object]', 'undefined']) {
        assert.equal(matches(plain, ex(path, value)), false, `${path.join('.')}=${value}`);
      }
    }
    // Nor is an inherited key a word.
    assert.equal(matches(plain, q('object')), false);
  });

  it('never matches a path into or onto an array', () => {
    const e = { arr: ['q', 1, true, { b: 'x' }], tags: ['a'] };
    for (const [path, value] of [
      [['arr'], 'q'],
      [['arr', '0'], 'q'],
      [['arr', '1'], '1'],
      [['arr', '2'], 'true'],
      [['arr', '3', 'b'], 'x'],
      [['arr', 'b'], 'x'],
      [['tags'], 'a'],
      [['tags'], '["a"]'],
      [['tags', 'length'], '1'],
    ] as [string[], string][]) {
      assert.equal(matches(e, ex(path, value)), false, path.join('.'));
    }
    // Their values are still words.
    assert.equal(matches(e, q('q x a 1')), true);
  });

  it('compares numbers by their JSON text', () => {
    const e = { big: 1e21, neg: -0.5, one: 1.0, zero: -0, small: 2.5e-7 };
    assert.equal(matches(e, ex(['big'], '1e+21')), true);
    assert.equal(matches(e, ex(['neg'], '-0.5')), true);
    assert.equal(matches(e, ex(['one'], '1')), true);
    assert.equal(matches(e, ex(['zero'], '0')), true);
    assert.equal(matches(e, ex(['small'], '2.5e-7')), true);
    for (const [path, value] of [
      [['big'], '1e21'],
      [['big'], '1000000000000000000000'],
      [['neg'], '-.5'],
      [['neg'], '-0.50'],
      [['one'], '1.0'],
      [['zero'], '-0'],
      [['small'], '0.00000025'],
      [['one'], ' 1'],
    ] as [string[], string][]) {
      assert.equal(matches(e, ex(path, value)), false, `${path[0]}=${value}`);
    }
    // A string holding a number's text is a string: compared as it is.
    assert.equal(matches({ n: '1.0' }, ex(['n'], '1.0')), true);
    assert.equal(matches({ n: '1.0' }, ex(['n'], '1')), false);
    // Number words come from the JSON text too.
    assert.equal(matches(e, q('1e 21')), true);
    assert.equal(matches(e, q('1e21')), false);
  });

  it('compares booleans by their JSON text; null never matches', () => {
    const e = { ok: true, bad: false, z: null, s: 'true' };
    assert.equal(matches(e, ex(['ok'], 'true')), true);
    assert.equal(matches(e, ex(['bad'], 'false')), true);
    assert.equal(matches(e, ex(['s'], 'true')), true);
    for (const [path, value] of [
      [['ok'], 'True'],
      [['ok'], '1'],
      [['bad'], 'true'],
      [['bad'], ''],
      [['z'], 'null'],
      [['z'], ''],
      [['missing'], 'null'],
    ] as [string[], string][]) {
      assert.equal(matches(e, ex(path, value)), false, `${path[0]}=${value}`);
    }
    // Booleans and null give no words.
    assert.equal(matches({ ok: true, z: null }, q('true')), false);
    assert.equal(matches({ ok: true, z: null }, q('null')), false);
  });

  it('matches strings that JSON escapes by their value, not by their escaped text', () => {
    const odd = 'say "hi" \\ back\\slash\n\ttab\u0001\u001f\ud800 end';
    const e = { m: odd, lone: '\ud800', n: { deep: 'a"b' } };
    assert.equal(matches(e, ex(['m'], odd)), true);
    assert.equal(matches(e, ex(['lone'], '\ud800')), true);
    assert.equal(matches(e, ex(['n', 'deep'], 'a"b')), true);
    for (const [path, value] of [
      [['m'], JSON.stringify(odd).slice(1, -1)],
      [['m'], odd.slice(0, -1)],
      [['lone'], '\ud801'],
      [['lone'], '\ufffd'],
      [['lone'], '\\ud800'],
      [['n', 'deep'], 'a\\"b'],
    ] as [string[], string][]) {
      assert.equal(matches(e, ex(path, value)), false, JSON.stringify(value));
    }
    // An entry holding the escaped text literally is not the value either.
    assert.equal(matches({ lone: '\\ud800' }, ex(['lone'], '\ud800')), false);
    assert.equal(matches({ q: '\\"' }, ex(['q'], '"')), false);
    assert.equal(exactNeedle('a"b\\\n\ud800'), 'a\\"b\\\\\\n\\ud800');
    // Words around escapes stay apart.
    assert.equal(matches(e, q('back slash tab end hi')), true);
    assert.equal(matches(e, q('ttab')), false);
    assert.equal(matches(e, q('u0001')), false);
  });

  it('finds the word k in a value holding the Kelvin sign, by q=k and q=K', () => {
    const e = { event: 'about 300\u212a', unit: '\u212a' };
    assert.equal(matches(e, q('k')), true);
    assert.equal(matches(e, q('K')), true);
    assert.equal(matches(e, q('300k')), true);
    assert.equal(matches(e, q('30*')), true);
    assert.equal(matches(e, q('300')), false);
    // Exact matching does not fold case: the value is the Kelvin sign itself.
    assert.equal(matches(e, ex(['unit'], '\u212a')), true);
    assert.equal(matches(e, ex(['unit'], 'K')), false);
    assert.equal(matches(e, ex(['unit'], 'k')), false);
  });

  it('finds non-ASCII words, lower-cased, and only whole', () => {
    const e = { event: 'ΣΑΣ 中文 Ünïcödé ٣٤' };
    assert.equal(matches(e, q('σας')), true);
    assert.equal(matches(e, q('ΣΑΣ')), true);
    assert.equal(matches(e, q('中文')), true);
    assert.equal(matches(e, q('ünïcödé ٣٤')), true);
    assert.equal(matches(e, q('中')), false);
    assert.equal(matches(e, q('中文*')), true);
    assert.equal(matches(e, q('σα*')), true);
    assert.equal(matches(e, q('ας*')), false);
    assert.equal(matches(e, q('unicode')), false);
  });

  it('reads prefixes as the start of some word of some value', () => {
    const e = { event: 'Connection refused', host: 'db-7', tags: ['retry'], n: 4096, secretkey: 'x' };
    assert.equal(matches(e, q('conn*')), true);
    assert.equal(matches(e, q('refu* conn*')), true);
    assert.equal(matches(e, q('connection*')), true);
    assert.equal(matches(e, q('ret* 40*')), true);
    assert.equal(matches(e, q('fused*')), false);
    assert.equal(matches(e, q('connectionr*')), false);
    assert.equal(matches(e, q('secret*')), false, 'keys are not words');
    assert.equal(matches(e, q('conn* nothere*')), false, 'every prefix must hold');
    assert.equal(matches(e, { words: ['db'], prefixes: ['7'] }), true);
    // Words never span two values.
    assert.equal(matches({ a: 'foo', b: 'bar' }, q('foobar')), false);
    assert.equal(matches({ a: ['foo', 'bar'] }, q('foob*')), false);
  });

  it('cuts words at 64 code points, as the query does', () => {
    const long = 'a'.repeat(70);
    const e = { event: long };
    assert.equal(matches(e, q(long)), true);
    assert.equal(matches(e, { words: ['a'.repeat(64)] }), true);
    assert.equal(matches(e, { words: ['a'.repeat(65)] }), false);
  });

  it('needs every condition at once', () => {
    const e = { category: 'db', user: { id: 42 }, event: 'slow query' };
    assert.equal(
      matches(e, {
        ...q('slow'),
        exact: [
          { path: ['category'], value: 'db' },
          { path: ['user', 'id'], value: '42' },
        ],
      }),
      true,
    );
    assert.equal(
      matches(e, {
        ...q('slow'),
        exact: [
          { path: ['category'], value: 'db' },
          { path: ['user', 'id'], value: '43' },
        ],
      }),
      false,
    );
    assert.equal(matches(e, { ...q('fast'), exact: [{ path: ['category'], value: 'db' }] }), false);
    assert.equal(matches(e, { ...q('qu*'), exact: [{ path: ['category'], value: 'db' }] }), true);
    assert.equal(matches(e, { ...q('xy*'), exact: [{ path: ['category'], value: 'db' }] }), false);
  });

  it('decides on a stored entry nested far deeper than the call stack allows (stored before nesting was bounded)', () => {
    const depth = 100_000;
    const body = `{"event":"deep one","ctx":{"id":"a-1"},"inner":${'['.repeat(depth)}"bottom word"${']'.repeat(depth)}}`;
    const test = (filter: Partial<TextFilter>) => entryMatcher({ words: [], prefixes: [], exact: [], ...filter })!(body);
    assert.equal(test(q('bottom deep')), true);
    assert.equal(test(q('bott* wo*')), true);
    assert.equal(test(q('missing')), false);
    assert.equal(test({ ...q('word'), exact: [{ path: ['ctx', 'id'], value: 'a-1' }] }), true);
    assert.equal(test(ex(['ctx', 'id'], 'a-2')), false);
  });
});

describe('words found in place in ASCII text', () => {
  const m = (entry: Record<string, unknown>, q: string) => entryMatcher({ ...parseTextQuery(q), exact: [] })!(JSON.stringify(entry));
  it('needs a whole word: not inside a longer run, not in a key, at either end of a value', () => {
    assert.equal(m({ event: 'disk full' }, 'disk'), true);
    assert.equal(m({ event: 'disk full' }, 'full'), true);
    assert.equal(m({ event: 'diskfull' }, 'disk'), false);
    assert.equal(m({ event: 'adisk' }, 'disk'), false);
    assert.equal(m({ event: 'x', disk: 'y' }, 'disk'), false);
    assert.equal(m({ event: 'x', a: ['disk2', 'disk'] }, 'disk'), true);
    assert.equal(m({ event: 'x', n: 404 }, '404'), true);
    assert.equal(m({ event: 'x', n: 4040 }, '404'), false);
    // Two values never join into one word.
    assert.equal(m({ event: 'dis', a: 'k' }, 'disk'), false);
  });
  it('finds words right after a JSON escape in the stored text', () => {
    assert.equal(m({ event: 'a\nvosajun' }, 'vosa*'), true);
    assert.equal(m({ event: 'a\nvosajun' }, 'vosajun'), true);
    assert.equal(m({ event: '\u001fvosajun\tx' }, 'vosajun'), true);
    assert.equal(m({ event: 'say "vosa"' }, 'vosa'), true);
    assert.equal(m({ event: 'back\\vosa' }, 'vosa*'), true);
    assert.equal(m({ event: 'qunevosa', other: 'nvosa' }, 'vosa*'), false);
  });
  it('matches a prefix only at the start of a word', () => {
    assert.equal(m({ event: 'timeout reached' }, 'time*'), true);
    assert.equal(m({ event: 'overtime' }, 'time*'), false);
    assert.equal(m({ event: 'a-timeline' }, 'time*'), true);
  });
  it('cuts words at 64 characters as the index does', () => {
    const long = 'a'.repeat(70);
    assert.equal(m({ event: long }, 'a'.repeat(64)), true);
    assert.equal(m({ event: long }, 'a'.repeat(63)), false);
    assert.equal(m({ event: long }, `${'a'.repeat(63)}*`), true);
    assert.equal(m({ event: 'a'.repeat(64) }, 'a'.repeat(64)), true);
  });
  it('folds ASCII case and finds nothing non-ASCII in ASCII text', () => {
    assert.equal(m({ event: 'Disk FULL' }, 'full'), true);
    assert.equal(m({ event: 'cafe' }, 'café'), false);
    assert.equal(m({ event: 'café au lait' }, 'café'), true);
  });
});
