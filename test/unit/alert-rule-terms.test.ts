/** The one-pass test of a chunk's terms for many rules (lib/alerts/rule-terms.ts) says what `holdsTerms` says. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RuleTerms } from '../../lib/alerts/rule-terms.js';
import { holdsTerms, type BlockMatch } from '../../lib/search/log-terms.js';

const match = (all: string[], prefixes: string[] = []): BlockMatch => ({ all, prefixes, anyOf: [] });

// Blocks' JSON text, as a committed chunk's terms are: `[[first, last, "terms"], …]`.
const TEXTS = [
  JSON.stringify([
    [1, 3, 'disk full db1 §l3 payment failed'],
    [4, 4, 'diskette ok §l1'],
  ]),
  JSON.stringify([[5, 9, 'orders alpha-beta "quoted" trailing']]),
  'bare',
  '',
  'disk',
  ' disk ',
  'a  b',
];

const MATCHES = [
  match(['disk']),
  match(['disk', 'full']),
  match(['disk', 'missing']),
  match(['diskette']),
  match(['isk']),
  match(['§l3']),
  match(['payment', 'failed', 'db1']),
  match(['bare']),
  match(['alpha-beta']),
  match(['quoted']),
  match(['trailing']),
  match(['a', 'b']),
  match(['has space']),
  match(['has"quote']),
  match([], ['dis']),
  match(['ok'], ['pay']),
  match([], ['zz']),
];

describe('alert rule terms', () => {
  it('says what a scan of the text says, for every rule and text', () => {
    const terms = new RuleTerms(MATCHES);
    for (const text of TEXTS) {
      const holds = terms.forCommit();
      for (const m of MATCHES) {
        assert.equal(holds(text, m), holdsTerms(text, m), `${JSON.stringify(m.all)} ${JSON.stringify(m.prefixes)} in ${JSON.stringify(text)}`);
      }
    }
  });

  it('finds terms among many that share a hash bucket, and none when no rule has terms', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => match([`marker${i}`]));
    const terms = new RuleTerms(many);
    const text = JSON.stringify([[1, 2, 'marker17 marker4999 marker']]);
    const holds = terms.forCommit();
    const found = many.filter((m) => holds(text, m)).map((m) => m.all[0]);
    assert.deepEqual(found, ['marker17', 'marker4999']);
    const none = new RuleTerms([]).forCommit();
    assert.equal(none(text, match(['marker17'])), true, 'a rule outside the set is scanned for');
  });

  it('holds an empty term in any text, and returns (a scan for it once never ended)', () => {
    for (const text of ['', 'abc', 'ab c', JSON.stringify([[1, 2, 'disk']])]) {
      assert.equal(holdsTerms(text, match([''])), true, JSON.stringify(text));
      assert.equal(holdsTerms(text, match([], [''])), true, JSON.stringify(text));
    }
  });
});
