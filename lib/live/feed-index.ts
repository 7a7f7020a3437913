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

/**
 * Whether a feed pre-filters this project's committed chunks by search
 * terms. A group feed whose projects are not resolved yet reads instead
 * of taking commits: it needs none.
 */
export function termsWanted(feeds: Iterable<Feed>, projectId: number): boolean {
  for (const feed of feeds) {
    if (feed.terms === null) continue;
    if (feed.scope.kind === 'project' ? feed.scope.projectId === projectId : feed.reads(projectId)) return true;
  }
  return false;
}

export function removeFrom(index: Map<number, Set<Feed>>, id: number, feed: Feed): void {
  const set = index.get(id);
  if (!set) return;
  set.delete(feed);
  if (set.size === 0) index.delete(id);
}
