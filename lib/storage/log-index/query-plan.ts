/**
 * How a log query is answered, the same way on both backends (each
 * supplies the reads below as SQL of its own). The sealed blocks
 * (docs/storage-format.md) are walked through their own reads
 * (sealed-reads.ts) and merged with the tail, which is read as follows:
 * - text conditions (`q`, exact-match filters) or a minimum level: the
 *   tail has no term index, so it is scanned per project in steps, each
 *   entry checked (search/entry-match.ts) until the page is full;
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
import { entryMatcher, hasTextConditions } from '../../search/entry-match.js';
import type { LogFilter } from '../../search/log-filter.js';
import type { LogRow, LogSelection } from '../types-logs.js';
import type { Page } from '../types-org.js';
import { mergeByIds, PageFloor, sealedWalk, tailWalk, type DictionaryCache, type SealedReads } from './sealed-reads.js';

/** A time range holding fewer entries than this is read entry by entry. */
export const RANGE_CAP = 4000;

const NO_UPPER_ID = Number.MAX_SAFE_INTEGER;

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
   * A backend may also drop entries missing an exact-match needle (entry-match.ts `exactNeedle`).
   */
  inRange(projectId: number, filter: LogFilter, beforeId: number, limit: number | null): Promise<LogRow[]>;
  /** Newest first along (project_id, id): entries below `beforeId` passing level and time, at most `limit`, merged over the projects. */
  newest(projectIds: readonly number[], filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]>;
  /** Oldest first: entries above `afterId` passing level and time, at most `limit`, merged over the projects. */
  oldest(projectIds: readonly number[], filter: LogFilter, afterId: number, limit: number): Promise<LogRow[]>;
  /**
   * The sealed blocks (docs/storage-format.md): the reads above see the
   * tail, which has no search index; the blocks are read through these.
   */
  readonly sealed: { reads: SealedReads; cache: DictionaryCache };
}

const MIN_TS = -Number.MAX_SAFE_INTEGER;
const MAX_TS = Number.MAX_SAFE_INTEGER;

/** Newest-first rows of several lists, merged and cut to `limit`. */
export function mergeNewestFirst(lists: readonly LogRow[][], limit: number): LogRow[] {
  if (lists.length === 1) return lists[0]!.slice(0, limit);
  return lists
    .flat()
    .sort((a, b) => b.id - a.id)
    .slice(0, limit);
}

/** Whether the tail must be scanned entry by entry: a text condition or a minimum level. */
function scansTail(filter: LogFilter): boolean {
  return hasTextConditions(filter) || (filter.minLevel !== null && filter.minLevel > 0);
}

/** Newest first below `beforeId`: the tail scanned per project when a condition needs it, (project_id, id) otherwise. */
async function walk(reads: QueryPlanReads, projectIds: readonly number[], filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]> {
  if (!scansTail(filter)) return reads.newest(projectIds, filter, beforeId, limit);
  const { sealed } = reads;
  const test = entryMatcher(filter);
  const lists = await Promise.all(projectIds.map((projectId) => tailWalk(sealed.reads, projectId, 'newest', filter, test, beforeId, limit)));
  return mergeNewestFirst(lists, limit);
}

/**
 * A page of entries, newest first. The tail is read first (as below), then
 * the sealed blocks, and the two merged by id: an entry
 * sealed between the two reads is found in its block, and one seen in both
 * is kept once.
 */
export async function planQuery(reads: QueryPlanReads, selection: LogSelection, page: Page): Promise<LogRow[]> {
  const { sealed } = reads;
  const tail = await planTailQuery(reads, selection, page);
  if (selection.from !== null && selection.to !== null && selection.from > selection.to) return [];
  const beforeId = page.beforeId ?? NO_UPPER_ID;
  // The walks share what they found (the tail's rows first): each stops where no entry of its can make the page.
  const floor = new PageFloor(page.limit);
  for (const row of tail) floor.add(row.id);
  const lists = await Promise.all(
    selection.projectIds.map((projectId) => sealedWalk(sealed.reads, sealed.cache, projectId, 'newest', selection, beforeId, page.limit, floor)),
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
  const { sealed } = reads;
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
  if (!scansTail(selection)) return reads.oldest(projectIds, selection, afterId, limit);
  const { sealed } = reads;
  const test = entryMatcher(selection);
  const lists = await Promise.all(projectIds.map((projectId) => tailWalk(sealed.reads, projectId, 'oldest', selection, test, afterId, limit)));
  return mergeByIds('oldest', lists, limit);
}
