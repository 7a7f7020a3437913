/**
 * The shared byte budget of ingestion bodies: bounds how much body is
 * buffered, parsed and waiting for its commit at once. A naive server
 * parsing four 10 MiB bodies together peaked at 665 MB RSS here; with a
 * budget the others simply wait (TCP backpressure holds their clients)
 * until earlier bodies are committed and answered.
 *
 * A body counts only for the bytes it has actually sent: each chunk is
 * taken from the budget as it arrives, never the declared or maximum size
 * up front, so bodies that send little hold little, whatever they declare.
 *
 * Taking bytes while holding others could deadlock (two half-read bodies,
 * each waiting for the bytes the other holds), so the bodies being read
 * stand in a line, and the budget keeps one rule: for every body in the
 * line, its largest possible size plus everything held by the bodies after
 * it fits in the capacity. A chunk is granted only if the rule still holds
 * with it. The first body in the line therefore waits only for bodies
 * already read (whose commit ends, giving their bytes back) and its own
 * bytes: it can always finish, or stops sending and is answered 408 after
 * an idle timeout (request-body.ts) or closed at the request timeout,
 * giving its bytes back. Then the next is first, and so on: the budget
 * cannot deadlock. Bodies further back together may hold what the ones
 * before them cannot need (with the service's capacity, at least the slack
 * above one maximal body), so small batches keep flowing beside bodies
 * that are slow to arrive.
 *
 * The line is the order of arrival, except for slow bodies. What the rule
 * reserves for a body in front is its unsent maximum, and a body that
 * trickles (one byte every 2 s, under the idle timeout) would keep that
 * reserved for as long as the request timeout lets it live, holding up any
 * batch behind it larger than the slack. So a body that sends less than
 * MIN_BODY_RATE, averaged over RATE_WINDOW_MS (time paused for the budget
 * not counted: the client is not at fault then), loses its place: while a
 * body behind it waits, it moves to the back of the line. A move is made
 * only if the rule still holds after it for every body it passes (it
 * carries its held bytes behind them); it usually does, since a slow body
 * has sent little. The rule holding at every moment is all the argument
 * above needs, so moving never deadlocks the budget; the moved body waits
 * its new turn (or its 408), and a large batch gets through in about a
 * window plus a review period.
 */

/** The slowest a body may send, in decoded bytes a second, and keep its place in line (10 MiB in the 120 s request timeout needs ~87 KiB/s). */
export const MIN_BODY_RATE = 64 * 1024;
/** The window the rate is averaged over: a body may fall this far behind it (or be this long late starting) before it is slow. */
export const RATE_WINDOW_MS = 2000;
/** How often the line is reviewed for slow bodies while a body waits. */
export const REVIEW_MS = 250;

export interface ByteBudgetOptions {
  /** Milliseconds on a monotonic clock (default `performance.now`). */
  now?: () => number;
  /** The review period while a body waits (default REVIEW_MS). */
  reviewMs?: number;
}

export class ByteBudget {
  private available: number;
  /** Bodies still being read, in line (see above): arrival order, slow bodies moved back. */
  private readonly reading: BodyHold[] = [];
  /** The clock bodies' rates are measured on. */
  readonly now: () => number;
  private readonly reviewMs: number;
  private reviewTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly capacity: number,
    options: ByteBudgetOptions = {},
  ) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.available = capacity;
    this.now = options.now ?? (() => performance.now());
    this.reviewMs = options.reviewMs ?? REVIEW_MS;
  }

  /** Starts holding a body that may grow to `maxBytes` (at most the capacity). */
  open(maxBytes: number): BodyHold {
    const hold = new BodyHold(this, Math.min(Math.max(0, Math.ceil(maxBytes)), this.capacity));
    this.reading.push(hold);
    return hold;
  }

  /** Bodies being read, in line (for tests). */
  get line(): readonly BodyHold[] {
    return this.reading;
  }

  /** Bytes free right now (for tests and diagnostics). */
  get free(): number {
    return this.available;
  }

  /** Bodies paused until the budget can grant their next chunk (for metrics). */
  get waiting(): number {
    let n = 0;
    for (const hold of this.reading) if (hold.isWaiting) n += 1;
    return n;
  }

  /** Takes `bytes` for `hold` if free and safe (see above); false otherwise. */
  grant(hold: BodyHold, bytes: number): boolean {
    if (bytes > this.available) return false;
    const at = this.reading.indexOf(hold);
    if (at >= 0) {
      // Held by bodies being read after the one at i, including `hold`'s new bytes.
      let younger = bytes;
      for (let i = this.reading.length - 1; i >= 0; i--) {
        if (i < at && this.reading[i]!.maxBytes + younger > this.capacity) return false;
        younger += this.reading[i]!.held;
      }
    }
    this.available -= bytes;
    return true;
  }

  /** `hold` has its whole body: it no longer waits for anything but its commit. */
  finishReading(hold: BodyHold): void {
    const at = this.reading.indexOf(hold);
    if (at >= 0) this.reading.splice(at, 1);
    this.serveWaiting();
  }

  giveBack(bytes: number): void {
    this.available += bytes;
    this.serveWaiting();
  }

  /**
   * Moves every slow body that stands before a waiting one to the back of
   * the line, when the rule allows (see above), then grants what it can.
   * Runs when a body starts waiting and every REVIEW_MS while one waits.
   */
  review(): void {
    if (this.reviewTimer !== null) clearTimeout(this.reviewTimer);
    this.reviewTimer = null;
    const now = this.now();
    const moved = new Set<BodyHold>();
    for (let i = 0; i < this.lastWaiting(); ) {
      const hold = this.reading[i]!;
      if (!moved.has(hold) && hold.isSlow(now) && this.mayMoveBack(i)) {
        this.reading.splice(i, 1);
        this.reading.push(hold);
        moved.add(hold);
      } else i++;
    }
    this.serveWaiting();
    if (this.lastWaiting() >= 0) {
      this.reviewTimer = setTimeout(() => this.review(), this.reviewMs);
      this.reviewTimer.unref();
    }
  }

  /** A body started waiting: review the line now (and then periodically) unless a review is due anyway. */
  noteWaiting(): void {
    if (this.reviewTimer === null) this.review();
  }

  /** Index in line of the last body waiting for a chunk, or -1. */
  private lastWaiting(): number {
    for (let i = this.reading.length - 1; i >= 0; i--) if (this.reading[i]!.isWaiting) return i;
    return -1;
  }

  /** Whether the rule holds for every body behind the one at `at` once that one is at the back, holding what it holds. */
  private mayMoveBack(at: number): boolean {
    let younger = this.reading[at]!.held;
    for (let i = this.reading.length - 1; i > at; i--) {
      if (this.reading[i]!.maxBytes + younger > this.capacity) return false;
      younger += this.reading[i]!.held;
    }
    return true;
  }

  /** Grants waiting chunks, first in line first, each as soon as it is safe. */
  private serveWaiting(): void {
    for (const hold of [...this.reading]) hold.retry();
  }
}

/** One body's share of the budget: what it has taken so far, given back at once. */
export class BodyHold {
  held = 0;
  private pending: { bytes: number; granted: () => void } | null = null;
  private released = false;
  /**
   * How far ahead of MIN_BODY_RATE the body is, in bytes, as of
   * `creditAt`: starts at a window's worth, gains each byte taken, drains at
   * the rate while the body is not waiting for the budget, and never exceeds
   * a window's worth (bytes sent long ago do not excuse a stall now).
   * Below zero the body is slow.
   */
  private credit = MIN_BODY_RATE * (RATE_WINDOW_MS / 1000);
  private creditAt: number;

  constructor(
    private readonly budget: ByteBudget,
    /** The most this body can ever hold (its declared length, or the body limit). */
    readonly maxBytes: number,
  ) {
    this.creditAt = budget.now();
  }

  /** Waiting for the budget to grant a chunk. */
  get isWaiting(): boolean {
    return this.pending !== null;
  }

  /** Whether the body sends slower than MIN_BODY_RATE (see `credit`); never while it waits for the budget. */
  isSlow(now: number): boolean {
    return this.pending === null && this.creditNow(now) < 0;
  }

  /** `credit` as of `now`, without changing it. */
  private creditNow(now: number): number {
    return this.pending === null ? this.credit - (MIN_BODY_RATE * Math.max(0, now - this.creditAt)) / 1000 : this.credit;
  }

  /** Brings `credit` to `now` and adds `bytes` just taken. */
  private account(bytes: number): void {
    const now = this.budget.now();
    this.credit = Math.min(MIN_BODY_RATE * (RATE_WINDOW_MS / 1000), this.creditNow(now) + bytes);
    this.creditAt = now;
  }

  /** Takes `bytes` now if the budget allows; false means call `wait`. */
  take(bytes: number): boolean {
    if (this.released || this.pending !== null) return false;
    if (!this.budget.grant(this, bytes)) return false;
    this.held += bytes;
    this.account(bytes);
    return true;
  }

  /** Resolves once `bytes` are taken (at most one wait at a time); never resolves after `release`. */
  wait(bytes: number): Promise<void> {
    if (this.pending !== null) throw new Error('a body waits for one chunk at a time');
    return new Promise((granted) => {
      // The time until now counts; from here the clock stops until the chunk is granted.
      this.account(0);
      this.pending = { bytes, granted };
      this.retry();
      if (this.pending !== null) this.budget.noteWaiting();
    });
  }

  /** Called by the budget when bytes were given back or the line changed. */
  retry(): void {
    const pending = this.pending;
    if (pending === null || this.released || !this.budget.grant(this, pending.bytes)) return;
    this.pending = null;
    this.held += pending.bytes;
    // Waiting time is not counted: the clock restarts now.
    this.creditAt = this.budget.now();
    this.account(pending.bytes);
    pending.granted();
  }

  /** The body is read whole: its bytes stay held until `release`. */
  finishReading(): void {
    this.budget.finishReading(this);
  }

  /** Gives every byte back (idempotent). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.pending = null;
    const bytes = this.held;
    this.held = 0;
    this.budget.finishReading(this);
    this.budget.giveBack(bytes);
  }
}
