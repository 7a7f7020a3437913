/**
 * The per-minute rollup: how many entries each project holds per UTC
 * minute (of the entry's `timestamp`) and level, in the table `log_minutes`
 * of both backends. It is written in the transaction that stores or
 * deletes the entries it counts, so it equals them at every commit. A
 * histogram without text conditions counts the whole minutes of a bucket
 * from it and only the partial minutes at a bucket's two ends from the
 * entries (histogram-plan.ts `splitBuckets`).
 *
 * The counts of a batch are made where the batch is encoded
 * (encoded-entries.ts), per chunk, so the write transaction only adds a
 * few numbers per chunk and sends one upsert.
 */
export const MINUTE_MS = 60_000;

/** The start of the minute holding `ts` (floored, also before 1970). */
export function minuteOf(ts: number): number {
  return ts - (((ts % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
}

/** The start of the first minute starting at or after `ts`. */
export function minuteAtOrAfter(ts: number): number {
  return minuteOf(ts + MINUTE_MS - 1);
}

/** How many entries of one project one minute holds at one level. */
export interface MinuteCount {
  projectId: number;
  minute: number;
  level: number;
  n: number;
}

/**
 * Entries counted per (minute, level), flat: `[minute, level, n, …]`.
 * Entries of a batch mostly share a few minutes, so this stays short.
 */
export function countMinutes(entries: Iterable<{ timestamp: number; level: number }>): number[] {
  const counts = new Map<number, number[]>();
  for (const { timestamp, level } of entries) {
    const minute = minuteOf(timestamp);
    let levels = counts.get(minute);
    if (!levels) counts.set(minute, (levels = [0, 0, 0, 0, 0]));
    levels[level]! += 1;
  }
  const flat: number[] = [];
  for (const [minute, levels] of counts) levels.forEach((n, level) => n > 0 && flat.push(minute, level, n));
  return flat;
}

/** Adds up per-(project, minute, level) counts across the chunks of a transaction. */
export class MinuteTally {
  private readonly counts = new Map<string, MinuteCount>();

  /** Adds a chunk's flat counts (`countMinutes`) for a project. */
  addFlat(projectId: number, flat: readonly number[]): void {
    for (let i = 0; i < flat.length; i += 3) this.add(projectId, flat[i]!, flat[i + 1]!, flat[i + 2]!);
  }

  add(projectId: number, minute: number, level: number, n: number): void {
    const key = `${projectId} ${minute} ${level}`;
    const known = this.counts.get(key);
    if (known) known.n += n;
    else this.counts.set(key, { projectId, minute, level, n });
  }

  /** Every count, each (project, minute, level) once. */
  all(): MinuteCount[] {
    return [...this.counts.values()];
  }
}
