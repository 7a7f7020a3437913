/**
 * The two 32-bit hash lanes logkeep feeds UTF-16 code units into (exact-match
 * terms, search/search-terms.ts; sealed blocks' Bloom filters,
 * storage/log-index/block-filter.ts): lane 1 is FNV-1a, lane 2 multiplies
 * by MurmurHash2's constant; both are finished with MurmurHash3's fmix32 so
 * nearby inputs spread apart. Fixed by the stored format: a block or term
 * written by one version is read by every later one.
 */

export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;
export const LANE2_OFFSET = 0x9747b28c;
export const LANE2_PRIME = 0x5bd1e995;

/** MurmurHash3's finalizer: an unsigned 32-bit result. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
