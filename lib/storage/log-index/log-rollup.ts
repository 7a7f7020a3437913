/**
 * The rollup: how many entries each project holds per UTC minute and per
 * UTC hour (of the entry's `timestamp`) and level, in the table
 * `log_rollup` of both backends (`span` is 60,000 or 3,600,000 ms,
 * `start` the span's first instant). It is written in the transaction
 * that stores or deletes the entries it counts, so it equals them at every
 * commit. A histogram without text conditions counts the whole hours of a
 * bucket from the hour rows, the whole minutes left at its ends from the
 * minute rows, and only the partial minutes from the entries
 * (histogram-plan.ts `splitBuckets`). Hours keep a long sparse range cheap:
 * entries spread over every minute make nearly as many minute rows as
 * entries, but at most five rows per hour.
 *
 * The minute counts of a batch are made where the batch is encoded
 * (encoded-entries.ts), per chunk, so the write transaction only adds a
 * few numbers per chunk and sends one upsert.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
/** The rollup's spans, coarsest first. */
export const ROLLUP_SPANS = [HOUR_MS, MINUTE_MS] as const;

/** The start of the span holding `ts` (floored, also before 1970). */
export function spanStart(ts: number, span: number): number {
  return ts - (((ts % span) + span) % span);
}

export function minuteOf(ts: number): number {
  return spanStart(ts, MINUTE_MS);
}

/** How many entries of one project one span holds at one level. */
export interface RollupCount {
  projectId: number;
  span: number;
  start: number;
  level: number;
  n: number;
}

/**
 * Entries counted per (minute, level), flat: `[minute, level, n, …]`.
 * Entries of a batch mostly share a few minutes, often in a row, so the
 * minute of the previous entry is tried first (no division, no lookup).
 */
export function countMinutes(entries: Iterable<{ timestamp: number; level: number }>): number[] {
  const counts = new Map<number, number[]>();
  let minute = Number.NaN;
  let levels: number[] = [];
  for (const { timestamp, level } of entries) {
    if (!(timestamp >= minute && timestamp < minute + MINUTE_MS)) {
      minute = minuteOf(timestamp);
      let known = counts.get(minute);
      if (!known) counts.set(minute, (known = [0, 0, 0, 0, 0]));
      levels = known;
    }
    levels[level]! += 1;
  }
  const flat: number[] = [];
  for (const [start, perLevel] of counts) {
    perLevel.forEach((n, level) => {
      if (n > 0) flat.push(start, level, n);
    });
  }
  return flat;
}

/** Adds up per-(project, span, start, level) counts of a transaction, each minute's count added to its hour too. */
export class RollupTally {
  /** By span, then project, then start / MINUTE_MS · 5 + level (an exact integer for every instant a timestamp can hold). */
  private readonly counts = new Map<number, Map<number, Map<number, RollupCount>>>(ROLLUP_SPANS.map((span) => [span, new Map()]));

  /** Adds a chunk's flat minute counts (`countMinutes`) for a project. */
  addFlat(projectId: number, flat: readonly number[]): void {
    for (let i = 0; i < flat.length; i += 3) this.add(projectId, flat[i]!, flat[i + 1]!, flat[i + 2]!);
  }

  /** Adds `n` entries of the minute starting at `minute`. */
  add(projectId: number, minute: number, level: number, n: number): void {
    for (const [span, projects] of this.counts) {
      const start = span === MINUTE_MS ? minute : spanStart(minute, span);
      let keyed = projects.get(projectId);
      if (!keyed) projects.set(projectId, (keyed = new Map()));
      const key = (start / MINUTE_MS) * 5 + level;
      const known = keyed.get(key);
      if (known) known.n += n;
      else keyed.set(key, { projectId, span, start, level, n });
    }
  }

  /** Every count, each (project, span, start, level) once. */
  all(): RollupCount[] {
    const out: RollupCount[] = [];
    for (const projects of this.counts.values()) for (const keyed of projects.values()) out.push(...keyed.values());
    return out;
  }
}
