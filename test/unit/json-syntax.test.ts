import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isJsonText } from '../../lib/ingest/json-syntax.js';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

// Characters JSON's grammar turns on, so random texts land near its edges.
const JSONISH = fc.constantFrom(...'{}[]",:\\/ \t\r\n-+.0123456789eEtruefalsnlbux"aA\u0000\u001f\u2028\ud800é😀');

describe('isJsonText', () => {
  it('accepts exactly what JSON.parse accepts (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string({ unit: JSONISH, maxLength: 24 }), fc.string({ maxLength: 24 })), (text) => {
        assert.equal(isJsonText(text), parses(text), JSON.stringify(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('accepts exactly what JSON.parse accepts after one edit of a JSON text (property)', () => {
    const edited = fc.tuple(fc.json({ maxDepth: 3 }), fc.nat(), fc.nat(3), fc.string({ unit: JSONISH, maxLength: 2 })).map(([text, at, drop, insert]) => {
      const i = at % (text.length + 1);
      return text.slice(0, i) + insert + text.slice(i + drop);
    });
    fc.assert(
      fc.property(edited, (text) => {
        assert.equal(isJsonText(text), parses(text), JSON.stringify(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('handles the edges', () => {
    for (const text of ['0', '-0', '1.5e+3', '1E-2', ' "a\\u00e9\\n" ', '[]', '{}', '[[],{}]', '{"a":[1,{"b":null}]}', 'true', '\t\r\n false ', '"\ud800"']) {
      assert.equal(isJsonText(text), true, text);
    }
    for (const text of [
      '',
      ' ',
      'x',
      '{x}',
      '"x',
      '01',
      '1.',
      '.5',
      '-',
      '1e',
      '+1',
      '[1,]',
      '{"a"}',
      '{"a":1,}',
      'tru',
      'nulll',
      '"\\x"',
      '"\\u12"',
      '"a\nb"',
      '[1] 2',
      'NaN',
    ]) {
      assert.equal(isJsonText(text), false, text);
    }
  });
});
