/**
 * The search terms logkeep computes itself at ingest, so both backends index
 * (and therefore answer) identically; the database only stores and
 * intersects opaque strings.
 *
 * Two kinds of term share one inverted index:
 * - words: maximal runs of Unicode letters and digits, lower-cased with
 *   `toLowerCase`, cut at 64 code points, from every string and number value
 *   anywhere in the entry (keys excluded; numbers by their JSON text);
 * - exact-match terms: one per leaf of the submitted object
 *   whose value is not a single word (see `leafIndexTerm`), `§` followed by
 *   12 base-32 digits: two 30-bit hashes of the leaf's path
 *   (keys joined by `.`) and value. The index is a filter, never the answer:
 *   every candidate is checked against the filter itself (entry-match.ts),
 *   so a hash collision costs a little reading, never a wrong result. That
 *   is what lets the hash be a fast one over UTF-16 code units (no UTF-8
 *   encoding, no cryptographic digest). `§` is neither a letter nor a digit,
 *   so no word can equal or start with an exact term; it is not ASCII, so
 *   SQLite's FTS5 `ascii` tokenizer keeps it inside the token, and
 *   PostgreSQL's `array_to_tsvector` takes any string.
 *
 * A leaf whose value is one word (a string of letters and digits only, or
 * a number such as 404) gets no exact term: its word is already indexed,
 * and every entry holding the value holds the word, so the word serves the
 * filter (it only loses the path). That spares the index one term per such
 * leaf, most of them distinct per entry (request ids, user ids), which is
 * what ingestion pays most for. `true` and `false` keep theirs: a boolean
 * leaf has no word, and a filter value cannot say which of the two it means.
 *
 * `category`, `logger` and the six correlation filters are the exact terms of
 * the top-level paths of the same names: their allowed values (string, null,
 * and for `connection_generation` an integer compared by its JSON text) match
 * exactly under the `context.` rule, so one term per leaf serves both kinds
 * of filter.
 *
 * Paths follow object keys only (arrays are values, not containers for
 * paths). A key containing `.` or an empty key cannot be named by a dotted
 * `context.` parameter, so its subtree gets no exact terms.
 */
import { invalidRequest } from '../core/errors.js';
import { FNV_OFFSET, FNV_PRIME, fmix32, LANE2_OFFSET, LANE2_PRIME } from '../core/hash32.js';

/** Longest word kept, in code points. */
export const MAX_WORD_LENGTH = 64;

/** First character of every exact-match term. */
export const EXACT_TERM_MARK = '§';

const WORD_RUN = /[\p{L}\p{N}]+/gu;
// A q word: a run, optionally followed by `*` (prefix).
const QUERY_WORD_RUN = /([\p{L}\p{N}]+)(\*?)/gu;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Lower-cases one run and cuts it at 64 code points. */
export function normalizeWord(run: string): string {
  const lower = run.toLowerCase();
  // Code units ≥ code points, so only long strings can need cutting.
  if (lower.length <= MAX_WORD_LENGTH) return lower;
  let out = '';
  let count = 0;
  for (const ch of lower) {
    if (count === MAX_WORD_LENGTH) break;
    out += ch;
    count += 1;
  }
  return out;
}

// Characters that end an ASCII word; the joiner of collected texts is one.
const ASCII_NON_WORD = /[^a-z0-9]+/;
const TEXT_JOINER = '\n';

/** Adds the words of `text` to `into`. */
export function addWords(text: string, into: { add(word: string): unknown }): void {
  // Fast path: for ASCII, lower-casing first cannot merge or split runs, so
  // one toLowerCase and one split serve every word.
  if (ASCII_ONLY.test(text)) {
    for (const w of text.toLowerCase().split(ASCII_NON_WORD)) {
      if (w.length === 0) continue;
      into.add(w.length <= MAX_WORD_LENGTH ? w : w.slice(0, MAX_WORD_LENGTH));
    }
    return;
  }
  for (const m of text.matchAll(WORD_RUN)) into.add(normalizeWord(m[0]));
}

/** The words of one text, in order of first appearance, without repeats. */
export function wordsOf(text: string): string[] {
  const set = new Set<string>();
  addWords(text, set);
  return [...set];
}

/** Every string value and number JSON text of an entry, keys excluded, joined so no word spans two values. */
export function valueText(entry: Record<string, unknown>): string {
  const texts: string[] = [];
  // The walk of entryTerms without a path: no exact terms are computed.
  collect(entry, false, texts, null);
  return texts.join(TEXT_JOINER);
}

// ---- exact-match terms: two 32-bit hashes (core/hash32.ts), fed one string at a time ----------

const DOT = 0x2e;
const VALUE_MARK = 0;
const PATH_START = 1;

/** Feeds `text` (code unit by code unit) after `separator` into one lane: h = (h ^ unit) × prime. */
function feed(h: number, prime: number, separator: number, text: string): number {
  h = Math.imul(h ^ separator, prime);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), prime);
  return h;
}

// Two base-32 digits per 10 bits: 30 bits of each lane, 12 digits in all.
const DIGIT_PAIRS = Array.from({ length: 1024 }, (_, i) => (i >>> 5).toString(32) + (i & 31).toString(32));

/** The exact-match term of a leaf whose path left the lanes at `a` and `b`. */
function leafTerm(a: number, b: number, valueText: string): string {
  return exactTermOfHashes(fmix32(feed(a, FNV_PRIME, VALUE_MARK, valueText)), fmix32(feed(b, LANE2_PRIME, VALUE_MARK, valueText)));
}

/** The exact-match term whose two finished hashes are `x` and `y`: `§` and 30 bits of each as base-32 digits. */
export function exactTermOfHashes(x: number, y: number): string {
  return (
    EXACT_TERM_MARK +
    DIGIT_PAIRS[x >>> 22]! +
    DIGIT_PAIRS[(x >>> 12) & 1023]! +
    DIGIT_PAIRS[(x >>> 2) & 1023]! +
    DIGIT_PAIRS[y >>> 22]! +
    DIGIT_PAIRS[(y >>> 12) & 1023]! +
    DIGIT_PAIRS[(y >>> 2) & 1023]!
  );
}

/**
 * The exact-match term of a leaf: `segments` is its path of object keys,
 * `valueText` the string value or the JSON text of a number or boolean.
 */
export function exactTerm(segments: readonly string[], valueText: string): string {
  if (segments.length === 0) throw new RangeError('an exact-match term needs a path of at least one key');
  let a = FNV_OFFSET;
  let b = LANE2_OFFSET;
  segments.forEach((key, i) => {
    const separator = i === 0 ? PATH_START : DOT;
    a = feed(a, FNV_PRIME, separator, key);
    b = feed(b, LANE2_PRIME, separator, key);
  });
  return leafTerm(a, b, valueText);
}

const ONE_WORD = /^[\p{L}\p{N}]+$/u;

/** Whether a leaf's value text is a single word, so its word stands for it in the index (see above). */
function isOneWord(valueText: string): boolean {
  return ONE_WORD.test(valueText) && valueText !== 'true' && valueText !== 'false';
}

/**
 * The index term every entry holding the leaf `segments` = `valueText`
 * (a string, or a number's or boolean's JSON text) has among its terms:
 * the value's word when it is one word, its exact term otherwise.
 */
export function leafIndexTerm(segments: readonly string[], valueText: string): string {
  return isOneWord(valueText) ? normalizeWord(valueText) : exactTerm(segments, valueText);
}

/** Whether a key can be named in a dotted `context.` path. */
function addressable(key: string): boolean {
  return key.length > 0 && !key.includes('.');
}

/**
 * Every search term of one submitted entry: words first, then exact terms
 * (for `leafIndexTerm`'s leaves that are not one word).
 * Words come without repeats; exact terms may repeat only by collision.
 * `entry` is the parsed object as submitted.
 */
export function entryTerms(entry: Record<string, unknown>): string[] {
  const texts: string[] = [];
  const exact: string[] = [];
  collect(entry, true, texts, (a, b, v) => exact.push(leafTerm(a, b, v)));
  const terms = new Set<string>();
  addWords(texts.join(TEXT_JOINER), terms);
  const out = [...terms];
  for (const t of exact) out.push(t);
  return out;
}

/**
 * The terms of one entry for a sealed block's filter
 * (storage/log-index/sealed-terms.ts): its words into `words`, and into
 * `exact` the exact term of every addressed leaf whose value is not one
 * word or is one of at most `oneWordExactMax` UTF-16 code units (a short
 * number or code, which as a word would also be found in other values).
 */
export function sealingTerms(entry: Record<string, unknown>, oneWordExactMax: number, words: { add(word: string): unknown }, exact: string[]): void {
  const texts: string[] = [];
  collect(entry, true, texts, (a, b, v) => exact.push(leafTerm(a, b, v)), oneWordExactMax);
  addWords(texts.join(TEXT_JOINER), words);
}

/**
 * What `sealingTerms` finds, before any term is made a string: the value
 * texts whose words are terms (into `texts`), and for each exact term the
 * two finished hashes `exactTermOfHashes` spells (`leaf`). Sealing hashes
 * terms for its filter anyway (storage/log-index/term-hashes.ts), so it
 * skips building strings it would only hash.
 */
export function sealingTermParts(entry: Record<string, unknown>, oneWordExactMax: number, texts: string[], leaf: (x: number, y: number) => void): void {
  collect(entry, true, texts, (a, b, v) => leaf(fmix32(feed(a, FNV_PRIME, VALUE_MARK, v)), fmix32(feed(b, LANE2_PRIME, VALUE_MARK, v))), oneWordExactMax);
}

/** The term a sealed block's filter holds for every entry with the leaf `segments` = `valueText` (see `sealingTerms`). */
export function sealingLeafTerm(segments: readonly string[], valueText: string, oneWordExactMax: number): string {
  return valueText.length > oneWordExactMax && isOneWord(valueText) ? normalizeWord(valueText) : exactTerm(segments, valueText);
}

/**
 * A value still to visit, with the hash lanes of its path (see `collect`);
 * `addressed` is false once the path went through an array or an
 * unaddressable key.
 */
interface Pending {
  value: unknown;
  a: number;
  b: number;
  addressed: boolean;
}

/**
 * Visits every value below `root` in document order (keys in order, array
 * items in order), collecting value texts and, with `withTerms`, exact
 * terms of the leaves whose path is addressed (words are still collected
 * below an array or an unaddressable key, exact terms are not). The lanes
 * are plain numbers on each visit rather than a tuple per key: this walk
 * runs for every ingested entry.
 *
 * The walk keeps its own stack instead of recursing: a stored entry may
 * nest deeper than the call stack allows (one stored before nesting was
 * bounded), and a search or a stream must still read past it.
 */
function collect(
  root: Record<string, unknown>,
  withTerms: boolean,
  texts: string[],
  exact: ((a: number, b: number, valueText: string) => void) | null,
  oneWordExactMax = -1,
): void {
  const stack: Pending[] = [];
  // Children are pushed in reverse so they come off the stack in order.
  const pushChildren = (value: object, a: number, b: number, addressed: boolean, top: boolean) => {
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], a: 0, b: 0, addressed: false });
      return;
    }
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    const separator = top ? PATH_START : DOT;
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (addressed && addressable(key)) {
        stack.push({ value: obj[key], a: feed(a, FNV_PRIME, separator, key), b: feed(b, LANE2_PRIME, separator, key), addressed: true });
      } else stack.push({ value: obj[key], a: 0, b: 0, addressed: false });
    }
  };
  pushChildren(root, FNV_OFFSET, LANE2_OFFSET, withTerms, true);
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, a, b, addressed } = item;
    switch (typeof value) {
      case 'string':
        texts.push(value);
        if (addressed && (value.length <= oneWordExactMax || !isOneWord(value))) exact!(a, b, value);
        break;
      case 'number': {
        const text = JSON.stringify(value);
        texts.push(text);
        if (addressed && (text.length <= oneWordExactMax || !isOneWord(text))) exact!(a, b, text);
        break;
      }
      case 'boolean':
        if (addressed) exact!(a, b, value ? 'true' : 'false');
        break;
      case 'object':
        if (value !== null) pushChildren(value, a, b, addressed, false);
        break;
      default:
        break;
    }
  }
}

/** A parsed `q`: whole words (exact terms) and prefixes (`word*`). */
export interface TextQuery {
  words: string[];
  prefixes: string[];
}

/**
 * The most distinct words and prefixes a `q` may hold. Each one is another
 * index lookup and another condition on every candidate entry; real
 * searches use a handful.
 */
export const MAX_QUERY_WORDS = 16;

/**
 * The fewest characters a prefix (`word*`) must have before its `*`. A
 * one-character prefix matches a large share of all words, so its lookup
 * gathers most of the index's postings for a project.
 */
export const MIN_PREFIX_LENGTH = 2;

/**
 * Reads `q`: its words by the same splitter as entries; a word written
 * with a trailing `*` is a prefix. A `q` with no word, with more than
 * MAX_QUERY_WORDS words, or with a prefix shorter than MIN_PREFIX_LENGTH is
 * 400 `{field: q, reason: invalid}`.
 */
export function parseTextQuery(q: string): TextQuery {
  const words = new Set<string>();
  const prefixes = new Set<string>();
  for (const m of q.matchAll(QUERY_WORD_RUN)) {
    const word = normalizeWord(m[1]!);
    if (m[2] !== '*') words.add(word);
    else if ([...word].length < MIN_PREFIX_LENGTH) {
      throw invalidRequest(`A prefix in 'q' needs at least ${MIN_PREFIX_LENGTH} letters or digits before its '*' ('${word}*' is too short).`, 'q', 'invalid');
    } else prefixes.add(word);
  }
  if (words.size === 0 && prefixes.size === 0) {
    throw invalidRequest("'q' must contain at least one word (letters or digits).", 'q', 'invalid');
  }
  // A prefix that is also a whole word adds nothing (the word implies it).
  for (const w of words) prefixes.delete(w);
  if (words.size + prefixes.size > MAX_QUERY_WORDS) {
    throw invalidRequest(`'q' may hold at most ${MAX_QUERY_WORDS} distinct words and prefixes.`, 'q', 'invalid');
  }
  return { words: [...words], prefixes: [...prefixes] };
}
