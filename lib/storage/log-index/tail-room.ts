/**
 * Backpressure from sealing to ingestion (docs/storage-format.md,
 * "Sealing"). Ingestion writes a project's entries to its tail faster than
 * one core can seal them; unchecked, the tail grows without bound under a
 * sustained load, and with it the cost of every query (the tail is scanned,
 * not indexed) and, on PostgreSQL, the table's pages, which stay on disk
 * once sealed. So a request for a project whose tail holds MAX_TAIL_ENTRIES
 * or more waits, before its transaction, until sealing has brought the tail
 * back under: sustained ingestion runs at the rate entries are sealed, and
 * a burst up to the bound is taken at full speed.
 *
 * Which tails are over is read from the database (every process's
 * ingestion and sealing counts) at most every TAIL_CHECK_MS, one query
 * shared by every request. A wait ends after MAX_TAIL_WAIT_MS whatever the
 * tail holds; sealing that makes no progress in that time (a failing
 * worker, say) stops holding requests back for STALL_BYPASS_MS, so
 * ingestion slows down but never stops because of it.
 *
 * The same reads tell which tails are empty: a large request is sealed as
 * it is prepared only while its project's tail is empty (presealed.ts).
 */
import type { ServiceLogger } from '../../core/logger.js';
import { SEAL_MAX_ENTRIES } from './sealed-block.js';

/** A project's tail may hold this many entries before its requests wait: four full runs. */
export const MAX_TAIL_ENTRIES = 4 * SEAL_MAX_ENTRIES;
/** How stale the list of tails over the bound may be. */
export const TAIL_CHECK_MS = 100;
/** The longest one request waits for room. */
export const MAX_TAIL_WAIT_MS = 5_000;
/** After a wait that ran out, requests pass without waiting for this long. */
export const STALL_BYPASS_MS = 30_000;

export interface TailRoomOptions {
  /** Projects whose tail holds at least `limit` entries. */
  tailsOver(limit: number): Promise<number[]>;
  /** Asks sealing to run now. */
  kick(): void;
  logger?: ServiceLogger;
  /** MAX_TAIL_WAIT_MS and STALL_BYPASS_MS unless a test shortens them. */
  maxWaitMs?: number;
  bypassMs?: number;
}

export class TailRoom {
  private over: ReadonlySet<number> = new Set();
  private nonEmpty: ReadonlySet<number> = new Set();
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | null = null;
  private wakers: (() => void)[] = [];
  private bypassUntil = Number.NEGATIVE_INFINITY;
  /** Whether the last read of the tails succeeded. */
  private known = false;
  private closed = false;

  constructor(private readonly options: TailRoomOptions) {}

  /** Resolves when the project's tail has room for more entries (or the wait ran out, or sealing stopped). */
  async wait(projectId: number): Promise<void> {
    if (this.closed) return;
    await this.refresh();
    if (!this.over.has(projectId) || performance.now() < this.bypassUntil) return;
    const maxWait = this.options.maxWaitMs ?? MAX_TAIL_WAIT_MS;
    const deadline = performance.now() + maxWait;
    this.options.kick();
    while (this.over.has(projectId) && !this.closed) {
      const left = deadline - performance.now();
      if (left <= 0) {
        const bypass = this.options.bypassMs ?? STALL_BYPASS_MS;
        this.bypassUntil = performance.now() + bypass;
        this.options.logger?.warn(
          `sealing has not made room in project ${projectId}'s tail for ${maxWait / 1000} s: ingestion goes on without waiting for ${bypass / 1000} s`,
        );
        return;
      }
      await this.change(Math.min(TAIL_CHECK_MS, left));
      await this.refresh();
    }
  }

  /**
   * What the project's tail held at the last read (within TAIL_CHECK_MS,
   * reading again if that is older): nothing, some entries, or MAX_TAIL_ENTRIES
   * or more ('full'; also when the tails cannot be read).
   */
  async fill(projectId: number): Promise<'empty' | 'some' | 'full'> {
    await this.refresh();
    if (!this.known || this.over.has(projectId)) return 'full';
    return this.nonEmpty.has(projectId) ? 'some' : 'empty';
  }

  /** A seal committed: tails shrank, waiting requests look again now. */
  sealed(): void {
    this.checkedAt = Number.NEGATIVE_INFINITY;
    this.wake();
  }

  /** Stops holding requests back (the sealer is closing). */
  close(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }

  /** Resolves on the next seal or after `ms`, whichever is first. */
  private change(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.wakers.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async refresh(): Promise<void> {
    if (performance.now() - this.checkedAt < TAIL_CHECK_MS) return;
    this.checking ??= Promise.all([this.options.tailsOver(MAX_TAIL_ENTRIES), this.options.tailsOver(1)])
      .then(
        ([over, nonEmpty]) => {
          this.over = new Set(over);
          this.nonEmpty = new Set(nonEmpty);
          this.known = true;
        },
        // Not knowing is no reason to hold ingestion back (nor to take a tail for empty).
        () => {
          this.over = new Set();
          this.known = false;
        },
      )
      .finally(() => {
        this.checkedAt = performance.now();
        this.checking = null;
      });
    await this.checking;
  }
}
