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
  /** The clock when its scan began (or will begin, while queued): it reflects every commit notified up to it. */
  startedAt: number;
  /** Its scan has begun: news from now on needs another settle. */
  scanning: boolean;
  horizon: Promise<number>;
}

/** A project set no feed asked about for this long gets no settle started ahead of its feeds. */
const ACTIVE_MS = 10_000;

export class Horizons {
  private clock = 0;
  private readonly underway = new Map<string, Settle>();
  /** The highest position settled so far, by project set. */
  private readonly reached = new Map<string, number>();
  /** Project sets feeds settled lately, and when they last asked. */
  private readonly active = new Map<string, { projectIds: readonly number[]; askedAt: number }>();

  constructor(
    private readonly db: Pick<ReadOps, 'lastLogId'>,
    private readonly gate: ReadGate,
  ) {}

  /**
   * Marks "now": settles started from here on reflect every commit made
   * before. With `news` (the projects of a commit notified, null: any), a
   * settle starts at once for each project set feeds read lately that
   * includes one of them, while those feeds may still be busy with their
   * current page: when they ask next, it is under way or done.
   */
  tick(news?: readonly number[] | null): number {
    this.clock += 1;
    if (news !== undefined) this.settleAhead(news);
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
    const key = keyOf(projectIds);
    this.active.set(key, { projectIds, askedAt: Date.now() });
    return this.settleKey(key, projectIds, notBefore);
  }

  private settleAhead(news: readonly number[] | null): void {
    const now = Date.now();
    for (const [key, { projectIds, askedAt }] of this.active) {
      if (now - askedAt > ACTIVE_MS) this.active.delete(key);
      else if (news === null || projectIds.some((id) => news.includes(id))) void this.settleKey(key, projectIds, this.clock).catch(() => undefined);
    }
  }

  private settleKey(key: string, projectIds: readonly number[], notBefore: number): Promise<number> {
    const current = this.underway.get(key);
    // A settle still queued at the gate scans after now: it reflects any news so far.
    if (current && (!current.scanning || current.startedAt >= notBefore)) return current.horizon;
    const settle: Settle = { startedAt: this.clock, scanning: false, horizon: Promise.resolve(0) };
    settle.horizon = this.gate.run(() => {
      settle.scanning = true;
      settle.startedAt = this.clock;
      return this.db.lastLogId(projectIds, this.reached.get(key) ?? -1);
    });
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

function keyOf(projectIds: readonly number[]): string {
  return [...projectIds].sort((a, b) => a - b).join(',');
}
