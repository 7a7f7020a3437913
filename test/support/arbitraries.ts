/**
 * fast-check generators shared by the property tests of search terms and
 * entry matching: text that stresses word splitting and case folding, JSON
 * values of any shape, and log entries as they are stored.
 */
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * Any text mixing ASCII, accents, CJK, digits of other scripts, astral
 * letters, a combining mark, the Kelvin sign (which lower-cases to `k`),
 * separators, a control character and a lone surrogate.
 */
export function unicodeText(maxLength: number): fc.Arbitrary<string> {
  return fc.string({
    unit: fc.constantFrom(...[...'aZ9 _-.,:/é ÉßİΣς中文٣𝒳𐐀😀\u0307\t\n*"\\§\u212a\u0001'], '\ud800'),
    maxLength,
  });
}

const leafText = unicodeText(24);

/** Any JSON value, small and nested, with keys that trip naive object handling. */
export const jsonValue: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    leafText,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(1e21, -0.5, 0, 1, 2.5e-7),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(leafText, fc.constantFrom('__proto__', 'constructor', 'a.b', '', 'k')), tie('v'), { maxKeys: 4 }),
  ),
})).v;

/** A log entry as stored: parsed JSON, so `__proto__` is an own key like any other. */
export const logEntry: fc.Arbitrary<{ [k: string]: Json }> = fc
  .dictionary(fc.oneof(leafText, fc.constantFrom('__proto__', 'constructor', 'toString', 'k')), jsonValue, { maxKeys: 6 })
  .map((e) => JSON.parse(JSON.stringify(e)) as { [k: string]: Json });
