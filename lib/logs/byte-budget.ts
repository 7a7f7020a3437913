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
 * each waiting for the bytes the other holds), so a chunk is granted only
 * if every body still being read that is older than its own can still
 * finish: for each such body, its largest possible size plus everything
 * held by the bodies being read after it fits in the capacity. The oldest
 * body being read therefore waits only for bodies already read (whose
 * commit ends) and its own bytes, the next one for it, and so on: every
 * body finishes or stops sending. A body that stops sending is answered 408
 * after an idle timeout (http/ingest-body.ts) and gives its bytes back, so
 * a stalled body holds up others only until then. Younger bodies together
 * may hold what the older ones cannot need (with the service's capacity,
 * at least the slack above one maximal body), so small batches keep
 * flowing beside bodies that are slow to arrive.
 */
export class ByteBudget {
  private available: number;
  /** Bodies still being read, oldest first. */
  private readonly reading: BodyHold[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.available = capacity;
  }

  /** Starts holding a body that may grow to `maxBytes` (at most the capacity). */
  open(maxBytes: number): BodyHold {
    const hold = new BodyHold(this, Math.min(Math.max(0, Math.ceil(maxBytes)), this.capacity));
    this.reading.push(hold);
    return hold;
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

  /** Grants waiting chunks, oldest body first, each as soon as it is safe. */
  private serveWaiting(): void {
    for (const hold of [...this.reading]) hold.retry();
  }
}

/** One body's share of the budget: what it has taken so far, given back at once. */
export class BodyHold {
  held = 0;
  private pending: { bytes: number; granted: () => void } | null = null;
  private released = false;

  constructor(
    private readonly budget: ByteBudget,
    /** The most this body can ever hold (its declared length, or the body limit). */
    readonly maxBytes: number,
  ) {}

  /** Waiting for the budget to grant a chunk. */
  get isWaiting(): boolean {
    return this.pending !== null;
  }

  /** Takes `bytes` now if the budget allows; false means call `wait`. */
  take(bytes: number): boolean {
    if (this.released || this.pending !== null) return false;
    if (!this.budget.grant(this, bytes)) return false;
    this.held += bytes;
    return true;
  }

  /** Resolves once `bytes` are taken (at most one wait at a time); never resolves after `release`. */
  wait(bytes: number): Promise<void> {
    if (this.pending !== null) throw new Error('a body waits for one chunk at a time');
    return new Promise((granted) => {
      this.pending = { bytes, granted };
      this.retry();
    });
  }

  /** Called by the budget when bytes were given back. */
  retry(): void {
    const pending = this.pending;
    if (pending === null || this.released || !this.budget.grant(this, pending.bytes)) return;
    this.pending = null;
    this.held += pending.bytes;
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
