/**
 * Values as SQLite binds them: booleans as 0/1, id lists as JSON text for
 * `json_each`, and optional changes as (present, value) pairs.
 */
import type { Visibility } from '../types-org.js';

export const flag = (b: boolean): number => (b ? 1 : 0);
export const jsonIds = (ids: readonly number[]): string => JSON.stringify(ids);
/** Binds a (present, value) pair for the CASE-based UPDATE statements. */
export const change = (present: boolean, value: unknown): unknown[] => [flag(present), present ? value : null];
/** Visibility as the list statements bind it: all (0/1), then the group and project ids as JSON. */
export function visibilityParams(v: Visibility): { all: number; groupIds: string; projectIds: string } {
  return v.all ? { all: 1, groupIds: '[]', projectIds: '[]' } : { all: 0, groupIds: jsonIds(v.groupIds), projectIds: jsonIds(v.projectIds) };
}
export const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
