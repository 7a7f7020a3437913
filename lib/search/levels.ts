/**
 * The five log levels and their stored numbers. The number orders them, so
 * a minimum-level filter is a comparison and the search index can hold one
 * term per level.
 */

/** The five levels, lowest first; a level's index is its stored number (0 debug … 4 critical). */
export const LEVELS = ['debug', 'info', 'warning', 'error', 'critical'] as const;
export type LevelName = (typeof LEVELS)[number];

/** The stored number of a level name, or undefined when it is not one of the five. */
export function levelNumber(name: unknown): number | undefined {
  if (typeof name !== 'string') return undefined;
  const n = (LEVELS as readonly string[]).indexOf(name);
  return n < 0 ? undefined : n;
}
