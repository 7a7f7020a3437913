/**
 * Values as SQLite binds them: booleans as 0/1, id lists as JSON text for
 * `json_each`, and optional changes as (present, value) pairs.
 */

export const flag = (b: boolean): number => (b ? 1 : 0);
export const jsonIds = (ids: readonly number[]): string => JSON.stringify(ids);
/** Binds a (present, value) pair for the CASE-based UPDATE statements. */
export const change = (present: boolean, value: unknown): unknown[] => [flag(present), present ? value : null];
export const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
