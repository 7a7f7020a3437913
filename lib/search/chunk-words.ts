/**
 * Which committed chunks a filter may match, read from the chunk's stored
 * rows as they are (the UTF-8 JSON ingestion wrote, `EncodedChunk.rows`),
 * without decoding them and without search terms: live streams and alert
 * rules test every commit of their projects this way, and only chunks that
 * pass are decoded and checked entry by entry (entry-match.ts). One scan of
 * a chunk serves every filter of a set, whatever their number.
 *
 * The test is a necessary condition, never the answer: an entry that
 * matches holds each ASCII word of `q`, and each ASCII word of an exact
 * filter's value, as a whole run of ASCII letters and digits in its stored
 * text (a prefix as the start of one), case folded. The scan reads runs of
 * `[A-Za-z0-9]` in the rows' bytes, lower-cased and cut at MAX_WORD_LENGTH
 * as words are, and treats everything else as a separator:
 * - JSON escapes at both levels (the body is JSON text, itself a string in
 *   the rows' JSON): an escape never stands for a letter or digit (only
 *   quotes, backslashes, control characters and lone surrogates are
 *   escaped), so its letters (`\n`, `\u001f`) are skipped, not read as a word;
 * - any other byte of a non-ASCII character, except the two that lower-case
 *   to ASCII: U+212A KELVIN SIGN reads as `k`, U+0130 as `i` ending its run
 *   (it lower-cases to `i` and a combining dot, so a word holding it is not
 *   ASCII, but a prefix may stop before the dot).
 * Splitting more than words do only lets more chunks through. Words and
 * prefixes that are not ASCII are not tested (their chunks pass), nor are
 * filters without text (levels are told from the chunk's counts).
 *
 * Runs are compared by a 30-bit FNV-1a hash: a collision lets a chunk
 * through, which costs its decoding, never an answer.
 */
import { FNV_OFFSET, FNV_PRIME } from '../core/hash32.js';
import type { LogFilter } from './log-filter.js';
import { MAX_WORD_LENGTH, wordsOf } from './search-terms.js';

/** The ASCII words and prefixes a chunk must hold for a filter to match one of its entries. */
export interface WordProbe {
  words: readonly string[];
  prefixes: readonly string[];
}

const ASCII_WORD = /^[a-z0-9]+$/;
const HASH_MASK = 0x3fffffff;
/** Bits of the filter that spares most runs of a chunk the hash-table lookup. */
const FILTER_BITS = 1 << 16;

const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

/** The probe of a filter's text conditions, or null when it has no ASCII word or prefix to look for. */
export function wordProbeOf(filter: Pick<LogFilter, 'words' | 'prefixes' | 'exact'>): WordProbe | null {
  const words = new Set<string>();
  for (const w of filter.words) if (ASCII_WORD.test(w)) words.add(w);
  // An entry whose value equals the filter's holds the value's words in its text.
  for (const e of filter.exact) for (const w of wordsOf(e.value)) if (ASCII_WORD.test(w)) words.add(w);
  const prefixes = [...new Set(filter.prefixes.filter((p) => ASCII_WORD.test(p)))];
  if (words.size === 0 && prefixes.length === 0) return null;
  return { words: [...words].map(cut), prefixes: prefixes.map(cut) };
}

const cut = (w: string): string => (w.length <= MAX_WORD_LENGTH ? w : w.slice(0, MAX_WORD_LENGTH));

function hashOf(text: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h & HASH_MASK;
}

/** Tests chunks against the probes of a set of filters, one scan per chunk. */
export class ChunkWords {
  /** Hash → the key ("w:" word or "p:" prefix) it stands for, for the probes' terms. */
  private readonly wanted = new Map<number, string[]>();
  private readonly filter = new Uint8Array(FILTER_BITS / 8);
  /** Lengths of the probes' prefixes, ascending: a run's hash is looked up at each. */
  private readonly prefixLengths: number[];

  constructor(probes: Iterable<WordProbe>) {
    const lengths = new Set<number>();
    for (const probe of probes) {
      for (const w of probe.words) this.want(`w:${w}`, hashOf(w));
      for (const p of probe.prefixes) {
        this.want(`p:${p}`, hashOf(p));
        lengths.add(p.length);
      }
    }
    this.prefixLengths = [...lengths].sort((a, b) => a - b);
  }

  /**
   * A test for the chunks of one commit: whether a chunk's rows may hold an
   * entry with every word and prefix of `probe`. Each chunk is scanned once,
   * on its first test.
   */
  forCommit(): (rows: Uint8Array, probe: WordProbe) => boolean {
    const found = new Map<Uint8Array, ReadonlySet<string>>();
    return (rows, probe) => {
      let held = found.get(rows);
      if (!held) {
        held = this.scan(rows);
        found.set(rows, held);
      }
      for (const w of probe.words) if (!held.has(`w:${w}`)) return false;
      for (const p of probe.prefixes) if (!held.has(`p:${p}`)) return false;
      return true;
    };
  }

  private want(key: string, hash: number): void {
    const same = this.wanted.get(hash);
    if (same) {
      if (!same.includes(key)) same.push(key);
    } else this.wanted.set(hash, [key]);
    this.filter[(hash & (FILTER_BITS - 1)) >> 3]! |= 1 << (hash & 7);
  }

  private lookup(hash: number, held: Set<string>, prefix: boolean): void {
    const key = hash & HASH_MASK;
    if ((this.filter[(key & (FILTER_BITS - 1)) >> 3]! & (1 << (key & 7))) === 0) return;
    for (const k of this.wanted.get(key) ?? []) if (k.charCodeAt(0) === (prefix ? 0x70 : 0x77)) held.add(k);
  }

  /** The probes' words and prefixes the rows may hold, in one pass over their bytes. */
  scan(rows: Uint8Array): Set<string> {
    const held = new Set<string>();
    if (this.wanted.size === 0) return held;
    const lengths = this.prefixLengths;
    const shortest = lengths.length > 0 ? lengths[0]! : Number.POSITIVE_INFINITY;
    const longest = lengths.length > 0 ? lengths[lengths.length - 1]! : 0;
    // The hot loop: one table read per byte, the run's hash kept in locals.
    let h = FNV_OFFSET;
    let length = 0;
    const n = rows.length;
    for (let i = 0; i <= n; i++) {
      let c = i < n ? WORD_BYTE[rows[i]!]! : -1;
      let endsAfter = false;
      if (c < 0 && i < n) {
        const b = rows[i]!;
        if (b === 0xe2 && rows[i + 1] === 0x84 && rows[i + 2] === 0xaa) {
          // U+212A KELVIN SIGN: lower-cases to `k`, inside the run.
          i += 2;
          c = 0x6b;
        } else if (b === 0xc4 && rows[i + 1] === 0xb0) {
          // U+0130: `i` and a combining dot; the run ends after the `i`.
          i += 1;
          c = 0x69;
          endsAfter = true;
        } else if (b === BACKSLASH) {
          if (length > 0) this.lookup(h, held, false);
          h = FNV_OFFSET;
          length = 0;
          i = skipEscape(rows, i);
          continue;
        }
      }
      if (c >= 0) {
        // Past MAX_WORD_LENGTH a run's word is cut: later characters change nothing.
        if (length < MAX_WORD_LENGTH) {
          h = Math.imul(h ^ c, FNV_PRIME);
          length += 1;
          if (length >= shortest && length <= longest && lengths.includes(length)) this.lookup(h, held, true);
        }
        if (!endsAfter) continue;
      }
      if (length > 0) this.lookup(h, held, false);
      h = FNV_OFFSET;
      length = 0;
    }
    return held;
  }
}

/** Each byte's lower-case ASCII letter or digit, or -1. */
const WORD_BYTE = new Int16Array(256).map((_, b) => {
  if ((b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39)) return b;
  if (b >= 0x41 && b <= 0x5a) return b + 0x20;
  return -1;
});

/**
 * The index of the last byte of the escape starting at `at` (a backslash of
 * the rows' JSON): `\"` is a quote of the body; `\\` a backslash of the
 * body, which starts the body's own escape: `\\u` and four hex digits, `\\`
 * and one more escaped character (`\\\\`, `\\\"`), or `\\` and one letter.
 */
function skipEscape(rows: Uint8Array, at: number): number {
  const next = rows[at + 1];
  if (next === LETTER_U) return at + 5;
  if (next !== BACKSLASH) return at + 1;
  const body = rows[at + 2];
  if (body === LETTER_U) return at + 6;
  if (body === BACKSLASH) return at + 3;
  return at + 2;
}
