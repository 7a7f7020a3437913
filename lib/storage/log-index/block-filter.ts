/**
 * The search filter of a sealed block (docs/storage-format.md): Bloom
 * filters, one per compressed frame of the block, split into FILTER_SHARDS
 * shards by term. A term's bits all lie in one shard (chosen by its hash),
 * so a backend keeps each shard of each block as a row of its own keyed
 * (project, shard, block), and a lookup of one term reads one small row
 * per block of the project, never the others; testing it gives the frames
 * that may hold the term, so only those are inflated. The filter is built
 * once, when the block is sealed, from the terms of its entries: its cost
 * grows with the block's distinct terms as a few bit writes each, whether a
 * term occurs in one entry or in all of them.
 *
 * A Bloom filter never misses a term it was built with and rarely claims
 * one it was not (FILTER_BITS_PER_TERM and FILTER_HASHES give about 1 %
 * per frame and term): every candidate entry is still checked against the
 * filter itself, so a false positive costs reading, never a wrong answer.
 *
 * A shard's bytes: `u8 frames, u32 bytes per frame (little endian)`, then
 * each frame's filter. Frames of a shard share one size (the largest any
 * of them needs), so a frame's bits are found by multiplication.
 *
 * Hashes are over UTF-16 code units (core/hash32.ts), fixed by the format:
 * a block written by one version is read by every later one.
 */
import { FNV_OFFSET, FNV_PRIME, fmix32, LANE2_OFFSET, LANE2_PRIME } from '../../core/hash32.js';

/**
 * Shards of every block's filter: a lookup reads 1/64 of a block's filter.
 * With ~2,850 distinct terms per frame, a shard of a full block is ~450 B,
 * small enough to stay inside its B-tree page on SQLite (a row of an index
 * B-tree over ~1 kB spills to an overflow page of its own, which with 16
 * shards of ~1.8 kB cost ~45 B per entry) and inline on PostgreSQL.
 */
export const FILTER_SHARDS = 64;

/** Bits of a term's first hash that pick its shard: log2(FILTER_SHARDS). */
const SHARD_BITS = 6;

/** Bits per distinct term of a frame's shard: with FILTER_HASHES, ~1 % false positives. */
export const FILTER_BITS_PER_TERM = 10;

/** Bit positions set per term (optimal for 10 bits per term is ~6.9). */
export const FILTER_HASHES = 7;

/** Fewest bits of a frame's filter in a shard (a shard with no terms still answers "no"). */
const MIN_FRAME_BITS = 64;

/** Most frames of a block a filter describes (its answers are a 31-bit mask). */
export const FILTER_MAX_FRAMES = 31;

const HEADER_BYTES = 5;

/** Where a term lives in every block's filter: its shard and its two hash lanes. */
export interface TermProbe {
  term: string;
  shard: number;
  h1: number;
  h2: number;
}

/** The probe of a term: computed once per query, used on every block. */
export function termProbe(term: string): TermProbe {
  let a = FNV_OFFSET;
  let b = LANE2_OFFSET;
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, LANE2_PRIME);
  }
  const h1 = fmix32(a);
  // An odd step visits FILTER_HASHES distinct bits of any even-sized filter.
  const h2 = (fmix32(b) | 1) >>> 0;
  return { term, shard: h1 >>> (32 - SHARD_BITS), h1, h2 };
}

/** The shard of a term (0 … FILTER_SHARDS − 1). */
export function termShard(term: string): number {
  return termProbe(term).shard;
}

/** The i-th bit of a probe in a filter of `bits` bits. */
function bitOf(p: TermProbe, i: number, bits: number): number {
  return (((p.h1 + Math.imul(i, p.h2)) >>> 0) % bits) >>> 0;
}

function bytesFor(terms: number): number {
  const bits = Math.max(MIN_FRAME_BITS, Math.ceil(terms * FILTER_BITS_PER_TERM));
  return Math.ceil(bits / 8);
}

/** Hashes a term into `out[at]` (h1) and `out[at + 1]` (h2, odd), as `termProbe` does. */
function hashInto(term: string, out: Uint32Array, at: number): void {
  let a = FNV_OFFSET;
  let b = LANE2_OFFSET;
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, LANE2_PRIME);
  }
  out[at] = fmix32(a);
  out[at + 1] = (fmix32(b) | 1) >>> 0;
}

/**
 * Builds a block's filter from the distinct terms of each of its frames
 * (in frame order; a term repeated within a frame counts once): FILTER_SHARDS
 * shards, each a byte string to store.
 */
export function buildBlockFilter(frames: readonly Iterable<string>[]): Uint8Array[] {
  return buildBlockFilterFromHashes(
    frames.map((terms) => {
      const set = terms instanceof Set ? (terms as Set<string>) : new Set(terms);
      const hashes = new Uint32Array(set.size * 2);
      let at = 0;
      for (const term of set) {
        hashInto(term, hashes, at);
        at += 2;
      }
      return hashes;
    }),
  );
}

/**
 * Builds a block's filter from each frame's distinct terms as hash pairs
 * (`h1, h2, h1, h2, …`, as `termProbe` computes them; term-hashes.ts):
 * no object is made per term (a block has tens of thousands).
 */
export function buildBlockFilterFromHashes(frames: readonly Uint32Array[]): Uint8Array[] {
  if (frames.length === 0 || frames.length > FILTER_MAX_FRAMES) throw new RangeError(`a block filter describes 1 to ${FILTER_MAX_FRAMES} frames`);
  // counts[shard * frames + frame]: distinct terms of the frame in the shard.
  const counts = new Uint32Array(FILTER_SHARDS * frames.length);
  frames.forEach((hashes, f) => {
    for (let at = 0; at < hashes.length; at += 2) counts[(hashes[at]! >>> (32 - SHARD_BITS)) * frames.length + f]! += 1;
  });
  const shards: Uint8Array[] = [];
  const frameBytes: number[] = [];
  for (let shard = 0; shard < FILTER_SHARDS; shard++) {
    let most = 0;
    for (let f = 0; f < frames.length; f++) most = Math.max(most, counts[shard * frames.length + f]!);
    const bytes = bytesFor(most);
    frameBytes.push(bytes);
    const out = new Uint8Array(HEADER_BYTES + bytes * frames.length);
    out[0] = frames.length;
    new DataView(out.buffer).setUint32(1, bytes, true);
    shards.push(out);
  }
  frames.forEach((hashes, f) => {
    for (let at = 0; at < hashes.length; at += 2) {
      const h1 = hashes[at]!;
      const h2 = hashes[at + 1]!;
      const shard = h1 >>> (32 - SHARD_BITS);
      const out = shards[shard]!;
      const bits = frameBytes[shard]! * 8;
      const base = HEADER_BYTES + f * frameBytes[shard]!;
      for (let i = 0; i < FILTER_HASHES; i++) {
        const bit = ((h1 + Math.imul(i, h2)) >>> 0) % bits;
        out[base + (bit >>> 3)]! |= 1 << (bit & 7);
      }
    }
  });
  return shards;
}

/** The frames a shard says may hold the probe's term: bit f set for frame f. */
export function framesMaybeHolding(shard: Uint8Array, probe: TermProbe): number {
  if (shard.length < HEADER_BYTES) throw new RangeError('a filter shard is too short');
  const frames = shard[0]!;
  const frameBytes = new DataView(shard.buffer, shard.byteOffset, shard.byteLength).getUint32(1, true);
  if (frames > FILTER_MAX_FRAMES || frameBytes === 0 || shard.length !== HEADER_BYTES + frames * frameBytes)
    throw new RangeError('a filter shard is malformed');
  const bits = frameBytes * 8;
  let mask = 0;
  for (let f = 0; f < frames; f++) {
    const base = HEADER_BYTES + f * frameBytes;
    let all = true;
    for (let i = 0; i < FILTER_HASHES && all; i++) {
      const bit = bitOf(probe, i, bits);
      all = (shard[base + (bit >>> 3)]! & (1 << (bit & 7))) !== 0;
    }
    if (all) mask |= 1 << f;
  }
  return mask;
}

/** A mask of every frame of a block of `frames` frames. */
export function allFrames(frames: number): number {
  return frames >= 31 ? 0x7fffffff : (1 << frames) - 1;
}
