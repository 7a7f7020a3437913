/**
 * The hub's indexes of feeds by project and by group: a set of feeds per
 * id, the entry gone once its last feed leaves.
 */
import type { Feed } from './feed.js';

export function addTo(index: Map<number, Set<Feed>>, id: number, feed: Feed): void {
  const set = index.get(id);
  if (set) set.add(feed);
  else index.set(id, new Set([feed]));
}

export function removeFrom(index: Map<number, Set<Feed>>, id: number, feed: Feed): void {
  const set = index.get(id);
  if (!set) return;
  set.delete(feed);
  if (set.size === 0) index.delete(id);
}
