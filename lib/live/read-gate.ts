/**
 * Caps how many live-stream reads run at once in a service. On PostgreSQL a
 * read over several projects may wait for ingestion in flight (see the
 * storage's `logsAfter`) while holding a pooled connection; without a cap,
 * many group streams could hold the whole pool and starve requests. On
 * SQLite more reads than reader connections would only queue there.
 */
export class ReadGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active += 1;
    // A finishing read hands its slot straight to the next waiter.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
