/**
 * Reading sealed blocks (docs/storage-format.md, "Reading"), the same way
 * on both backends. A backend that seals supplies `SealedReads` (a few
 * plain statements over `log_sealed`, `log_filter_shards`,
 * `log_dictionaries` and its tail); this module walks them:
 * - a filter with terms (`q` words and prefixes, exact filters) follows
 *   its leading probe's shard newest (or oldest) first, one short row per
 *   block; only blocks whose shard rows may hold every probe, whose levels
 *   and times fit, are fetched, and only their masked frames inflated;
 * - a filter without terms walks the blocks' rows in id order, the levels
 *   and times tested in SQL;
 * - every candidate is checked against the filter itself
 *   (`sealedCandidates`), so the answer is exact.
 * The tail (rows not sealed yet) is read by `query-plan.ts` before the
 * blocks, and the two are merged by id: an entry sealed between the two
 * reads is then found in its block, and one read in both places is kept
 * once.
 */
import type { LogFilter } from '../../search/log-filter.js';
import type { LogRow } from '../types-logs.js';
import { allFrames, framesMaybeHolding, type TermProbe } from './block-filter.js';
import { filterProbes, levelMask, sealedCandidates } from './seal-run.js';
import type { SealDictionary, SealedEntry } from './sealed-block.js';
import { PREFIX_TERM_MARK } from './sealed-terms.js';
import { readSealedHeader } from './sealed-block.js';
import { EXACT_TERM_MARK } from '../../search/search-terms.js';

/** Which way a walk goes: newest first below a position, or oldest first above it. */
export type SealedDirection = 'newest' | 'oldest';

/** The columns of a `log_sealed` row a reader needs (not the block's bytes). */
export interface SealedBlockRow {
  projectId: number;
  lastId: number;
  firstId: number;
  entries: number;
  minTs: number;
  maxTs: number;
  levels: number;
  frames: number;
  dictionaryId: number;
}

/** One block's row of one filter shard. */
export interface ShardRow {
  blockLastId: number;
  shard: number;
  bits: Uint8Array;
}

/** Level and time bounds of a block walk, as SQL tests them on `log_sealed` rows. */
export interface SealedBounds {
  /** Bit mask of wanted levels (`levelMask`): a block is read only if `levels & mask` ≠ 0. */
  levelMask: number;
  /** A block is read only if `max_ts ≥ from` and `min_ts ≤ to`. */
  from: number;
  to: number;
}

/**
 * What a backend that seals supplies: plain reads, one statement each. In
 * every read, "on the walk's side of `position`" means: newest first, the
 * blocks holding an id below `position` (first_id < position), by
 * descending last_id; oldest first, those holding an id above it
 * (last_id > position), by ascending last_id. `after`, when not null, is
 * the last_id of the last block an earlier step returned: the read
 * continues past it.
 */
export interface SealedReads {
  /** At most `limit` block rows of the project on the walk's side of `position` that pass `bounds`. */
  blocks(projectId: number, direction: SealedDirection, position: number, after: number | null, bounds: SealedBounds, limit: number): Promise<SealedBlockRow[]>;
  /** At most `limit` rows of one shard of the project's blocks on the walk's side of `position` (no level or time test). */
  shardWalk(projectId: number, shard: number, direction: SealedDirection, position: number, after: number | null, limit: number): Promise<ShardRow[]>;
  /** The rows of these shards of these blocks of the project (any order; a missing one is treated as a damaged block). */
  shardsOf(projectId: number, shards: readonly number[], blockLastIds: readonly number[]): Promise<ShardRow[]>;
  /** The `log_sealed` rows of these blocks of the project (any order; blocks gone since are left out). */
  blockRows(projectId: number, lastIds: readonly number[]): Promise<SealedBlockRow[]>;
  /** The bytes of these blocks of the project, by last_id (blocks gone since are left out). */
  blockBytes(projectId: number, lastIds: readonly number[]): Promise<Map<number, Uint8Array>>;
  /**
   * Optional, for a backend where moving a block costs more than reading a
   * few of its frames (PostgreSQL): as `blockBytes`, but each buffer, as
   * long as the block, need only hold its header and the frames of its
   * `frames` mask (the rest may be zeros: never inflated).
   */
  blockFrames?(projectId: number, wants: readonly { lastId: number; frames: number }[]): Promise<Map<number, Uint8Array>>;
  /** A dictionary's bytes, or null when missing (the block then fails to decode: never misread). */
  dictionary(projectId: number, id: number): Promise<Uint8Array | null>;
  /**
   * The largest id such that every entry of these projects with an id up
   * to it is committed (SQLite: the last id handed out, ids following
   * commit order). Oldest-first reads stop there so a stream never steps
   * past an entry still to be committed below it.
   */
  horizon(projectIds: readonly number[]): Promise<number>;
  /**
   * The tail, scanned without a search index: at most `limit` tail rows of
   * the project on the walk's side of `position` (ids below it newest
   * first, above it oldest first), of which those passing level, time and
   * (optionally) necessary text tests come back in `rows`; `edge` is the
   * last id scanned (continue past it), null when the tail held no more.
   */
  tailScan(projectId: number, direction: SealedDirection, filter: LogFilter, position: number, limit: number): Promise<{ rows: LogRow[]; edge: number | null }>;
}

// ---- dictionaries ----------------------------------------------------------------------

/** Dictionaries a reader keeps in memory, at most: a project has one per ~1M entries sealed. */
export const MAX_CACHED_DICTIONARIES = 256;
/** Bytes of dictionaries a reader keeps in memory, at most (256 of 32 KiB). */
export const MAX_CACHED_DICTIONARY_BYTES = 8 * 1024 * 1024;

/** A least-recently-used cache of dictionaries, per storage instance, bounded by count and bytes. */
export class DictionaryCache {
  private readonly entries = new Map<string, Uint8Array>();
  private bytes = 0;

  async get(projectId: number, id: number, load: (projectId: number, id: number) => Promise<Uint8Array | null>): Promise<SealDictionary | null> {
    if (id === 0) return null;
    const key = `${projectId}:${id}`;
    let bytes = this.entries.get(key);
    if (bytes !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, bytes);
      return { id, bytes };
    }
    const loaded = await load(projectId, id);
    if (loaded === null) return null;
    bytes = loaded;
    this.entries.set(key, bytes);
    this.bytes += bytes.length;
    for (const [k, v] of this.entries) {
      if (this.entries.size <= MAX_CACHED_DICTIONARIES && this.bytes <= MAX_CACHED_DICTIONARY_BYTES) break;
      this.entries.delete(k);
      this.bytes -= v.length;
    }
    return { id, bytes };
  }

  /** Forgets a project's dictionary (retention deleted it). */
  forget(projectId: number, id: number): void {
    const key = `${projectId}:${id}`;
    const v = this.entries.get(key);
    if (v === undefined) return;
    this.entries.delete(key);
    this.bytes -= v.length;
  }
}

// ---- walks -----------------------------------------------------------------------------

/** Shard rows asked for at first and at most per step: a row is ~450 B, a block holds up to 1,024 entries. */
const FIRST_SHARD_ROWS = 16;
export const MAX_SHARD_ROWS = 256;
/** Block rows asked for at first and at most per step of a walk without terms. */
const FIRST_BLOCKS = 2;
const MAX_BLOCKS = 32;
/** Blocks fetched (bytes) per statement. */
export const BLOCK_FETCH = 8;
/** Tail rows scanned at first and at most per step. */
const FIRST_TAIL_ROWS = 256;
const MAX_TAIL_ROWS = 4096;

/** The probe a shard walk follows: an exact term, else the longest word, else a prefix term (the likeliest to be rare). */
export function leadingProbe(probes: readonly TermProbe[]): TermProbe {
  const rank = (p: TermProbe): number => {
    if (p.term.startsWith(PREFIX_TERM_MARK)) return p.term.length;
    if (p.term.startsWith(EXACT_TERM_MARK)) return 1e9;
    return 1e6 + p.term.length;
  };
  return probes.reduce((best, p) => (rank(p) > rank(best) ? p : best));
}

export function boundsOf(filter: LogFilter): SealedBounds {
  return { levelMask: levelMask(filter.minLevel), from: filter.from ?? -Number.MAX_SAFE_INTEGER, to: filter.to ?? Number.MAX_SAFE_INTEGER };
}

function fits(row: SealedBlockRow, bounds: SealedBounds): boolean {
  return (row.levels & bounds.levelMask) !== 0 && row.maxTs >= bounds.from && row.minTs <= bounds.to;
}

function toRow(projectId: number, e: SealedEntry): LogRow {
  return { id: e.id, projectId, receivedAt: e.receivedAt, body: e.body };
}

/**
 * The smallest id a newest-first page can still take, shared by the walks of one page (a group's projects, the tail):
 * once `limit` distinct ids are found, an entry at or below the `limit`-th largest cannot make the page, so a walk
 * stops at a block whose ids all lie there. Without it a group of ten projects read a full page from each to keep one.
 */
export class PageFloor {
  /** The largest distinct ids found, descending, at most `limit`. */
  private readonly top: number[] = [];

  constructor(private readonly limit: number) {}

  /** -1 while fewer than `limit` ids are known. */
  get value(): number {
    return this.top.length < this.limit ? -1 : this.top[this.limit - 1]!;
  }

  add(id: number): void {
    const top = this.top;
    if (top.length >= this.limit && id <= top[top.length - 1]!) return;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (top[mid]! > id) lo = mid + 1;
      else hi = mid;
    }
    if (top[lo] === id) return;
    top.splice(lo, 0, id);
    if (top.length > this.limit) top.pop();
  }
}

/** A walk's reading of candidate blocks: their entries matching the filter, in walk order. */
async function readBlocks(
  reads: SealedReads,
  cache: DictionaryCache,
  projectId: number,
  direction: SealedDirection,
  blocks: readonly { row: SealedBlockRow; mask: number }[],
  filter: LogFilter,
  position: number,
  limit: number,
  out: LogRow[],
  floor: PageFloor | null,
): Promise<void> {
  const bounds = direction === 'newest' ? { afterId: -1, beforeId: position } : { afterId: position, beforeId: Number.MAX_SAFE_INTEGER };
  for (let i = 0; i < blocks.length && out.length < limit; i += BLOCK_FETCH) {
    // Newest first, blocks come by descending last id: past the floor, none can make the page.
    const part = blocks.slice(i, i + BLOCK_FETCH).filter((b) => floor === null || b.row.lastId > floor.value);
    if (part.length === 0) break;
    // Reading parts of blocks pays only when some frames are left out (it takes more statements).
    const bytes =
      reads.blockFrames && part.some((b) => b.mask !== allFrames(b.row.frames))
        ? await reads.blockFrames(
            projectId,
            part.map((b) => ({ lastId: b.row.lastId, frames: b.mask })),
          )
        : await reads.blockBytes(
            projectId,
            part.map((b) => b.row.lastId),
          );
    for (const { row, mask } of part) {
      if (out.length >= limit) break;
      const block = bytes.get(row.lastId);
      if (block === undefined) continue;
      const dictionary = await cache.get(projectId, row.dictionaryId, (p, id) => reads.dictionary(p, id));
      // Frame by frame in walk order, so a page inflates only the frames it needs.
      const header = readSealedHeader(block);
      const frames = header.frames.length;
      for (let k = 0; k < frames && out.length < limit; k++) {
        const f = direction === 'newest' ? frames - 1 - k : k;
        if ((mask & (1 << f)) === 0) continue;
        const found = sealedCandidates(block, dictionary, 1 << f, filter, bounds, header);
        if (direction === 'oldest') found.reverse();
        for (const e of found) {
          out.push(toRow(projectId, e));
          floor?.add(e.id);
        }
      }
      // Between blocks, other work gets its turn.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

/**
 * The first `limit` entries of one project's sealed blocks matching
 * `filter`, on the walk's side of `position`, in walk order (newest first:
 * descending ids; oldest first: ascending). Newest first, with `floor`
 * (shared by the page's walks): only those above it, which it learns of.
 */
export async function sealedWalk(
  reads: SealedReads,
  cache: DictionaryCache,
  projectId: number,
  direction: SealedDirection,
  filter: LogFilter,
  position: number,
  limit: number,
  floor: PageFloor | null = null,
): Promise<LogRow[]> {
  if (direction === 'oldest') floor = null;
  const out: LogRow[] = [];
  const bounds = boundsOf(filter);
  const probes = filterProbes(filter);
  let after: number | null = null;
  if (probes.length === 0) {
    for (let size = FIRST_BLOCKS; out.length < limit; size = Math.min(size * 2, MAX_BLOCKS)) {
      const rows = await reads.blocks(projectId, direction, position, after, bounds, size);
      if (rows.length === 0) break;
      await readBlocks(
        reads,
        cache,
        projectId,
        direction,
        rows.map((row) => ({ row, mask: allFrames(row.frames) })),
        filter,
        position,
        limit,
        out,
        floor,
      );
      if (rows.length < size) break;
      after = rows[rows.length - 1]!.lastId;
      if (floor !== null && after <= floor.value) break;
    }
    return out.slice(0, limit);
  }
  const lead = leadingProbe(probes);
  const others = [...new Set(probes.filter((p) => p.shard !== lead.shard).map((p) => p.shard))].sort((a, b) => a - b);
  for (let size = FIRST_SHARD_ROWS; out.length < limit; size = Math.min(size * 2, MAX_SHARD_ROWS)) {
    const leading = await reads.shardWalk(projectId, lead.shard, direction, position, after, size);
    if (leading.length === 0) break;
    after = leading[leading.length - 1]!.blockLastId;
    const stop = floor === null ? -1 : floor.value;
    // Masks from the leading shard (every probe in it), then the other shards.
    const masks = new Map<number, number>();
    for (const s of leading) {
      if (s.blockLastId <= stop) continue;
      let mask = framesMaybeHolding(s.bits, lead);
      for (const p of probes) if (mask !== 0 && p !== lead && p.shard === lead.shard) mask &= framesMaybeHolding(s.bits, p);
      if (mask !== 0) masks.set(s.blockLastId, mask);
    }
    if (masks.size > 0 && others.length > 0) {
      const byBlock = new Map<number, Map<number, Uint8Array>>();
      for (const s of await reads.shardsOf(projectId, others, [...masks.keys()])) {
        let m = byBlock.get(s.blockLastId);
        if (m === undefined) byBlock.set(s.blockLastId, (m = new Map()));
        m.set(s.shard, s.bits);
      }
      for (const [lastId, mask] of masks) {
        // A shard row missing (never, short of damage) narrows nothing: the block is read and checked.
        const shards = byBlock.get(lastId) ?? new Map<number, Uint8Array>();
        let narrowed = mask;
        for (const p of probes) {
          const bits = shards.get(p.shard);
          if (narrowed !== 0 && p.shard !== lead.shard && bits !== undefined) narrowed &= framesMaybeHolding(bits, p);
        }
        if (narrowed === 0) masks.delete(lastId);
        else masks.set(lastId, narrowed);
      }
    }
    if (masks.size > 0) {
      const rows = (await reads.blockRows(projectId, [...masks.keys()])).filter((r) => fits(r, bounds));
      rows.sort(direction === 'newest' ? (a, b) => b.lastId - a.lastId : (a, b) => a.lastId - b.lastId);
      await readBlocks(
        reads,
        cache,
        projectId,
        direction,
        rows.map((row) => ({ row, mask: masks.get(row.lastId)! })),
        filter,
        position,
        limit,
        out,
        floor,
      );
    }
    if (leading.length < size || (floor !== null && after <= floor.value)) break;
  }
  return out.slice(0, limit);
}

/**
 * The first `limit` tail rows of one project passing `test` (all when
 * null), on the walk's side of `position`, in walk order, scanned in
 * growing steps.
 */
export async function tailWalk(
  reads: SealedReads,
  projectId: number,
  direction: SealedDirection,
  filter: LogFilter,
  test: ((body: string) => boolean) | null,
  position: number,
  limit: number,
): Promise<LogRow[]> {
  const out: LogRow[] = [];
  let at = position;
  for (let size = FIRST_TAIL_ROWS; out.length < limit; size = Math.min(size * 2, MAX_TAIL_ROWS)) {
    const { rows, edge } = await reads.tailScan(projectId, direction, filter, at, size);
    const ordered = rows.sort(direction === 'newest' ? (a, b) => b.id - a.id : (a, b) => a.id - b.id);
    for (const r of ordered) if (test === null || test(r.body)) out.push(r);
    if (edge === null) break;
    at = edge;
  }
  return out.slice(0, limit);
}

/** Rows of several sources, in walk order, each id once, cut to `limit`. */
export function mergeByIds(direction: SealedDirection, lists: readonly LogRow[][], limit: number): LogRow[] {
  const seen = new Map<number, LogRow>();
  for (const list of lists) for (const r of list) if (!seen.has(r.id)) seen.set(r.id, r);
  return [...seen.values()].sort(direction === 'newest' ? (a, b) => b.id - a.id : (a, b) => a.id - b.id).slice(0, limit);
}
