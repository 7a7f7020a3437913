/**
 * The ingestion client: an application's side of `POST /v1/logs`. It
 * buffers entries, sends them in batches (by count, size or age) one batch
 * at a time over a keep-alive undici pool, retries what may succeed later
 * (network errors, 5xx, 429) and reports what will not (other 4xx, and
 * per-entry rejections).
 *
 * Delivery is at least once while the process lives: a batch leaves memory
 * only after a 2xx or a final refusal, so every acknowledged entry is
 * stored; a batch whose answer was lost (connection cut after the commit)
 * is sent again and its entries may be stored twice. Entries still buffered
 * when the process dies, or dropped by the overflow policy, are lost.
 */
import { Pool } from 'undici';
import { DEFAULT_BACKOFF, retryDelay, type BackoffPolicy } from './backoff.js';
import { EntryQueue, type QueuedEntry } from './entry-queue.js';
import { postBatch, type PostOutcome, type PostTarget } from './ingest-transport.js';
import { answerByteLimit, settleAnswer, type IngestionAnswer } from './ingest-answer.js';
import { encodeBatchBody } from './body-compression.js';
import {
  IngestBatchError,
  systemClock,
  type IngestClientClock,
  type IngestClientOptions,
  type IngestClientStats,
  type IngestFailureKind,
  type IngestLogEntry,
  type IngestRejection,
  type IngestRetry,
  type OverflowPolicy,
} from './ingest-types.js';
import { errorText, positive, warn } from './client-checks.js';

export { IngestBatchError, systemClock };
export type {
  IngestClientClock,
  IngestClientOptions,
  IngestClientStats,
  IngestFailureKind,
  IngestLogEntry,
  IngestLogLevel,
  IngestRejection,
  IngestRetry,
  OverflowPolicy,
} from './ingest-types.js';

interface BlockedLog {
  entry: QueuedEntry;
  admitted: () => void;
}

interface PendingFlush {
  throughSeq: number;
  done: () => void;
}

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * Ships log entries to a logkeep service. Create one per project key and
 * process, `log()` freely, and `close()` it on shutdown so buffered entries
 * are delivered.
 */
export class IngestClient {
  private readonly target: PostTarget;
  private readonly ownsDispatcher: boolean;
  private readonly clock: IngestClientClock;
  private readonly random: () => number;
  private readonly backoff: BackoffPolicy;
  private readonly abort = new AbortController();
  private readonly maxBatchEntries: number;
  private readonly maxBatchBytes: number;
  private readonly compressAboveBytes: number;
  private readonly flushIntervalMs: number;
  private readonly maxBufferedEntries: number;
  private readonly maxBufferedBytes: number;
  private readonly overflow: OverflowPolicy;
  private readonly maxAttempts: number;
  private readonly closeTimeoutMs: number;
  private readonly onRejected: ((rejection: IngestRejection) => void) | undefined;
  private readonly onError: (error: IngestBatchError) => void;
  private readonly onRetry: ((retry: IngestRetry) => void) | undefined;

  private readonly queue = new EntryQueue();
  private readonly blocked: BlockedLog[] = [];
  private readonly flushes: PendingFlush[] = [];
  private inFlight: QueuedEntry[] | null = null;
  private lastSeq = 0;
  /** Entries up to this seq are sent without waiting for a batch to fill. */
  private flushThroughSeq = 0;
  private sending = false;
  private cancelTimer: (() => void) | null = null;
  private cancelSleep: (() => void) | null = null;
  private closing = false;
  private abandoned = false;
  private closed: Promise<void> | null = null;
  private readonly counters = { accepted: 0, rejected: 0, failed: 0, dropped: 0, batches: 0, retries: 0 };

  constructor(options: IngestClientOptions) {
    const base = new URL(options.url);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError(`url must be http or https (got ${base.protocol})`);
    if (!options.secretKey?.startsWith('slk_')) throw new TypeError('secretKey must be a project secret key (slk_…)');
    this.maxBatchEntries = positive('maxBatchEntries', options.maxBatchEntries, 500);
    this.maxBatchBytes = positive('maxBatchBytes', options.maxBatchBytes, 1024 * 1024);
    this.compressAboveBytes = positive('compressAboveBytes', options.compressAboveBytes, Infinity);
    this.flushIntervalMs = positive('flushIntervalMs', options.flushIntervalMs, 1000);
    this.maxBufferedEntries = positive('maxBufferedEntries', options.maxBufferedEntries, 10_000);
    this.maxBufferedBytes = positive('maxBufferedBytes', options.maxBufferedBytes, 16 * 1024 * 1024);
    this.maxAttempts = positive('maxAttempts', options.maxAttempts, Infinity);
    this.closeTimeoutMs = positive('closeTimeoutMs', options.closeTimeoutMs, 30_000);
    const requestTimeoutMs = positive('requestTimeoutMs', options.requestTimeoutMs, 30_000);
    const requestTotalTimeoutMs = positive('requestTotalTimeoutMs', options.requestTotalTimeoutMs, 2 * requestTimeoutMs);
    this.overflow = options.overflow ?? 'drop-oldest';
    if (this.overflow !== 'drop-oldest' && this.overflow !== 'block') throw new TypeError(`overflow must be 'drop-oldest' or 'block'`);
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.onRejected = options.onRejected;
    this.onError = options.onError ?? ((error) => warn(error.message, 'LOGKEEP_INGEST_FAILED'));
    this.onRetry = options.onRetry;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.target = {
      dispatcher: options.dispatcher ?? new Pool(base.origin, { headersTimeout: requestTimeoutMs, bodyTimeout: requestTimeoutMs }),
      origin: base.origin,
      path: `${base.pathname.replace(/\/+$/, '')}/v1/logs`,
      secretKey: options.secretKey,
      timeoutMs: requestTimeoutMs,
      totalTimeoutMs: requestTotalTimeoutMs,
      signal: this.abort.signal,
      now: () => this.clock.now(),
    };
  }

  /**
   * Buffers one entry. The entry is serialised now (later changes to the
   * object are not sent); a value JSON cannot represent throws here. The
   * promise resolves once the entry is in the buffer: at once, except with
   * `overflow: 'block'` when the buffer is full. Throws after `close()`.
   */
  log(entry: IngestLogEntry): Promise<void> {
    if (this.closing) throw new Error('the logkeep ingest client is closed');
    const queued = this.serialise(entry);
    if (this.blocked.length === 0 && this.hasRoomFor(queued)) {
      this.enqueue(queued);
      return RESOLVED;
    }
    if (this.overflow === 'drop-oldest') {
      while (!this.hasRoomFor(queued)) {
        this.queue.shift();
        this.counters.dropped++;
      }
      this.enqueue(queued);
      this.settleFlushes();
      return RESOLVED;
    }
    return new Promise<void>((admitted) => this.blocked.push({ entry: queued, admitted }));
  }

  /**
   * Sends everything logged before this call without waiting for batches to
   * fill; resolves when each of those entries was accepted, rejected, given
   * up or dropped. Never rejects: outcomes go to the callbacks and `stats`.
   */
  flush(): Promise<void> {
    const throughSeq = this.lastSeq;
    if (this.oldestUnsettledSeq() > throughSeq) return RESOLVED;
    this.flushThroughSeq = Math.max(this.flushThroughSeq, throughSeq);
    const done = new Promise<void>((resolve) => this.flushes.push({ throughSeq, done: resolve }));
    this.kick();
    return done;
  }

  /**
   * Stops taking entries, delivers what is buffered (retrying as usual for
   * up to `closeTimeoutMs`, then giving the rest up as `closed`), and closes
   * the connection pool. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  get stats(): IngestClientStats {
    return {
      buffered: this.queue.length,
      bufferedBytes: this.queue.bytes,
      inFlight: this.inFlight?.length ?? 0,
      waiting: this.blocked.length,
      ...this.counters,
    };
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    // Blocked calls happened before close: their entries are taken, room or not.
    for (const { entry, admitted } of this.blocked.splice(0)) {
      this.enqueue(entry);
      admitted();
    }
    const drained = this.flush();
    let cancelDeadline = () => {};
    const deadline = new Promise<'timeout'>((resolve) => {
      if (Number.isFinite(this.closeTimeoutMs)) cancelDeadline = this.clock.schedule(() => resolve('timeout'), this.closeTimeoutMs);
    });
    const outcome = await Promise.race([drained.then(() => 'drained' as const), deadline]);
    cancelDeadline();
    if (outcome === 'timeout') {
      this.abandoned = true;
      this.abort.abort();
      this.cancelSleep?.();
      await drained;
    }
    this.cancelTimer?.();
    if (this.ownsDispatcher) await (outcome === 'timeout' ? this.target.dispatcher.destroy() : this.target.dispatcher.close());
  }

  private serialise(entry: IngestLogEntry): QueuedEntry {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new TypeError('a log entry must be an object');
    const withTime = entry.timestamp === undefined ? { ...entry, timestamp: new Date(this.clock.now()).toISOString() } : entry;
    const json = JSON.stringify(withTime);
    return { seq: ++this.lastSeq, json, bytes: Buffer.byteLength(json, 'utf8'), queuedAt: this.clock.now() };
  }

  /** An empty buffer takes any entry, so one oversized entry cannot wedge the client. */
  private hasRoomFor(entry: QueuedEntry): boolean {
    if (this.queue.length === 0) return true;
    return this.queue.length < this.maxBufferedEntries && this.queue.bytes + entry.bytes <= this.maxBufferedBytes;
  }

  private enqueue(entry: QueuedEntry): void {
    entry.queuedAt = this.clock.now();
    this.queue.push(entry);
    this.kick();
  }

  /** Lets blocked `log()` calls in, oldest first, while there is room. */
  private admitBlocked(): void {
    while (this.blocked.length > 0 && this.hasRoomFor(this.blocked[0]!.entry)) {
      const { entry, admitted } = this.blocked.shift()!;
      entry.queuedAt = this.clock.now();
      this.queue.push(entry);
      admitted();
    }
  }

  /** Starts the sender when a batch is due, or the age timer when one will be. */
  private kick(): void {
    if (this.sending) return;
    if (this.batchDue()) {
      // deliver() reports every outcome itself; anything escaping here is a bug worth a warning, not a crash.
      this.sendDueBatches().catch((err: unknown) => warn(`the logkeep ingest client's sender failed: ${errorText(err)}`));
    } else {
      this.armTimer();
    }
  }

  private batchDue(): boolean {
    const oldest = this.queue.peek();
    if (oldest === undefined) return false;
    return (
      this.closing ||
      this.blocked.length > 0 ||
      oldest.seq <= this.flushThroughSeq ||
      this.queue.length >= this.maxBatchEntries ||
      this.queue.bodyBytes() >= this.maxBatchBytes ||
      this.queue.length >= this.maxBufferedEntries ||
      this.queue.bytes >= this.maxBufferedBytes ||
      this.clock.now() - oldest.queuedAt >= this.flushIntervalMs
    );
  }

  private armTimer(): void {
    const oldest = this.queue.peek();
    if (this.cancelTimer !== null || oldest === undefined) return;
    const wait = Math.max(1, oldest.queuedAt + this.flushIntervalMs - this.clock.now());
    this.cancelTimer = this.clock.schedule(() => {
      this.cancelTimer = null;
      this.kick();
    }, wait);
  }

  /** The one sender: batches go out one at a time, in `log()` order. */
  private async sendDueBatches(): Promise<void> {
    this.sending = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    try {
      while (this.batchDue()) {
        const batch = this.queue.takeBatch(this.maxBatchEntries, this.maxBatchBytes);
        this.inFlight = batch;
        this.admitBlocked();
        await this.deliver(batch);
        this.inFlight = null;
        this.settleFlushes();
      }
    } finally {
      this.inFlight = null;
      this.sending = false;
    }
    this.settleFlushes();
    this.armTimer();
  }

  /** Sends one batch until it is delivered or given up. Never throws. */
  private async deliver(batch: QueuedEntry[]): Promise<void> {
    const body = await encodeBatchBody(`[${batch.map((e) => e.json).join(',')}]`, this.compressAboveBytes);
    for (let attempt = 1; ; attempt++) {
      if (this.abandoned) return this.giveUp(batch, 'closed', attempt - 1, null, null, 'the client closed before the batch was delivered');
      const outcome: PostOutcome = await postBatch(this.target, body, answerByteLimit(batch.length));
      if (outcome.kind === 'delivered') return this.delivered(batch, outcome.body, outcome.tooLarge);
      if (outcome.kind === 'refused')
        return this.giveUp(batch, 'refused', attempt, outcome.status, outcome.code, `logkeep refused a batch of ${batch.length}: ${outcome.reason}`);
      if (this.abandoned)
        return this.giveUp(batch, 'closed', attempt, outcome.status, null, `the client closed before the batch was delivered (last: ${outcome.reason})`);
      if (attempt >= this.maxAttempts) {
        return this.giveUp(
          batch,
          'retries_exhausted',
          attempt,
          outcome.status,
          null,
          `a batch of ${batch.length} failed ${attempt} times (last: ${outcome.reason})`,
        );
      }
      const delayMs = retryDelay(attempt, outcome.retryAfterMs, this.backoff, this.random);
      this.counters.retries++;
      this.callback(this.onRetry, { retry: attempt, delayMs, status: outcome.status, reason: outcome.reason, entries: batch.length });
      await this.sleep(delayMs);
    }
  }

  /** A 2xx settles the batch (it is never sent again), its counts believed only as far as they fit it. */
  private delivered(batch: QueuedEntry[], answer: IngestionAnswer | null, tooLarge: boolean): void {
    this.counters.batches++;
    if (tooLarge) {
      warn(
        `the server answered a batch of ${batch.length} with more than ${answerByteLimit(batch.length)} bytes; the answer was not read, and the batch is not sent again`,
        'LOGKEEP_INGEST_ANSWER_TOO_LARGE',
      );
    }
    const { accepted, rejected, reported } = settleAnswer(answer, batch.length);
    this.counters.accepted += accepted;
    this.counters.rejected += rejected;
    for (const { index, error, message } of reported) {
      this.callback(this.onRejected, { entry: JSON.parse(batch[index]!.json) as Record<string, unknown>, error, message });
    }
  }

  private giveUp(batch: QueuedEntry[], kind: IngestFailureKind, attempts: number, status: number | null, code: string | null, message: string): void {
    this.counters.failed += batch.length;
    const entries = batch.map((e) => JSON.parse(e.json) as Record<string, unknown>);
    this.callback(this.onError, new IngestBatchError(kind, message, status, code, entries, attempts));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.clock.schedule(() => {
        this.cancelSleep = null;
        resolve();
      }, ms);
      this.cancelSleep = () => {
        this.cancelSleep = null;
        cancel();
        resolve();
      };
    });
  }

  /** A throwing callback must not stop delivery: it becomes a process warning. */
  private callback<T>(fn: ((arg: T) => void) | undefined, arg: T): void {
    if (fn === undefined) return;
    try {
      fn(arg);
    } catch (err) {
      warn(`a logkeep ingest client callback threw: ${errorText(err)}`);
    }
  }

  private oldestUnsettledSeq(): number {
    return Math.min(this.inFlight?.[0]?.seq ?? Infinity, this.queue.peek()?.seq ?? Infinity, this.blocked[0]?.entry.seq ?? Infinity);
  }

  private settleFlushes(): void {
    if (this.flushes.length === 0) return;
    const oldest = this.oldestUnsettledSeq();
    for (let i = this.flushes.length - 1; i >= 0; i--) {
      const flush = this.flushes[i]!;
      if (flush.throughSeq < oldest) {
        this.flushes.splice(i, 1);
        flush.done();
      }
    }
  }
}
