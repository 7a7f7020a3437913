/**
 * Settled positions for live streams on PostgreSQL (so they have no gap). There,
 * ingestion transactions on different projects may commit out of id order,
 * so a stream over several projects must not pass an id below which an
 * entry may still appear. A settle (`lastLogId(projectIds, above)`) answers
 * a position at or below which nothing of theirs can commit any more;
 * streams deliver only up to it. `above` is the highest position settled so
 * far for those projects: a settle answers at once when it can pass it, and
 * otherwise waits only for the ingestion transactions holding it there
 * (those that drew ids at or below it), not for every one in flight.
 *
 * Settles are shared: every feed over the same projects (a group's streams
 * with different filters) joins the one under way if it started after what
 * the feed is waiting for, so a notification costs one wait per group, not
 * one per filter. Settles may wait on ingestion while holding a pooled
 * connection, so a gate caps how many run at once.
 */
import type { ReadOps } from '../storage/storage.js';
import type { ReadGate } from './read-gate.js';

interface Settle {
  /** The clock when it started: it reflects everything committed before. */
  startedAt: number;
  horizon: Promise<number>;
}

export class Horizons {
  private clock = 0;
  private readonly underway = new Map<string, Settle>();
  /** The highest position settled so far, by project set. */
  private readonly reached = new Map<string, number>();

  constructor(
    private readonly db: Pick<ReadOps, 'lastLogId'>,
    private readonly gate: ReadGate,
  ) {}

  /** Marks "now": settles started from here on reflect every commit made before. */
  tick(): number {
    this.clock += 1;
    return this.clock;
  }

  /**
   * Where a stream over these projects opened now starts: the largest id
   * stored once the ingestion in flight into them has ended (not shared:
   * a feed's settle may answer less, entries stored before the opening).
   */
  start(projectIds: readonly number[]): Promise<number> {
    return this.gate.run(() => this.db.lastLogId(projectIds));
  }

  /** A settled position for these projects, from a settle started at or after `notBefore`. */
  settle(projectIds: readonly number[], notBefore: number): Promise<number> {
    const key = [...projectIds].sort((a, b) => a - b).join(',');
    const current = this.underway.get(key);
    if (current && current.startedAt >= notBefore) return current.horizon;
    const above = this.reached.get(key) ?? -1;
    const settle: Settle = { startedAt: this.clock, horizon: this.gate.run(() => this.db.lastLogId(projectIds, above)) };
    this.underway.set(key, settle);
    const done = () => {
      if (this.underway.get(key) === settle) this.underway.delete(key);
    };
    settle.horizon.then((horizon) => {
      this.reached.set(key, Math.max(horizon, this.reached.get(key) ?? -1));
      done();
    }, done);
    return settle.horizon;
  }
}
