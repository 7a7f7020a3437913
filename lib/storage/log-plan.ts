/**
 * How a log query is answered from indexes, the same way on both backends
 * (each supplies the four reads below as SQL of its own):
 * - no time range: one newest-first index walk over the projects (`walk`):
 *   the search index when there are terms, (project_id, id) or
 *   (project_id, level, id) otherwise;
 * - a time range, per project: count the entries in range through
 *   (project_id, ts), stopping at RANGE_CAP. Few: read exactly those (and
 *   apply the other filters to them). Many: the range is not selective, so
 *   walk newest first, but starting at the newest id inside the range, not
 *   at the top of the project (a range far in the past would otherwise make
 *   the walk step over everything newer).
 * Per-project pages are merged newest first.
 */
import type { LogFilter, LogRow, LogSelection, Page } from './storage.js';

/** A time range holding fewer entries than this is read entry by entry. */
export const RANGE_CAP = 4000;

const NO_UPPER_ID = Number.MAX_SAFE_INTEGER;

export interface LogPlanReads {
  /** Entries of the project with `from ≤ ts ≤ to`, counted up to `cap`. */
  countInRange(projectId: number, from: number, to: number, cap: number): Promise<number>;
  /** The largest id below `beforeId` among the project's entries in range, or null. */
  newestIdInRange(projectId: number, from: number, to: number, beforeId: number): Promise<number | null>;
  /** Newest first: the project's entries in the (small) range that pass every filter. */
  inRange(projectId: number, filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]>;
  /** Newest first: entries of these projects that pass every filter, by an index walk. */
  walk(projectIds: readonly number[], filter: LogFilter, beforeId: number, limit: number): Promise<LogRow[]>;
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

export async function planQuery(reads: LogPlanReads, selection: LogSelection, page: Page): Promise<LogRow[]> {
  const beforeId = page.beforeId ?? NO_UPPER_ID;
  if (selection.from === null && selection.to === null) return reads.walk(selection.projectIds, selection, beforeId, page.limit);
  if (selection.from !== null && selection.to !== null && selection.from > selection.to) return [];
  const from = selection.from ?? MIN_TS;
  const to = selection.to ?? MAX_TS;
  const lists = await Promise.all(
    selection.projectIds.map(async (projectId) => {
      if ((await reads.countInRange(projectId, from, to, RANGE_CAP)) < RANGE_CAP) return reads.inRange(projectId, selection, beforeId, page.limit);
      let upper = beforeId;
      if (selection.to !== null) {
        const newest = await reads.newestIdInRange(projectId, from, to, beforeId);
        if (newest === null) return [];
        upper = newest + 1;
      }
      return reads.walk([projectId], selection, upper, page.limit);
    }),
  );
  return mergeNewestFirst(lists, page.limit);
}
