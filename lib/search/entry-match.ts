/**
 * Whether a stored entry passes a filter's text conditions (exact fields, `context.` paths, `q`),
 * decided from the entry itself. The search index only narrows the search
 * to blocks of entries that may match (storage/log-index/block-filter.ts); this is
 * what makes every answer exact, whatever the index let through.
 *
 * Cheap checks on the stored text come first: the JSON text of an entry
 * holding a value contains that value's JSON-escaped text, and its
 * lower-cased text contains each of its ASCII words. Only entries passing
 * them are parsed.
 */
import type { ExactFilter, LogFilter } from './log-filter.js';
import { MAX_WORD_LENGTH, addWords, valueText } from './search-terms.js';

/** Tests one stored entry (its compact JSON text). */
export type EntryTest = (body: string) => boolean;

const ASCII_WORD = /^[a-z0-9]+$/;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Whether the filter has conditions only the entry's text can decide. */
export function hasTextConditions(filter: Pick<LogFilter, 'words' | 'prefixes' | 'exact'>): boolean {
  return filter.words.length > 0 || filter.prefixes.length > 0 || filter.exact.length > 0;
}

/**
 * The text a value leaves in a stored entry: `"x"`'s escaped inner text for
 * a string, the JSON text itself for a number or boolean (both are what
 * the filter's value is compared with).
 */
export function exactNeedle(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/** One ASCII word or prefix of `q`, lower-cased, for a backend's cheap text filter. */
export interface AsciiNeedle {
  text: string;
  prefix: boolean;
}

/**
 * Up to `max` ASCII words and prefixes of `q`, longest first (the likeliest
 * to be rare). An entry holding one holds it in its text with ASCII case
 * folded, except through the two non-ASCII characters that lower-case to
 * ASCII (all of Unicode checked): U+212A KELVIN SIGN becomes `k`, and
 * U+0130 becomes `i` plus a combining dot, so a word holding it never
 * equals an ASCII word, but a prefix ending in `i` can stop right before
 * the dot. `mayFoldFromNonAscii` tells which needles a backend must widen.
 */
export function asciiWordNeedles(filter: Pick<LogFilter, 'words' | 'prefixes'>, max: number): AsciiNeedle[] {
  const all = [...filter.words.map((text) => ({ text, prefix: false })), ...filter.prefixes.map((text) => ({ text, prefix: true }))];
  return all
    .filter((n) => ASCII_WORD.test(n.text))
    .sort((a, b) => b.text.length - a.text.length)
    .slice(0, max);
}

/** Whether an entry may hold the needle only through U+212A (any `k`) or U+0130 (a prefix's last `i`). */
export function mayFoldFromNonAscii(needle: AsciiNeedle): boolean {
  return needle.text.includes('k') || (needle.prefix && needle.text.endsWith('i'));
}

/**
 * One stored entry's text and what the tests derive from it (lower-cased,
 * parsed, its values' text and words), each computed on first use. Tests
 * of many filters against the same entry (alert rules) share one, so each
 * is computed once per entry, not once per filter.
 */
export class EntryText {
  private lowerBodyText: string | undefined;
  private parsed: Record<string, unknown> | undefined;
  private values: string | undefined;
  private ascii: boolean | undefined;
  private lowerValues: string | undefined;
  private wordSet: ReadonlySet<string> | undefined;

  constructor(readonly body: string) {}

  /** The JSON text, lower-cased. */
  lowerBody(): string {
    return (this.lowerBodyText ??= this.body.toLowerCase());
  }

  /** The entry, parsed (read only: every test shares it). */
  entry(): Record<string, unknown> {
    return (this.parsed ??= JSON.parse(this.body) as Record<string, unknown>);
  }

  /** The text of its values (`valueText`). */
  text(): string {
    return (this.values ??= valueText(this.entry()));
  }

  /** Whether that text is all ASCII. */
  isAscii(): boolean {
    return (this.ascii ??= ASCII_ONLY.test(this.text()));
  }

  /** That text, lower-cased. */
  lowerText(): string {
    return (this.lowerValues ??= this.text().toLowerCase());
  }

  /** That text's words (`addWords`). */
  words(): ReadonlySet<string> {
    if (!this.wordSet) {
      const have = new Set<string>();
      addWords(this.text(), have);
      this.wordSet = have;
    }
    return this.wordSet;
  }
}

/** Tests one stored entry, through an `EntryText` other tests may share. */
export type EntryTextTest = (entry: EntryText) => boolean;

/** The filter's text conditions as one test, or null when it has none. */
export function entryMatcher(filter: Pick<LogFilter, 'words' | 'prefixes' | 'exact'>): EntryTest | null {
  const test = entryTextMatcher(filter);
  return test && ((body) => test(new EntryText(body)));
}

/** `entryMatcher`'s test, taking an `EntryText` (shared between the tests of several filters). */
export function entryTextMatcher(filter: Pick<LogFilter, 'words' | 'prefixes' | 'exact'>): EntryTextTest | null {
  if (!hasTextConditions(filter)) return null;
  const needles = filter.exact.map((e) => exactNeedle(e.value));
  const asciiParts = [...filter.words.map((w) => ({ w, prefix: false })), ...filter.prefixes.map((w) => ({ w, prefix: true }))].filter((p) =>
    ASCII_WORD.test(p.w),
  );
  const { words, prefixes, exact } = filter;
  return (e) => {
    const body = e.body;
    for (const n of needles) if (!body.includes(n)) return false;
    if (asciiParts.length > 0) {
      const lower = e.lowerBody();
      for (const { w, prefix } of asciiParts) if (!mayHoldAsciiWord(lower, w, prefix)) return false;
    }
    const entry = e.entry();
    for (const f of exact) if (!exactMatches(entry, f)) return false;
    if (words.length === 0 && prefixes.length === 0) return true;
    if (e.isAscii()) {
      // Most entries: find each word in place rather than splitting the
      // text into a set of all its words (half the cost of a histogram).
      const lower = e.lowerText();
      return words.every((w) => hasAsciiWord(lower, w, false)) && prefixes.every((p) => hasAsciiWord(lower, p, true));
    }
    const have = e.words();
    for (const w of words) if (!have.has(w)) return false;
    return prefixes.every((p) => {
      for (const w of have) if (w.startsWith(p)) return true;
      return false;
    });
  };
}

const isAsciiWordChar = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);

/**
 * A necessary condition, on an entry's lower-cased JSON text, for it to
 * hold the ASCII word (or a word starting with the prefix): an occurrence
 * not inside a longer run of letters and digits (a prefix: not after one;
 * `vosa*` need not parse the entries holding only `qunevosa`). A JSON
 * escape right before it (`\n`, `\u001f`) may end a run in the text the
 * entry stands for, so an occurrence within six characters after a
 * backslash counts too; a word of 64 characters needs no end (longer runs
 * are cut there). The entry itself decides the rest.
 */
function mayHoldAsciiWord(lowerText: string, word: string, prefix: boolean): boolean {
  for (let at = lowerText.indexOf(word); at !== -1; at = lowerText.indexOf(word, at + 1)) {
    if (at > 0 && isAsciiWordChar(lowerText.charCodeAt(at - 1)) && lowerText.lastIndexOf('\\', at - 1) < at - 6) continue;
    const end = at + word.length;
    if (prefix || word.length >= MAX_WORD_LENGTH || end === lowerText.length || !isAsciiWordChar(lowerText.charCodeAt(end))) return true;
  }
  return false;
}

/**
 * Whether lower-cased ASCII `text` holds `word` as one of its words (a
 * maximal run of [a-z0-9], cut at 64 characters), or with `prefix` a word
 * starting with it. A `word` that is not ASCII is in no ASCII text.
 */
export function hasAsciiWord(text: string, word: string, prefix: boolean): boolean {
  if (word.length === 0 || word.length > MAX_WORD_LENGTH) return false;
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    if (at > 0 && isAsciiWordChar(text.charCodeAt(at - 1))) continue;
    // A run of 64 characters or more is indexed as its first 64, so a word of 64 needs no end.
    const end = at + word.length;
    if (prefix || word.length === MAX_WORD_LENGTH || end === text.length || !isAsciiWordChar(text.charCodeAt(end))) return true;
  }
  return false;
}

/** The value at the dotted path is a string equal to it, or a number or boolean whose JSON text equals it. */
export function exactMatches(entry: Record<string, unknown>, filter: ExactFilter): boolean {
  let node: unknown = entry;
  for (const key of filter.path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  switch (typeof node) {
    case 'string':
      return node === filter.value;
    case 'number':
      return JSON.stringify(node) === filter.value;
    case 'boolean':
      return (node ? 'true' : 'false') === filter.value;
    default:
      return false;
  }
}
