/**
 * How a log query is answered from indexes, the same way on both backends
 * (each supplies the reads below as SQL of its own):
 * - text conditions (`q`, exact-match filters) or a minimum level: the
 *   block index (log-blocks.ts) names candidate blocks newest first; their
 *   entries are read through (project_id, id) and checked one by one
 *   (search/entry-match.ts) until the page is full;
 * - neither: (project_id, id) newest first, per project, merged;
 * - a time range, per project: count the entries in range through
 *   (project_id, ts), stopping at RANGE_CAP. Few: read exactly those (and
 *   check the other filters on them). Many: the range is not selective, so
 *   walk as above, but starting at the newest id inside the range, not at
 *   the top of the project (a range far in the past would otherwise make
 *   the walk step over everything newer). Projects whose newest entry
 *   (below the page's start) is itself in range have nothing to step over:
 *   they walk together, as one walk over several projects, so a group's
 *   page reads about one page of entries, not one per project.
 * Per-project pages are merged newest first.
 */
import { entryMatcher, type EntryTest } from '../../search/entry-match.js';
import { blockMatchOf, type BlockMatch } from '../../search/log-terms.js';
import type { LogFilter } from '../../search/log-filter.js';
import type { LogRow, LogSelection } from '../types-logs.js';
import type { Page } from '../types-org.js';
import { mergeByIds, sealedWalk, tailWalk, type DictionaryCache, type SealedReads } from './sealed-reads.js';

/** A time range holding fewer entries than this is read entry by entry. */
export const RANGE_CAP = 4000;

const NO_UPPER_ID = Number.MAX_SAFE_INTEGER;

/** A candidate block: its project, its id span, and where a read of blocks continues after it. */
export interface LogBlockRef {
  projectId: number;
  firstId: number;
  lastId: number;
  /** Opaque to the planner: passed back to continue after this block. */
  key: number;
}

/** Entries of one project with firstId ≤ id ≤ lastId. */
export interface LogSpan {
  projectId: number;
  firstId: number;
  lastId: number;
}

/** Which way a block walk goes: newest first below a position, or oldest first above it. */
export type WalkDirection = 'newest' | 'oldest';

/**
 * The spans of a step's blocks on the walk's side of `position` (empty ones
 * left out), for a backend reading a step's entries separately.
 */
export function stepSpans(direction: WalkDirection, blocks: readonly LogBlockRef[], position: number): LogSpan[] {
  const spans: LogSpan[] = [];
  for (const b of blocks) {
    const firstId = direction === 'newest' ? b.firstId : Math.max(b.firstId, position + 1);
    const lastId = direction === 'newest' ? Math.min(b.lastId, position - 1) : b.lastId;
    if (firstId <= lastId) spans.push({ projectId: b.projectId, firstId, lastId });
  }
  return spans;
}

/**
 * Blocks a backend's index lookup found beyond those its step took, kept
 * per walk of one query, so the walk's next steps can take them without
 * another lookup (for a backend whose lookup costs the same whatever its
 * limit). Walks are named by the backend (direction, position, projects,
 * match).
 */
export class BlockLookahead {
  private readonly walks = new Map<string, { after: number | null; blocks: LogBlockRef[]; exhausted: boolean }>();

  /** The next `limit` blocks of `walk` after `after`, if an earlier lookup holds them (null: look up). */
  take(walk: string, after: number | null, limit: number): { blocks: LogBlockRef[]; more: boolean } | null {
    const ahead = this.walks.get(walk);
    if (ahead === undefined || ahead.after !== after || (ahead.blocks.length < limit && !ahead.exhausted)) return null;
    const blocks = ahead.blocks.splice(0, limit);
    if (blocks.length > 0) ahead.after = blocks[blocks.length - 1]!.key;
    return { blocks, more: ahead.blocks.length > 0 || !ahead.exhausted };
  }

  /** Keeps what a lookup of up to `asked` blocks `found` past the `taken` its step reads; returns the step's blocks. */
  keep(walk: string, after: number | null, found: readonly LogBlockRef[], taken: number, asked: number): { blocks: LogBlockRef[]; more: boolean } {
    const blocks = found.slice(0, taken);
    this.walks.set(walk, { after: blocks.length > 0 ? blocks[blocks.length - 1]!.key : after, blocks: found.slice(taken), exhausted: found.length < asked });
    return { blocks, more: found.length > taken || found.length === asked };
  }
}

/** One step of a block walk: its blocks, the entries read from them, and whether blocks may remain past the last one. */
export interface BlockStep {
  blocks: LogBlockRef[];
  rows: LogRow[];
  /** False once the index had fewer blocks than asked for (a step read in parts says so of its last part). */
  more: boolean;
}

export interface QueryPlanReads {
  /** Entries of the project with `from ≤ ts ≤ to`, counted up to `cap`. */
  countInRange(projectId: number, from: number, to: number, cap: number): Promise<number>;
  /** The project's newest entry below `beforeId` (its id and timestamp), or null: one step along (project_id, id). */
  newestEntryTime(projectId: number, beforeId: number): Promise<{ id: number; ts: number } | null>;
  /** The largest id below `beforeId` among the project's entries in range, or null. */
  newestIdInRange(projectId: number, from: number, to: number, beforeId: number): Promise<number | null>;
  /**
   * Newest first: the project's entries in the (small) time range below
   * `beforeId` that pass the level, and at most `limit` of them (null: all).
   * Exact-match needles may be checked too (see `blockEntries`).
   */
  inRange(projectId: number, filter: LogFilter, beforeId: number, limit: number | null): Promise<LogRow[]>;
  /** Newest first along (project_id, id): entries below `beforeId` passing level and time, at most `limit`, merged over the projects. */
  newest(projectIds: readonly number[], filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]>;
  /** Oldest first: entries above `afterId` passing level and time, at most `limit`, merged over the projects. */
  oldest(projectIds: readonly number[], filter: LogFilter, afterId: number, limit: number): Promise<LogRow[]>;
  /**
   * One step of a block walk. Its blocks: those of these projects holding
   * everything `match` asks for, continuing after the block whose key is
   * `after` (null: from the start), at most `limit`; newest first, the
   * blocks with an entry below `position` by descending lastId; oldest
   * first, those with an entry above it by ascending firstId. Its rows: the
   * entries of those blocks on that side of `position` passing level and
   * time, in any order. A backend may also drop entries whose text fails a
   * necessary condition of the text filters (search/entry-match.ts).
   */
  blockStep(
    direction: WalkDirection,
    projectIds: readonly number[],
    match: BlockMatch,
    filter: LogFilter,
    position: number,
    after: number | null,
    limit: number,
  ): Promise<BlockStep>;
  /**
   * Blocks a prefix search asks for at first (default PREFIX_FIRST_BLOCKS):
   * fewer where the backend looks the prefix up once per query, not once
   * per step.
   */
  readonly prefixFirstBlocks?: number;
  /**
   * Set by a backend that seals (docs/storage-format.md): its tail (the
   * rows the reads above see) has no search index, and its sealed blocks
   * are read through these. Absent: the reads above see every entry, and
   * text conditions use `blockStep`.
   */
  readonly sealed?: { reads: SealedReads; cache: DictionaryCache };
}

const MIN_TS = -Number.MAX_SAFE_INTEGER;
const MAX_TS = Number.MAX_SAFE_INTEGER;

/**
 * Blocks asked for at first, and at most at once. A step costs a round trip
 * plus a little per block: 64 saves a step over 32 for a word in about one
 * entry of 64, which answered sooner on both backends
 * (docs/measurements.md, "Queries").
 */
const FIRST_BLOCKS = 2;
const MAX_BLOCKS = 64;

/**
 * A prefix makes every read of the block index cost the same whatever its
 * limit (both backends gather every posting of every term with the prefix
 * before returning the first block), so it starts with a batch of
 * PREFIX_FIRST_BLOCKS (one step fills a page of a mid-frequency prefix).
 */
const PREFIX_FIRST_BLOCKS = 32;

function firstBatch(reads: QueryPlanReads, match: BlockMatch): number {
  return match.prefixes.length > 0 ? (reads.prefixFirstBlocks ?? PREFIX_FIRST_BLOCKS) : FIRST_BLOCKS;
}

/** Newest-first rows of several lists, merged and cut to `limit`. */
export function mergeNewestFirst(lists: readonly LogRow[][], limit: number): LogRow[] {
  if (lists.length === 1) return lists[0]!.slice(0, limit);
  return lists
    .flat()
    .sort((a, b) => b.id - a.id)
    .slice(0, limit);
}

/**
 * Adds a step's rows passing `test` (all when null) to `found`, in walk
 * order, and stops at the first row that `limit` matches already precede:
 * no later row can make the page, so none of them is parsed.
 */
function keepStep(direction: WalkDirection, rows: readonly LogRow[], test: EntryTest | null, found: Map<number, LogRow>, limit: number): void {
  const walkOrder = direction === 'newest' ? (a: number, b: number) => b - a : (a: number, b: number) => a - b;
  const earlier = [...found.keys()].sort(walkOrder);
  const sorted = [...rows].sort((a, b) => walkOrder(a.id, b.id));
  let preceding = 0;
  let added = 0;
  for (const row of sorted) {
    while (preceding < earlier.length && walkOrder(earlier[preceding]!, row.id) < 0) preceding += 1;
    if (preceding + added >= limit) break;
    if (found.has(row.id) || (test !== null && !test(row.body))) continue;
    found.set(row.id, row);
    added += 1;
  }
}

/**
 * How many blocks to ask for next: enough for the missing matches at the
 * hit rate seen so far (with a margin), doubling while nothing matched.
 */
function nextBatch(previous: number, blocksRead: number, matches: number, missing: number): number {
  if (matches === 0) return Math.min(previous * 2, MAX_BLOCKS);
  return Math.max(1, Math.min(MAX_BLOCKS, Math.ceil((1.5 * missing * blocksRead) / matches)));
}

/**
 * Pages through the block index in one direction. Blocks come ordered by
 * their `edge` (lastId newest first, firstId oldest first), so once
 * `limit` matches are known, every block past the edge of the last one
 * read lies beyond the limit-th match and cannot change the page.
 */
async function blockWalk(
  direction: WalkDirection,
  reads: QueryPlanReads,
  projectIds: readonly number[],
  filter: LogFilter,
  match: BlockMatch,
  position: number,
  limit: number,
): Promise<LogRow[]> {
  const newest = direction === 'newest';
  const test = entryMatcher(filter);
  const found = new Map<number, LogRow>();
  const ordered = () => [...found.values()].sort(newest ? (a, b) => b.id - a.id : (a, b) => a.id - b.id);
  let after: number | null = null;
  let frontier: number | null = null;
  let blocksRead = 0;
  for (let size = firstBatch(reads, match); ; ) {
    if (found.size >= limit && frontier !== null) {
      const kth = ordered()[limit - 1]!.id;
      if (newest ? kth > frontier : kth < frontier) break;
    }
    const { blocks, rows, more } = await reads.blockStep(direction, projectIds, match, filter, position, after, size);
    if (blocks.length === 0) break;
    keepStep(direction, rows, test, found, limit);
    blocksRead += blocks.length;
    if (!more) break;
    const last: LogBlockRef = blocks[blocks.length - 1]!;
    after = last.key;
    frontier = newest ? last.lastId : last.firstId;
    size = nextBatch(size, blocksRead, found.size, limit - found.size);
  }
  return ordered().slice(0, limit);
}

/**
 * Newest first below `beforeId`: the block index when it serves a
 * condition (a sealing backend's tail: scanned per project), (project_id,
 * id) otherwise.
 */
async function walk(reads: QueryPlanReads, projectIds: readonly number[], filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]> {
  const match = blockMatchOf(filter, projectIds);
  if (match === null) return reads.newest(projectIds, filter, beforeId, limit);
  const sealed = reads.sealed;
  if (sealed !== undefined) {
    const test = entryMatcher(filter);
    const lists = await Promise.all(projectIds.map((projectId) => tailWalk(sealed.reads, projectId, 'newest', filter, test, beforeId, limit)));
    return mergeNewestFirst(lists, limit);
  }
  return blockWalk('newest', reads, projectIds, filter, match, beforeId, limit);
}

/**
 * A page of entries, newest first. A sealing backend's tail is read first
 * (as below), then its sealed blocks, and the two merged by id: an entry
 * sealed between the two reads is found in its block, and one seen in both
 * is kept once.
 */
export async function planQuery(reads: QueryPlanReads, selection: LogSelection, page: Page): Promise<LogRow[]> {
  const sealed = reads.sealed;
  const tail = await planTailQuery(reads, selection, page);
  if (sealed === undefined) return tail;
  if (selection.from !== null && selection.to !== null && selection.from > selection.to) return [];
  const beforeId = page.beforeId ?? NO_UPPER_ID;
  const lists = await Promise.all(
    selection.projectIds.map((projectId) => sealedWalk(sealed.reads, sealed.cache, projectId, 'newest', selection, beforeId, page.limit)),
  );
  return mergeByIds('newest', [tail, ...lists], page.limit);
}

async function planTailQuery(reads: QueryPlanReads, selection: LogSelection, page: Page): Promise<LogRow[]> {
  const beforeId = page.beforeId ?? NO_UPPER_ID;
  if (selection.from === null && selection.to === null) return walk(reads, selection.projectIds, selection, beforeId, page.limit);
  if (selection.from !== null && selection.to !== null && selection.from > selection.to) return [];
  const from = selection.from ?? MIN_TS;
  const to = selection.to ?? MAX_TS;
  const test = entryMatcher(selection);
  // Projects whose range is not selective and reaches up to their newest
  // entry below beforeId (no upper bound, or none of theirs above it) all
  // walk from beforeId: together, as one walk.
  const openEnded: number[] = [];
  const lists = await Promise.all(
    selection.projectIds.map(async (projectId) => {
      if ((await reads.countInRange(projectId, from, to, RANGE_CAP)) < RANGE_CAP) {
        if (test === null) return reads.inRange(projectId, selection, beforeId, page.limit);
        const rows = await reads.inRange(projectId, selection, beforeId, null);
        return rows.filter((r) => test(r.body)).slice(0, page.limit);
      }
      if (selection.to === null) {
        openEnded.push(projectId);
        return [];
      }
      // The newest entry in range: then none of the project's lies between the range and beforeId.
      const top = await reads.newestEntryTime(projectId, beforeId);
      if (top === null) return [];
      if (top.ts >= from && top.ts <= to) {
        openEnded.push(projectId);
        return [];
      }
      // Else finding the newest in range reads the range's part of (project_id, ts).
      const newest = await reads.newestIdInRange(projectId, from, to, beforeId);
      if (newest === null) return [];
      return walk(reads, [projectId], selection, newest + 1, page.limit);
    }),
  );
  // A walk per project would read a whole page from each (a group of ten: ten pages) to keep one.
  if (openEnded.length > 0)
    lists.push(
      await walk(
        reads,
        openEnded.sort((a, b) => a - b),
        selection,
        beforeId,
        page.limit,
      ),
    );
  return mergeNewestFirst(lists, page.limit);
}

/**
 * Entries above `afterId`, oldest first, at most `limit` (stream catch-up).
 * With a lower time bound, projects holding no entry in the range at all
 * are left out first (one probe of (project_id, ts) each): a stream
 * following a range whose entries have not arrived yet would otherwise walk
 * everything after its position only to find nothing.
 */
export async function planLogsAfter(reads: QueryPlanReads, selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> {
  if (selection.from !== null && selection.to !== null && selection.from > selection.to) return [];
  const sealed = reads.sealed;
  if (sealed === undefined) return tailLogsAfter(reads, selection, afterId, limit);
  // Every id up to the horizon is committed before the tail is read: each
  // is then in the tail or in a block (moved between the reads or not), so
  // the answer, cut there, is a gapless run from afterId.
  const horizon = await sealed.reads.horizon(selection.projectIds);
  const tail = await tailLogsAfter(reads, selection, afterId, limit);
  const lists = await Promise.all(
    selection.projectIds.map((projectId) => sealedWalk(sealed.reads, sealed.cache, projectId, 'oldest', selection, afterId, limit)),
  );
  return mergeByIds(
    'oldest',
    [tail, ...lists].map((rows) => rows.filter((r) => r.id <= horizon)),
    limit,
  );
}

async function tailLogsAfter(reads: QueryPlanReads, selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> {
  let projectIds = selection.projectIds;
  if (selection.from !== null) {
    const { from, to } = selection;
    const held = await Promise.all(projectIds.map((projectId) => reads.countInRange(projectId, from, to ?? MAX_TS, 1)));
    projectIds = projectIds.filter((_, i) => held[i]! > 0);
    if (projectIds.length === 0) return [];
  }
  const match = blockMatchOf(selection, projectIds);
  if (match === null) return reads.oldest(projectIds, selection, afterId, limit);
  const sealed = reads.sealed;
  if (sealed !== undefined) {
    const test = entryMatcher(selection);
    const lists = await Promise.all(projectIds.map((projectId) => tailWalk(sealed.reads, projectId, 'oldest', selection, test, afterId, limit)));
    return mergeByIds('oldest', lists, limit);
  }
  return blockWalk('oldest', reads, projectIds, selection, match, afterId, limit);
}
