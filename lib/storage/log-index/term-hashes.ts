/**
 * A frame's filter terms as the hash pairs the filter is built from
 * (block-filter.ts), computed without making a string per term. Sealing
 * used to build each word, prefix term and exact term as a string, keep
 * them in a Set per frame and hash them afterwards: most of a seal's CPU,
 * and sealing is what bounds sustained ingestion. Here a word is hashed
 * while it is scanned, its prefix terms from the same scan, and exact terms
 * from the hashes their strings are spelled from; a frame keeps the
 * distinct pairs in an open-addressing table.
 *
 * The pairs are exactly those `termProbe` gives for the strings
 * `addSealedTerms` (sealed-terms.ts) makes, so a block's filter has the same
 * bytes either way (test/unit/term-hashes.test.ts checks it on hard texts).
 * Two distinct terms with the same pair count once here; they set the same
 * bits anyway, so only a shard's size could differ, never an answer.
 */
import { FNV_OFFSET, FNV_PRIME, fmix32, LANE2_OFFSET, LANE2_PRIME } from '../../core/hash32.js';
import { addWords, EXACT_TERM_MARK, MAX_WORD_LENGTH, sealingTermParts } from '../../search/search-terms.js';
import { PREFIX_TERM_LENGTHS, prefixTerm, PREFIX_TERM_MARK, SHORT_VALUE_MAX } from './sealed-terms.js';

/** The distinct term hash pairs of one frame. */
export class FrameTermHashes {
  /** `pairs[2i]`, `pairs[2i + 1]`: term i's two hashes (h1, h2 as `termProbe` gives them). */
  pairs = new Uint32Array(2 * 1024);
  size = 0;
  /** Open addressing: slot → term index + 1 (0: empty). */
  private slots = new Int32Array(4096);

  /** Adds a pair; false when the frame has it already. */
  add(h1: number, h2: number): boolean {
    const mask = this.slots.length - 1;
    for (let s = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask; ; s = (s + 1) & mask) {
      const at = this.slots[s]!;
      if (at === 0) {
        if (2 * (this.size + 1) > this.slots.length) {
          this.grow();
          return this.add(h1, h2);
        }
        if (2 * this.size === this.pairs.length) {
          const bigger = new Uint32Array(this.pairs.length * 2);
          bigger.set(this.pairs);
          this.pairs = bigger;
        }
        this.pairs[2 * this.size] = h1;
        this.pairs[2 * this.size + 1] = h2;
        this.size += 1;
        this.slots[s] = this.size;
        return true;
      }
      if (this.pairs[2 * (at - 1)] === h1 && this.pairs[2 * (at - 1) + 1] === h2) return false;
    }
  }

  /** The pairs, `2 × size` numbers. */
  done(): Uint32Array {
    return this.pairs.subarray(0, 2 * this.size);
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let i = 0; i < this.size; i++) {
      let s = (this.pairs[2 * i]! ^ Math.imul(this.pairs[2 * i + 1]!, 0x9e3779b1)) & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = i + 1;
    }
    this.slots = slots;
  }
}

const A_UPPER = 0x41;
const Z_UPPER = 0x5a;
const A_LOWER = 0x61;
const Z_LOWER = 0x7a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** The lanes after feeding a string's code units from the start values (what `termProbe` begins with). */
function lanesAfter(text: string): [number, number] {
  let a = FNV_OFFSET;
  let b = LANE2_OFFSET;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, LANE2_PRIME);
  }
  return [a, b];
}

const [PREFIX_A, PREFIX_B] = lanesAfter(PREFIX_TERM_MARK);
const [EXACT_A, EXACT_B] = lanesAfter(EXACT_TERM_MARK);
const [SHORT_PREFIX, LONG_PREFIX] = PREFIX_TERM_LENGTHS;

/** Adds a term given as a string (the rare paths: non-ASCII words and their prefixes). */
function addString(term: string, into: FrameTermHashes): boolean {
  const [a, b] = lanesAfter(term);
  return into.add(fmix32(a), (fmix32(b) | 1) >>> 0);
}

/** A word given as a string, and its prefix terms when it is new to the frame (as sealed-terms.ts `addWord`). */
function addWordString(word: string, into: FrameTermHashes): void {
  if (!addString(word, into)) return;
  for (const length of PREFIX_TERM_LENGTHS) {
    const p = prefixTerm(word, length);
    if (p !== null) addString(p, into);
  }
}

/**
 * The words of an ASCII text, scanned once: runs of letters and digits,
 * lower-cased, cut at MAX_WORD_LENGTH (the rest of a longer run is no
 * word), each hashed as it is read, with the prefix terms of its first
 * two and three characters.
 */
function addAsciiWords(text: string, into: FrameTermHashes): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    const isWord = (c >= A_LOWER && c <= Z_LOWER) || (c >= DIGIT_0 && c <= DIGIT_9) || (c >= A_UPPER && c <= Z_UPPER);
    if (!isWord) {
      i += 1;
      continue;
    }
    let a = FNV_OFFSET;
    let b = LANE2_OFFSET;
    let pa = PREFIX_A;
    let pb = PREFIX_B;
    let shortA = 0;
    let shortB = 0;
    let longA = 0;
    let longB = 0;
    let length = 0;
    for (; i < n; i++) {
      c = text.charCodeAt(i);
      if (c >= A_UPPER && c <= Z_UPPER) c |= 0x20;
      else if (!((c >= A_LOWER && c <= Z_LOWER) || (c >= DIGIT_0 && c <= DIGIT_9))) break;
      if (length === MAX_WORD_LENGTH) continue;
      length += 1;
      a = Math.imul(a ^ c, FNV_PRIME);
      b = Math.imul(b ^ c, LANE2_PRIME);
      if (length <= LONG_PREFIX!) {
        pa = Math.imul(pa ^ c, FNV_PRIME);
        pb = Math.imul(pb ^ c, LANE2_PRIME);
        if (length === SHORT_PREFIX) {
          shortA = pa;
          shortB = pb;
        } else if (length === LONG_PREFIX) {
          longA = pa;
          longB = pb;
        }
      }
    }
    if (!into.add(fmix32(a), (fmix32(b) | 1) >>> 0)) continue;
    if (length >= SHORT_PREFIX!) into.add(fmix32(shortA), (fmix32(shortB) | 1) >>> 0);
    if (length >= LONG_PREFIX!) into.add(fmix32(longA), (fmix32(longB) | 1) >>> 0);
  }
}

/** Two base-32 digits of 10 bits, as exact terms spell them (`0`–`9`, `a`–`v`), fed into a lane. */
function feedDigitPair(h: number, prime: number, bits: number): number {
  const hi = bits >>> 5;
  const lo = bits & 31;
  h = Math.imul(h ^ (hi < 10 ? DIGIT_0 + hi : A_LOWER - 10 + hi), prime);
  return Math.imul(h ^ (lo < 10 ? DIGIT_0 + lo : A_LOWER - 10 + lo), prime);
}

/** One lane of an exact term's string (`exactTermOfHashes(x, y)`), from the mark's state. */
function exactLane(h: number, prime: number, x: number, y: number): number {
  h = feedDigitPair(h, prime, x >>> 22);
  h = feedDigitPair(h, prime, (x >>> 12) & 1023);
  h = feedDigitPair(h, prime, (x >>> 2) & 1023);
  h = feedDigitPair(h, prime, y >>> 22);
  h = feedDigitPair(h, prime, (y >>> 12) & 1023);
  return feedDigitPair(h, prime, (y >>> 2) & 1023);
}

/**
 * Adds one entry's filter terms (the parsed object as stored) to a frame:
 * the same terms as sealed-terms.ts `addSealedTerms`, as hash pairs.
 */
export function addEntryTermHashes(entry: Record<string, unknown>, into: FrameTermHashes): void {
  const texts: string[] = [];
  sealingTermParts(entry, SHORT_VALUE_MAX, texts, (x, y) => {
    into.add(fmix32(exactLane(EXACT_A, FNV_PRIME, x, y)), (fmix32(exactLane(EXACT_B, LANE2_PRIME, x, y)) | 1) >>> 0);
  });
  const sink = { add: (word: string) => addWordString(word, into) };
  for (const text of texts) {
    if (ASCII_ONLY.test(text)) addAsciiWords(text, into);
    else addWords(text, sink);
  }
}
