/**
 * The terms a sealed block's filter (block-filter.ts) is built from, and
 * the terms a query probes it with. They differ from the tail's terms
 * (search/search-terms.ts `entryTerms`) in two ways, both affordable
 * because a filter grows by a few bits per distinct term, not by a posting:
 * - a leaf whose value is one short word (at most SHORT_VALUE_MAX code
 *   units: a status, a small id, a code) gets the exact term of its path
 *   and value too: `context.user.id=57` probes the term of that path and
 *   value, not the word `57` that durations, counters and ids elsewhere
 *   in the entries also hold. A longer one-word value (a request id) is
 *   rare as a word, so its word serves, as in the tail;
 * - every word also gives prefix terms, its first two and first three
 *   characters behind PREFIX_TERM_MARK, so a `q` prefix (`vosa*`, at least
 *   two characters) probes the filter with its longest prefix term. Most
 *   are shared by many words, so they add few distinct terms per frame.
 * Levels, projects and times are not terms here: a block's header and its
 * row give them.
 */
import { EXACT_TERM_MARK, sealingLeafTerm, sealingTerms } from '../../search/search-terms.js';
import type { LogFilter } from '../../search/log-filter.js';

/** Marks a word-prefix term: `§^` is neither a word nor an exact term (`§` + base-32 digits). */
export const PREFIX_TERM_MARK = `${EXACT_TERM_MARK}^`;

/**
 * Lengths of a word's prefix terms: a `q` prefix has at least 2 characters
 * (search-terms.ts MIN_PREFIX_LENGTH) and probes its longest prefix term.
 */
export const PREFIX_TERM_LENGTHS = [2, 3] as const;

/**
 * Longest one-word value (UTF-16 code units) that still gets an exact
 * term of its own: numbers below 10^8, short codes and names. Longer ones
 * are ids, whose word is as selective as an exact term.
 */
export const SHORT_VALUE_MAX = 8;

const SURROGATE = /[\ud800-\udfff]/;

/** The prefix term of a word's first `length` code points, or null when it has fewer. */
export function prefixTerm(word: string, length: number): string | null {
  // Fast path: no surrogate among the first code units (the usual case).
  if (word.length >= length && !SURROGATE.test(word.slice(0, length))) return PREFIX_TERM_MARK + word.slice(0, length);
  const chars = Array.from(word);
  return chars.length < length ? null : PREFIX_TERM_MARK + chars.slice(0, length).join('');
}

/** The prefix term a `q` prefix probes: its longest one (null only below the shortest length). */
export function probedPrefixTerm(prefix: string): string | null {
  for (let i = PREFIX_TERM_LENGTHS.length - 1; i >= 0; i--) {
    const t = prefixTerm(prefix, PREFIX_TERM_LENGTHS[i]!);
    if (t !== null) return t;
  }
  return null;
}

/**
 * Adds the filter terms of one entry (the parsed object as stored) to
 * `into`: its words, their prefix terms, and the exact terms of its
 * addressable leaves (see above).
 */
export function addSealedTerms(entry: Record<string, unknown>, into: Set<string>): void {
  const exact: string[] = [];
  sealingTerms(entry, SHORT_VALUE_MAX, { add: (w: string) => addWord(w, into) }, exact);
  for (const t of exact) into.add(t);
}

/**
 * A word and its prefix terms. Words repeat across a frame's entries: a
 * word already there brought its prefix terms with it (words, exact terms
 * and prefix terms never collide), so they are not computed again.
 */
function addWord(word: string, into: Set<string>): void {
  if (into.has(word)) return;
  into.add(word);
  for (const length of PREFIX_TERM_LENGTHS) {
    const p = prefixTerm(word, length);
    if (p !== null) into.add(p);
  }
}

/** The distinct filter terms of one entry. */
export function sealedEntryTerms(entry: Record<string, unknown>): string[] {
  const terms = new Set<string>();
  addSealedTerms(entry, terms);
  return [...terms];
}

/**
 * The terms a frame must hold for one of its entries to match `filter`:
 * every `q` word, the prefix term of each `q` prefix that has one, and the
 * term of every exact filter. Empty when the filter has no term condition
 * (then every frame in range is read).
 */
export function sealedFilterTerms(filter: Pick<LogFilter, 'words' | 'prefixes' | 'exact'>): string[] {
  const terms = new Set<string>(filter.words);
  for (const p of filter.prefixes) {
    const t = probedPrefixTerm(p);
    if (t !== null) terms.add(t);
  }
  for (const e of filter.exact) terms.add(sealingLeafTerm(e.path, e.value, SHORT_VALUE_MAX));
  return [...terms];
}
