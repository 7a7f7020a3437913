/**
 * Histogram counts from sealed blocks (histogram-plan.ts): the entries of
 * partial minutes counted from the blocks' headers alone (their ts and
 * levels, nothing inflated), and text-filtered counts from the blocks'
 * candidates, checked as queries check them.
 */
import type { LogFilter } from '../../search/log-filter.js';
import { allFrames, framesMaybeHolding } from './block-filter.js';
import { filterProbes, levelMask, sealedCandidates } from './seal-run.js';
import { readSealedHeader, type SealedEntry } from './sealed-block.js';
import { BLOCK_FETCH, boundsOf, MAX_SHARD_ROWS, type DictionaryCache, type SealedBlockRow, type SealedBounds, type SealedReads } from './sealed-reads.js';

/** Every block row of the project passing `bounds`, newest first (rows only: ~100 B each, one per up to 1,024 entries). */
export async function sealedBlocksIn(reads: SealedReads, projectId: number, bounds: SealedBounds): Promise<SealedBlockRow[]> {
  const out: SealedBlockRow[] = [];
  let after: number | null = null;
  for (;;) {
    const rows = await reads.blocks(projectId, 'newest', Number.MAX_SAFE_INTEGER, after, bounds, MAX_SHARD_ROWS);
    out.push(...rows);
    if (rows.length < MAX_SHARD_ROWS) return out;
    after = rows[rows.length - 1]!.lastId;
  }
}

/**
 * Counts per level of the entries of the project's blocks whose ts lies in
 * one of `ranges` (sorted, disjoint), from the blocks' headers alone
 * (nothing inflated): `add(range index, level)` per entry.
 */
export async function countSealedRanges(
  reads: SealedReads,
  projectId: number,
  minLevel: number,
  ranges: readonly { first: number; last: number }[],
  belowId: number,
  add: (range: number, level: number) => void,
): Promise<void> {
  if (ranges.length === 0) return;
  const bounds: SealedBounds = { levelMask: levelMask(minLevel), from: ranges[0]!.first, to: ranges[ranges.length - 1]!.last };
  const rangeOf = (ts: number): number => {
    let lo = 0;
    let hi = ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const r = ranges[mid]!;
      if (ts < r.first) hi = mid - 1;
      else if (ts > r.last) lo = mid + 1;
      else return mid;
    }
    return -1;
  };
  // Blocks overlapping at least one range (by their min/max ts), then their headers.
  const rows = (await sealedBlocksIn(reads, projectId, bounds)).filter((r) => {
    const i = rangeOf(r.minTs);
    if (i >= 0) return true;
    return ranges.some((x) => x.last >= r.minTs && x.first <= r.maxTs);
  });
  for (let i = 0; i < rows.length; i += BLOCK_FETCH) {
    const bytes = await reads.blockBytes(
      projectId,
      rows.slice(i, i + BLOCK_FETCH).map((r) => r.lastId),
    );
    for (const block of bytes.values()) {
      const header = readSealedHeader(block);
      for (let e = 0; e < header.ts.length; e++) {
        if (header.levels[e]! < minLevel || header.ids[e]! >= belowId) continue;
        const r = rangeOf(header.ts[e]!);
        if (r >= 0) add(r, header.levels[e]!);
      }
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * The entries of the project's blocks matching `filter` (its from/to set),
 * each passed to `visit`; stops and answers false once `visit` does.
 */
export async function visitSealedMatches(
  reads: SealedReads,
  cache: DictionaryCache,
  projectId: number,
  filter: LogFilter & { from: number; to: number },
  visit: (entries: readonly SealedEntry[]) => boolean,
): Promise<boolean> {
  const bounds = boundsOf(filter);
  const probes = filterProbes(filter);
  const rows = await sealedBlocksIn(reads, projectId, bounds);
  const shards = [...new Set(probes.map((p) => p.shard))];
  for (let i = 0; i < rows.length; i += BLOCK_FETCH) {
    const part = rows.slice(i, i + BLOCK_FETCH);
    const masks = new Map<number, number>(part.map((r) => [r.lastId, allFrames(r.frames)]));
    if (shards.length > 0) {
      const byBlock = new Map<string, Uint8Array>();
      for (const s of await reads.shardsOf(projectId, shards, [...masks.keys()])) byBlock.set(`${s.blockLastId}:${s.shard}`, s.bits);
      for (const [lastId, mask] of masks) {
        let m = mask;
        for (const p of probes) {
          const bits = byBlock.get(`${lastId}:${p.shard}`);
          if (m !== 0 && bits !== undefined) m &= framesMaybeHolding(bits, p);
        }
        if (m === 0) masks.delete(lastId);
        else masks.set(lastId, m);
      }
    }
    if (masks.size === 0) continue;
    const bytes = await reads.blockBytes(projectId, [...masks.keys()]);
    for (const row of part) {
      const block = bytes.get(row.lastId);
      const mask = masks.get(row.lastId);
      if (block === undefined || mask === undefined) continue;
      const dictionary = await cache.get(projectId, row.dictionaryId, (p, id) => reads.dictionary(p, id));
      if (!visit(sealedCandidates(block, dictionary, mask, filter, { afterId: -1, beforeId: Number.MAX_SAFE_INTEGER }))) return false;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return true;
}
