/**
 * The ingestion transactions of one storage's pool that are still open, by
 * the PostgreSQL backend (pid) running them. A live-stream settle (see
 * `lastLogId` in log-entries.ts) that has to wait for one of them awaits its end
 * here, the moment its COMMIT (or ROLLBACK) is answered, instead of polling
 * pg_locks. Transactions of other processes, or not registered yet, are
 * not found here: the settle polls for those, and a notification from
 * another process (sent after its commit) cuts the pause before the next
 * poll short.
 */
export class OpenIngestion {
  private readonly open = new Map<number, Promise<void>>();
  private readonly pausing = new Set<() => void>();

  /**
   * Runs `transaction`, giving it `marked(pid)` to call once it holds its
   * ingestion marks on backend `pid`; from then until it ends, `ended(pid)`
   * answers its end.
   */
  async track<T>(transaction: (marked: (pid: number) => void) => Promise<T>): Promise<T> {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    let pid: number | null = null;
    try {
      return await transaction((backend) => {
        pid = backend;
        this.open.set(backend, ended);
      });
    } finally {
      end();
      if (pid !== null && this.open.get(pid) === ended) this.open.delete(pid);
    }
  }

  /**
   * Resolves once the ingestion transaction open on backend `pid` has
   * ended; null when none is known here. A backend runs one transaction at
   * a time, so the one found is the one asked about or a later one (whose
   * end comes later still: waiting for it is never too short).
   */
  ended(pid: number): Promise<void> | null {
    return this.open.get(pid) ?? null;
  }

  /** Resolves after `ms`, or sooner at the next `nudge()`. */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.pausing.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.pausing.add(wake);
    });
  }

  /** Something may have committed in another process: pauses end now. */
  nudge(): void {
    for (const wake of [...this.pausing]) wake();
  }
}
