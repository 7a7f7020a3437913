/**
 * The search terms logkeep computes itself at ingest, so both backends index
 * (and therefore answer) identically; the database only stores and
 * intersects opaque strings.
 *
 * Two kinds of term share one inverted index:
 * - words (D25): maximal runs of Unicode letters and digits, lower-cased with
 *   `toLowerCase`, cut at 64 code points, from every string and number value
 *   anywhere in the entry (keys excluded; numbers by their JSON text);
 * - exact-match terms (D24, D26): one per leaf of the submitted object,
 *   `§` followed by 24 hex digits of SHA-256 over the leaf's path and value.
 *   `§` is neither a letter nor a digit, so no word can equal or start with an
 *   exact term; it is not ASCII, so SQLite's FTS5 `ascii` tokenizer keeps it
 *   inside the token, and PostgreSQL's `array_to_tsvector` takes any string.
 *
 * `category`, `logger` and the six correlation filters are the exact terms of
 * the top-level paths of the same names: their allowed values (string, null,
 * and for `connection_generation` an integer compared by its JSON text) match
 * D24 exactly under D26's rule, so one term per leaf serves both kinds of
 * filter.
 *
 * Paths follow object keys only (arrays are values, not containers for
 * paths). A key containing `.` or an empty key cannot be named by a dotted
 * `context.` parameter, so its subtree gets no exact terms.
 */
import { hash } from 'node:crypto';
import { invalidRequest } from '../errors.js';

/** Longest word kept, in code points (D25). */
export const MAX_WORD_LENGTH = 64;

/** First character of every exact-match term. */
export const EXACT_TERM_MARK = '§';

const WORD_RUN = /[\p{L}\p{N}]+/gu;
// A q word: a run, optionally followed by `*` (prefix).
const QUERY_WORD_RUN = /([\p{L}\p{N}]+)(\*?)/gu;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Lower-cases one run and cuts it at 64 code points (D25). */
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
export function addWords(text: string, into: Set<string>): void {
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

/**
 * The exact-match term of a leaf: `segments` is its path of object keys,
 * `valueText` the string value or the JSON text of a number or boolean.
 * The path is hashed as a JSON array, so `{"a.b": 1}` and `{"a": {"b": 1}}`
 * never collide, and a value never passes for part of a path.
 */
export function exactTerm(segments: readonly string[], valueText: string): string {
  if (segments.length === 0) throw new RangeError('an exact-match term needs a path of at least one key');
  return exactLeaf(JSON.stringify(segments).slice(0, -1), valueText);
}

// Most leaves repeat (levels, hosts, status codes, categories), and a hash
// costs about a microsecond, so recent terms are remembered (a pure
// function's cache: sharing it between services is harmless). Cleared when
// full rather than evicted one by one: simple, and O(1) amortised.
const EXACT_CACHE_LIMIT = 50_000;
const exactCache = new Map<string, string>();

/**
 * `prefix` is the path as a JSON array's text without its closing bracket
 * (`["a","b"`, at least one segment). JSON escapes every control character
 * in keys, so the NUL after it marks where the path ends and the raw value
 * begins: path and value are read back unambiguously. The tag versions the
 * encoding.
 */
function exactLeaf(prefix: string, valueText: string): string {
  // Hashing encodes text as UTF-8, which turns every lone surrogate into
  // U+FFFD; such a value is hashed as its JSON text instead (marked apart).
  const encoded = isWellFormed(valueText) ? `${prefix}]\u0000${valueText}` : `${prefix}]\u0001${JSON.stringify(valueText)}`;
  let term = exactCache.get(encoded);
  if (term === undefined) {
    term = EXACT_TERM_MARK + hash('sha256', `logkeep-exact-v2\u0000${encoded}`, 'hex').slice(0, 24);
    if (exactCache.size >= EXACT_CACHE_LIMIT) exactCache.clear();
    exactCache.set(encoded, term);
  }
  return term;
}

const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** Whether a key can be named in a dotted `context.` path (D26). */
function addressable(key: string): boolean {
  return key.length > 0 && !key.includes('.');
}

/** What a walk over one entry gathers. */
interface Collected {
  /** Every string value and number JSON text, for words. */
  texts: string[];
  exact: Set<string>;
}

/**
 * Every search term of one submitted entry (words first, then exact terms),
 * without repeats. `entry` is the parsed object as submitted.
 */
export function entryTerms(entry: Record<string, unknown>): string[] {
  const collected: Collected = { texts: [], exact: new Set() };
  collectObject(entry, '[', collected);
  const terms = new Set<string>();
  // One split over all texts: the joiner is a separator, so no word spans two values.
  addWords(collected.texts.join(TEXT_JOINER), terms);
  for (const t of collected.exact) terms.add(t);
  return [...terms];
}

// `prefix` is the JSON-array text of the path so far without its closing
// bracket, or null once the path went through an array or an unaddressable
// key (words are still collected below it, exact terms are not).
function collectObject(obj: Record<string, unknown>, prefix: string | null, into: Collected): void {
  for (const key of Object.keys(obj)) {
    const childPrefix = prefix !== null && addressable(key) ? `${prefix}${prefix.length > 1 ? ',' : ''}${JSON.stringify(key)}` : null;
    collectValue(obj[key], childPrefix, into);
  }
}

function collectValue(value: unknown, prefix: string | null, into: Collected): void {
  switch (typeof value) {
    case 'string':
      into.texts.push(value);
      if (prefix !== null) into.exact.add(exactLeaf(prefix, value));
      return;
    case 'number': {
      const text = JSON.stringify(value);
      into.texts.push(text);
      if (prefix !== null) into.exact.add(exactLeaf(prefix, text));
      return;
    }
    case 'boolean':
      if (prefix !== null) into.exact.add(exactLeaf(prefix, value ? 'true' : 'false'));
      return;
    case 'object':
      if (value === null) return;
      if (Array.isArray(value)) {
        for (const item of value) collectValue(item, null, into);
        return;
      }
      collectObject(value as Record<string, unknown>, prefix, into);
      return;
    default:
      return;
  }
}

/** A parsed `q`: whole words (exact terms) and prefixes (`word*`). */
export interface TextQuery {
  words: string[];
  prefixes: string[];
}

/**
 * Reads `q` (D25): its words by the same splitter as entries; a word written
 * with a trailing `*` is a prefix. A `q` with no word is 400
 * `{field: q, reason: invalid}`.
 */
export function parseTextQuery(q: string): TextQuery {
  const words = new Set<string>();
  const prefixes = new Set<string>();
  for (const m of q.matchAll(QUERY_WORD_RUN)) {
    const word = normalizeWord(m[1]!);
    (m[2] === '*' ? prefixes : words).add(word);
  }
  if (words.size === 0 && prefixes.size === 0) {
    throw invalidRequest("'q' must contain at least one word (letters or digits).", 'q', 'invalid');
  }
  // A prefix that is also a whole word adds nothing (the word implies it).
  for (const w of words) prefixes.delete(w);
  return { words: [...words], prefixes: [...prefixes] };
}
