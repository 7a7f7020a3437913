import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { logEntry, unicodeText, type Json } from '../support/arbitraries.js';
import fc from 'fast-check';
import {
  EXACT_TERM_MARK,
  MIN_PREFIX_LENGTH,
  valueText,
  entryTerms,
  exactTerm,
  leafIndexTerm,
  normalizeWord,
  parseTextQuery,
  wordsOf,
} from '../../lib/search/search-terms.js';
import { LogServiceError } from '../../lib/core/errors.js';

const EXACT = /^§[0-9a-v]{12}$/;
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/** Every string and number leaf's text, by walking the value (keys excluded). */
function valueTexts(v: Json, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number') out.push(JSON.stringify(v));
  else if (Array.isArray(v)) for (const x of v) valueTexts(x, out);
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) valueTexts(v[k]!, out);
  return out;
}

const text = unicodeText(40);
const entry = logEntry;

describe('words', () => {
  it('splits on anything that is not a letter or digit, lower-cases, and cuts at 64 code points', () => {
    assert.deepEqual(wordsOf('User-42 logged_in FROM 10.0.0.1; Ünïcödé ΣΑΣ 中文 ٣٤'), [
      'user',
      '42',
      'logged',
      'in',
      'from',
      '10',
      '0',
      '1',
      'ünïcödé',
      'σας',
      '中文',
      '٣٤',
    ]);
    assert.deepEqual(wordsOf('a'.repeat(70)), ['a'.repeat(64)]);
    assert.deepEqual(wordsOf(`${'😀'.repeat(3)}x`), ['x']);
    assert.deepEqual(wordsOf('𝒳'.repeat(70)), ['𝒳'.repeat(64)]);
    assert.equal(normalizeWord('İ'), 'i̇');
    assert.deepEqual(wordsOf(''), []);
  });

  it('never yields an empty word or one containing an ASCII separator (property)', () => {
    fc.assert(
      fc.property(text, (t) => {
        for (const w of wordsOf(t)) {
          assert.ok(w.length > 0);
          assert.ok(!/[\x00-\x2f\x3a-\x60\x7b-\x7f]/.test(w), JSON.stringify(w));
          assert.ok(!w.startsWith(EXACT_TERM_MARK));
          assert.ok([...w].length <= 64);
        }
      }),
    );
  });

  it('agrees with a slow reference (split first, then lower-case and cut)', () => {
    fc.assert(
      fc.property(text, (t) => {
        const ref = [...new Set((t.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => [...w.toLowerCase()].slice(0, 64).join('')))];
        assert.deepEqual(wordsOf(t), ref);
      }),
    );
  });
});

describe('entry terms', () => {
  it('makes every value findable by q: its text as typed, or any run cut short with * (property)', () => {
    fc.assert(
      fc.property(entry, (e) => {
        const terms = new Set(entryTerms(e));
        for (const t of valueTexts(e)) {
          if (!/[\p{L}\p{N}]/u.test(t)) continue;
          // One word at a time: a value may hold more words than one q allows.
          for (const typedWord of t.match(/[\p{L}\p{N}]+/gu) ?? []) for (const w of parseTextQuery(typedWord).words) assert.ok(terms.has(w), `word ${w}`);
          for (const run of t.match(/[\p{L}\p{N}]+/gu) ?? []) {
            const cps = [...run];
            const typed = cps.slice(0, Math.max(1, cps.length - 1)).join('');
            // toLowerCase is context-sensitive (final sigma): a cut run may
            // lower-case differently; that is the definition of a word, not a miss.
            if (!normalizeWord(run).startsWith(normalizeWord(typed))) continue;
            if ([...normalizeWord(typed)].length < MIN_PREFIX_LENGTH) continue;
            for (const p of parseTextQuery(`${typed}*`).prefixes)
              assert.ok(
                [...terms].some((x) => x.startsWith(p)),
                `prefix ${p}`,
              );
          }
        }
      }),
    );
  });

  it('never yields a term containing a separator: words of letters and digits, or § + 12 base-32 digits (property)', () => {
    fc.assert(
      fc.property(entry, (e) => {
        for (const t of entryTerms(e)) {
          if (t.startsWith(EXACT_TERM_MARK)) assert.match(t, EXACT);
          else {
            assert.ok(!/[\x00-\x2f\x3a-\x60\x7b-\x7f]/.test(t), JSON.stringify(t));
            assert.ok(t.length > 0);
          }
        }
      }),
    );
  });

  it('lists its distinct words first, then one exact term per addressable leaf that is not one word (property)', () => {
    /** [path, value text] of each scalar leaf reached through non-empty keys without a dot. */
    const addressable = (v: Json, path: string[], out: [string[], string][]): [string[], string][] => {
      if (typeof v === 'string') out.push([path, v]);
      else if (typeof v === 'number' || typeof v === 'boolean') out.push([path, JSON.stringify(v)]);
      else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        for (const k of Object.keys(v)) if (k.length > 0 && !k.includes('.')) addressable(v[k]!, [...path, k], out);
      }
      return out;
    };
    fc.assert(
      fc.property(entry, (raw) => {
        const e = JSON.parse(JSON.stringify(raw)) as { [k: string]: Json };
        const terms = entryTerms(e);
        const words = terms.filter((t) => !t.startsWith(EXACT_TERM_MARK));
        assert.deepEqual(terms.slice(0, words.length), words, 'words come first');
        assert.equal(new Set(words).size, words.length, 'no word twice');
        assert.deepEqual(new Set(words), new Set(valueTexts(e).flatMap((t) => wordsOf(t))));
        const leaves = Object.keys(e).flatMap((k) => (k.length > 0 && !k.includes('.') ? addressable(e[k]!, [k], []) : []));
        const oneWord = (value: string) => /^[\p{L}\p{N}]+$/u.test(value) && value !== 'true' && value !== 'false';
        const exact = leaves.filter(([, value]) => !oneWord(value)).map(([path, value]) => exactTerm(path, value));
        assert.deepEqual(terms.slice(words.length).sort(), exact.sort());
        // What a context./correlation filter asks the index for is always there.
        const have = new Set(terms);
        for (const [path, value] of leaves) assert.ok(have.has(leafIndexTerm(path, value)), `${path.join('.')}=${value}`);
      }),
    );
  });

  it('takes no word from keys, booleans or null', () => {
    const terms = entryTerms({ secretkey: 'visible', flag: true, nothing: null, nested: { innerkey: [false, 12.5] } });
    const words = terms.filter((t) => !t.startsWith(EXACT_TERM_MARK));
    assert.deepEqual(words.sort(), ['12', '5', 'visible']);
  });

  it('indexes numbers by their JSON text', () => {
    const terms = entryTerms({ big: 1e21, neg: -0.5 });
    for (const w of ['1e', '21', '0', '5']) assert.ok(terms.includes(w), w);
    assert.ok(terms.includes(exactTerm(['big'], '1e+21')));
    assert.ok(terms.includes(exactTerm(['neg'], '-0.5')));
  });

  it('has an exact term for each addressable leaf: strings, and numbers and booleans by JSON text, one word standing for itself', () => {
    const terms = new Set(
      entryTerms({
        category: 'db',
        a: { b: { c: 'x y' } },
        n: 5,
        t: true,
        s: 'false',
        z: null,
        o: {},
        arr: ['q'],
        connection_generation: 3,
        neg: -3,
        id: 'A1b2',
      }),
    );
    assert.ok(terms.has(exactTerm(['a', 'b', 'c'], 'x y')));
    assert.ok(terms.has(exactTerm(['t'], 'true')));
    assert.ok(terms.has(exactTerm(['s'], 'false')));
    assert.ok(terms.has(exactTerm(['neg'], '-3')));
    // One word: the word is the leaf's index term, no exact term is added.
    for (const [path, value, word] of [
      [['category'], 'db', 'db'],
      [['n'], '5', '5'],
      [['connection_generation'], '3', '3'],
      [['id'], 'A1b2', 'a1b2'],
    ] as const) {
      assert.equal(leafIndexTerm(path, value), word);
      assert.ok(terms.has(word));
      assert.ok(!terms.has(exactTerm(path, value)));
    }
    assert.equal(leafIndexTerm(['t'], 'true'), exactTerm(['t'], 'true'));
    assert.equal(leafIndexTerm(['a', 'b', 'c'], 'x y'), exactTerm(['a', 'b', 'c'], 'x y'));
    // Null, objects and arrays never match, nor does an inner path of an array.
    assert.ok(!terms.has(exactTerm(['z'], 'null')));
    assert.ok(!terms.has(exactTerm(['o'], '{}')));
    assert.ok(!terms.has(exactTerm(['arr'], 'q')));
    assert.ok(!terms.has(exactTerm(['arr', '0'], 'q')));
    assert.ok(!terms.has(exactTerm(['a', 'b'], 'x y')));
  });

  it('does not confuse a key "a.b" with the path a → b, nor values with paths', () => {
    const dotted = new Set(entryTerms({ 'a.b': 'v w' }));
    assert.ok(!dotted.has(exactTerm(['a', 'b'], 'v w')));
    const nested = new Set(entryTerms({ a: { b: 'v w' } }));
    assert.ok(nested.has(exactTerm(['a', 'b'], 'v w')));
    assert.notEqual(exactTerm(['a'], 'b,v'), exactTerm(['a', 'b'], 'v'));
    assert.notEqual(exactTerm(['a","b'], 'v'), exactTerm(['a', 'b'], 'v'));
    assert.notEqual(exactTerm(['category'], 'x'), exactTerm(['logger'], 'x'));
    assert.notEqual(exactTerm(['a'], 'b\u0000c'), exactTerm(['a', 'b'], 'c'));
    // Lone surrogates survive: values differing only there stay apart.
    assert.notEqual(exactTerm(['a'], '\ud800'), exactTerm(['a'], '\ud801'));
    assert.notEqual(exactTerm(['a'], '\ud800'), exactTerm(['a'], '\ufffd'));
  });

  it('handles __proto__-named keys as ordinary keys', () => {
    const e = JSON.parse('{"__proto__":{"user":"Ada L"}}');
    const terms = entryTerms(e);
    assert.ok(terms.includes('ada'));
    assert.ok(terms.includes(exactTerm(['__proto__', 'user'], 'Ada L')));
  });
});

describe('q', () => {
  it('splits like entries; a trailing * makes a prefix; duplicates go', () => {
    assert.deepEqual(parseTextQuery('Disk-FULL  disk err*'), { words: ['disk', 'full'], prefixes: ['err'] });
    assert.deepEqual(parseTextQuery('"timeout" AND conn*ection'), { words: ['timeout', 'and', 'ection'], prefixes: ['conn'] });
    assert.deepEqual(parseTextQuery('abc abc*'), { words: ['abc'], prefixes: [] });
  });

  it('refuses a q with no word', () => {
    for (const q of ['', '   ', '***', '-- ::', '😀']) {
      assert.throws(
        () => parseTextQuery(q),
        (e: unknown) => e instanceof LogServiceError && e.status === 400 && JSON.stringify(e.details) === '{"field":"q","reason":"invalid"}',
        q,
      );
    }
  });

  it('yields only terms that are letters and digits (property)', () => {
    fc.assert(
      fc.property(text, (t) => {
        let parsed: ReturnType<typeof parseTextQuery>;
        try {
          parsed = parseTextQuery(t);
        } catch {
          return;
        }
        for (const w of [...parsed.words, ...parsed.prefixes]) {
          assert.ok(
            [...w].every((c) => LETTER_OR_DIGIT.test(c) || /\p{M}/u.test(c)),
            JSON.stringify(w),
          );
        }
      }),
    );
  });
});

describe('walks over deep entries', () => {
  it('collects terms and value text of an entry nested far deeper than the call stack allows, in document order', () => {
    let inner: unknown = { last: 'bottom word', flag: true };
    for (let i = 0; i < 100_000; i++) inner = i % 2 === 0 ? [inner, 'side'] : { k: inner };
    const entry = { event: 'top', inner, after: 'tail' };
    const terms = entryTerms(entry);
    assert.deepEqual(
      terms.filter((t) => !t.startsWith(EXACT_TERM_MARK)),
      ['top', 'bottom', 'word', 'side', 'tail'],
    );
    assert.equal(valueText(entry).split('\n').length, 3 + 50_000);
  });
});
