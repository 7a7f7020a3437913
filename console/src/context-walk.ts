/**
 * The context of an entry, as `grep -C` gives lines around one: the entries
 * just before or after a position in one consistent order, **time order**
 * (the entry's own timestamp, to the millisecond; entries of the same
 * millisecond in the order they were stored, by id).
 *
 * Why time order: `GET /v1/logs` pages newest-stored first and filters on
 * time (`from`, `to`, both inclusive); it has no bound on the id, so it
 * cannot list "the entries stored just before this one". It can list a time
 * window, and a window read whole, sorted here, gives the time order
 * exactly. Before, "before" came by time and "after" by storage order, and
 * an entry stored earlier but dated later fell between the two.
 *
 * The walk reads windows outward from the position: one that fits in a page
 * is taken whole; a fuller one is halved until it fits (a single
 * millisecond is read whole, page after page: storage order is the order
 * within it); an empty one jumps straight to the nearest entry there is.
 * No DOM: the unit tests drive it with a fake reader.
 */
// With its extension: the unit tests import this module under Node's resolution too.
import type { Page } from './api-types.js';
import { entryMs, FIRST_MS, LAST_MS } from './entry-time.js';

export interface Timed {
  id: number;
  timestamp: string;
}

export type { Page };

/**
 * One page of the project's entries with `from ≤ timestamp ≤ to` (ms,
 * inclusive; null leaves that side open), newest stored first, after `cursor`.
 */
export type ReadWindow<T> = (from: number | null, to: number | null, cursor: string | null, limit: number) => Promise<Page<T>>;

/** A place in time order: a millisecond, and the id among the entries of that millisecond. */
export interface Position {
  ms: number;
  id: number;
}

export type Direction = 'before' | 'after';

/** The service's largest page: a window holding more is split. */
export const WINDOW_PAGE = 200;
/** The first window's width: a minute holds a few pages at most on a busy project. */
export const FIRST_WIDTH_MS = 60_000;
/**
 * Most requests one walk makes. Halving a window spanning the service's
 * whole time range down to one millisecond takes about 48; the cap only
 * ends a walk over data no real log has, leaving "show more" to go on.
 */
export const MAX_WALK_REQUESTS = 120;

export function positionOf(e: Timed): Position {
  return { ms: entryMs(e.timestamp) ?? 0, id: e.id };
}

export function compare(a: Position, b: Position): number {
  return a.ms - b.ms || a.id - b.id;
}

/**
 * Up to `count` entries beyond `from` in `direction`, nearest first.
 * `exhausted`: there is nothing more that way (as of now).
 */
export async function walk<T extends Timed>(
  read: ReadWindow<T>,
  from: Position,
  direction: Direction,
  count: number,
): Promise<{ entries: T[]; exhausted: boolean }> {
  const sign = direction === 'after' ? 1 : -1;
  const out: T[] = [];
  let requests = 0;
  const ask = (lo: number | null, hi: number | null, cursor: string | null, limit = WINDOW_PAGE) => {
    requests++;
    return read(lo, hi, cursor, limit);
  };
  const nearestFirst = (a: T, b: T) => sign * compare(positionOf(a), positionOf(b));
  const take = (items: T[]) => {
    for (const e of [...items].sort(nearestFirst)) {
      if (out.length >= count) break;
      out.push(e);
    }
  };
  /** Every entry of one millisecond, beyond `from` when it is `from`'s own. */
  const wholeMillisecond = async (ms: number, first?: Page<T>): Promise<T[]> => {
    const all: T[] = [];
    let page = first ?? (await ask(ms, ms, null));
    for (;;) {
      all.push(...page.items);
      // Storage order is this millisecond's order: newest stored first is nearest first before the position.
      if (page.next_cursor === null || requests >= MAX_WALK_REQUESTS) break;
      if (direction === 'before' && all.filter((e) => ms !== from.ms || e.id < from.id).length >= count - out.length) break;
      // After the position: the ids above it come first, so the first id at or below it ends what is needed.
      if (ms === from.ms && direction === 'after' && all.some((e) => e.id <= from.id)) break;
      page = await ask(ms, ms, page.next_cursor);
    }
    return ms === from.ms ? all.filter((e) => sign * (e.id - from.id) > 0) : all;
  };

  take(await wholeMillisecond(from.ms));
  let edge = from.ms;
  let width = FIRST_WIDTH_MS;
  /** The far end of a window from `edge` known to hold more than a page: the next window is half of it. */
  let crowded: number | null = null;
  while (out.length < count) {
    if (requests >= MAX_WALK_REQUESTS) return { entries: out, exhausted: false };
    const near = edge + sign;
    if (near < FIRST_MS || near > LAST_MS) return { entries: out, exhausted: true };
    const span = crowded === null ? width : Math.max(1, Math.ceil(Math.abs(crowded - near) / 2));
    const far = Math.min(LAST_MS, Math.max(FIRST_MS, near + sign * (span - 1)));
    const page = await ask(Math.min(near, far), Math.max(near, far), null);
    if (page.next_cursor !== null && near !== far) {
      // More than a page: halve it, nearer half first (bisecting down to where the entries crowd).
      crowded = far;
      continue;
    }
    if (page.next_cursor !== null) take(await wholeMillisecond(near, page));
    else if (page.items.length > 0) take(page.items);
    else if (crowded === null) {
      // Nothing here and nothing known beyond: a probe finds an entry further on, the next window reaches it.
      const beyond = far + sign;
      if (beyond < FIRST_MS || beyond > LAST_MS) return { entries: out, exhausted: true };
      const probe = await ask(sign > 0 ? beyond : null, sign > 0 ? null : beyond, null, 1);
      const found = probe.items[0];
      if (!found) return { entries: out, exhausted: true };
      width = Math.max(1, Math.abs(positionOf(found).ms - far));
      edge = far;
      continue;
    }
    edge = far;
    if (crowded !== null && sign * (crowded - edge) <= 0) crowded = null;
    // Sparse here: wider next time; a well-filled window keeps its width.
    if (page.items.length < WINDOW_PAGE / 4) width *= 2;
    else width = Math.max(1, Math.abs(far - near) + 1);
  }
  return { entries: out, exhausted: false };
}
