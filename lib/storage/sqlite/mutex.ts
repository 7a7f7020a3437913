/**
 * A FIFO async mutex: SQLite allows one writer, so write transactions (and,
 * with no reader connections, plain reads) take turns on the one writer
 * connection instead of interleaving statements of different transactions.
 */
export class AsyncMutex {
  private tail: Promise<void> = Promise.resolve();
  /** Holders running or queued (for metrics). */
  queued = 0;

  /** Runs `fn` once every earlier holder has finished; releases on settle. */
  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.queued += 1;
    const result = this.tail.then(fn).finally(() => {
      this.queued -= 1;
    });
    // The next holder waits for this one whether it resolved or threw.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
