/**
 * What a live stream covers: its scope (one project, or a group) and its
 * filter, plus the key under which streams asking the same thing share one
 * feed (and therefore one storage query per notification).
 */
import type { LogFilter } from '../search/log-filter.js';

/**
 * The scope of a stream. A project scope remembers its group: re-validation
 * checks a group-scope grant covering the project without a lookup, and a
 * project never changes group.
 */
export type LiveScope = { kind: 'project'; projectId: number; groupId: number } | { kind: 'group'; groupId: number };

/**
 * Streams with equal keys match exactly the same entries. Terms and
 * prefixes are ANDed, so their order does not matter and is normalised.
 */
export function feedKey(scope: LiveScope, filter: LogFilter): string {
  const where = scope.kind === 'project' ? `p${scope.projectId}` : `g${scope.groupId}`;
  return JSON.stringify([
    where,
    filter.minLevel,
    filter.from,
    filter.to,
    [...filter.words].sort(),
    [...filter.prefixes].sort(),
    filter.exact.map((e) => JSON.stringify([e.path, e.value])).sort(),
  ]);
}
