/**
 * Group commit: ingestion requests that arrive while a transaction is
 * being written wait together and go into the next transaction as one, so
 * many small batches share one commit (one fsync on SQLite) instead of
 * paying one each. Every request's promise settles only after the
 * transaction holding its entries has committed (or failed).
 *
 * SQLite has one writer, so one flush runs at a time; PostgreSQL runs a few
 * at once (row locks on the projects keep the quotas exact).
 * If a transaction holding several requests fails, each request is retried
 * alone, so one request's failure never fails the others.
 */
import type { LogEntryOutcome, LogIngestRequest } from '../storage/types-logs.js';
import type { IngestReport, Storage } from '../storage/storage.js';
import { StorageUnavailableError } from '../core/errors.js';
import type { ServiceLogger } from '../core/logger.js';
import { NO_OBSERVER, secondsSince, type ServiceObserver } from '../core/observe.js';
import { committedEntries, type CommittedEntries } from './committed-entries.js';

export interface IngestQueueOptions {
  /** Transactions written at once (1 on SQLite). */
  concurrency: number;
  /** A transaction takes more waiting requests only while it stays within these (one request always fits). */
  maxEntriesPerCommit: number;
  maxBytesPerCommit: number;
  logger: ServiceLogger;
  /** Told of every transaction and answered batch (metrics). */
  observer?: ServiceObserver;
}

interface Pending {
  request: LogIngestRequest;
  bytes: number;
  resolve(outcomes: LogEntryOutcome[]): void;
  reject(err: unknown): void;
}

export class IngestQueue {
  private readonly pending: Pending[] = [];
  private active = 0;
  private closed = false;
  private drained: (() => void) | null = null;
  private readonly listeners: ((committed: CommittedEntries) => void)[] = [];
  readonly observer: ServiceObserver;

  constructor(
    private readonly storage: Pick<Storage, 'write' | 'tailRoom'>,
    private readonly options: IngestQueueOptions,
  ) {
    this.observer = options.observer ?? NO_OBSERVER;
  }

  /**
   * Stores the request's entries (quota-checked); resolves with one outcome
   * per entry once committed. A request for a project whose tail is full
   * waits for sealing first (Storage `tailRoom`).
   */
  submit(request: LogIngestRequest): Promise<LogEntryOutcome[]> {
    if (this.closed) return Promise.reject(new StorageUnavailableError('the service is shutting down'));
    if (request.sizes.length === 0) return Promise.resolve([]);
    const room = this.storage.tailRoom?.(request.projectId);
    return room ? room.then(() => this.enqueue(request)) : this.enqueue(request);
  }

  private enqueue(request: LogIngestRequest): Promise<LogEntryOutcome[]> {
    if (this.closed) return Promise.reject(new StorageUnavailableError('the service is shutting down'));
    return new Promise((resolve, reject) => {
      let bytes = 0;
      for (const size of request.sizes) bytes += size;
      this.pending.push({ request, bytes, resolve, reject });
      this.startFlushes();
    });
  }

  /** Refuses new requests and resolves once every accepted one is committed. */
  close(): Promise<void> {
    this.closed = true;
    if (this.active === 0 && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }

  /** Calls `listener` after each commit that stored at least one entry (listener errors are logged, never thrown). */
  onCommit(listener: (committed: CommittedEntries) => void): void {
    this.listeners.push(listener);
  }

  /** Requests waiting for a transaction (not counting those being written). */
  get waiting(): number {
    return this.pending.length;
  }

  private startFlushes(): void {
    while (this.active < this.options.concurrency && this.pending.length > 0) {
      const group = this.takeGroup();
      this.active += 1;
      void this.flush(group).finally(() => {
        this.active -= 1;
        this.startFlushes();
        if (this.active === 0 && this.pending.length === 0) this.drained?.();
      });
    }
  }

  private takeGroup(): Pending[] {
    const group = [this.pending.shift()!];
    let entries = group[0]!.request.sizes.length;
    let bytes = group[0]!.bytes;
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      if (entries + next.request.sizes.length > this.options.maxEntriesPerCommit) break;
      if (bytes + next.bytes > this.options.maxBytesPerCommit) break;
      entries += next.request.sizes.length;
      bytes += next.bytes;
      group.push(this.pending.shift()!);
    }
    return group;
  }

  private async flush(group: Pending[]): Promise<void> {
    const started = process.hrtime.bigint();
    let entries = 0;
    for (const p of group) entries += p.request.sizes.length;
    try {
      const report: IngestReport = {};
      const outcomes = await this.storage.write((tx) =>
        tx.ingestLogs(
          group.map((p) => p.request),
          report,
        ),
      );
      this.observer.groupCommitted(entries, secondsSince(started), true);
      group.forEach((p, i) => {
        p.resolve(outcomes[i]!);
      });
      this.announce(group, outcomes, report);
    } catch (err) {
      this.observer.groupCommitted(entries, secondsSince(started), false);
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
      this.options.logger.warn('group commit failed; retrying its requests one by one', { requests: group.length, error: String(err) });
      for (const p of group) await this.flush([p]);
    }
  }

  private announce(group: Pending[], outcomes: LogEntryOutcome[][], report: IngestReport): void {
    if (this.listeners.length === 0) return;
    const committed = committedEntries(
      group.map((p) => p.request),
      outcomes,
      report.lastIdsBefore ?? null,
    );
    if (committed === null) return;
    for (const listener of this.listeners) {
      try {
        listener(committed);
      } catch (err) {
        this.options.logger.error('an ingest commit listener failed', { error: String(err) });
      }
    }
  }
}
