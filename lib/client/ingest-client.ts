/**
 * The ingestion client: an application's side of `POST /v1/logs`. It
 * buffers entries, sends them in batches (by count, size or age) one batch
 * at a time over a keep-alive undici pool, retries what may succeed later
 * (network errors, 5xx, 429) and reports what will not (other 4xx, and
 * per-entry rejections).
 *
 * Delivery is at least once while the process lives: a batch leaves memory
 * only after a 2xx or a final refusal, so an acknowledged entry is stored
 * exactly once, and an entry whose answer was lost (connection cut after
 * the commit) is sent again and may be stored twice. Entries still buffered
 * when the process dies, or dropped by the overflow policy, are lost.
 */
import { Pool, type Dispatcher } from 'undici';
import { DEFAULT_BACKOFF, retryDelay, type BackoffPolicy } from './backoff.js';
import { EntryQueue, type QueuedEntry } from './entry-queue.js';
import { postBatch, type PostOutcome, type PostTarget } from './ingest-transport.js';

/** The five levels logkeep accepts (D21). */
export type IngestLogLevel = 'debug' | 'info' | 'warning' | 'error' | 'critical';

/**
 * One log entry as an application writes it. Any other key is kept as a
 * custom field. Without `timestamp` the client sets the time of `log()`.
 */
export interface IngestLogEntry {
  level: IngestLogLevel;
  event: string;
  timestamp?: string | Date;
  [key: string]: unknown;
}

/** What happens when the buffer is full. */
export type OverflowPolicy = 'drop-oldest' | 'block';

/** Time for the client: real by default; tests pass a manual one. */
export interface IngestClientClock {
  now(): number;
  /** Calls `fn` once after `ms`; the returned function cancels it. */
  schedule(fn: () => void, ms: number): () => void;
}

/** An entry the server stored nothing of, with its reason (`validation_error` or `quota_exceeded`). */
export interface IngestRejection {
  /** The entry as it was sent (parsed back from the sent JSON, `timestamp` filled in). */
  entry: Record<string, unknown>;
  error: string;
  message: string;
}

/** A retry about to wait. */
export interface IngestRetry {
  /** 1 for the first retry of this batch. */
  retry: number;
  delayMs: number;
  /** The status that caused it, or null for a network error. */
  status: number | null;
  reason: string;
  /** Entries in the batch. */
  entries: number;
}

/**
 * Why a batch was given up: `refused` (the server answered a 4xx other than
 * 429, e.g. 400, 401, 403 `project_blocked`, 413), `retries_exhausted`
 * (`maxAttempts` reached) or `closed` (`close()` ran out of time).
 */
export type IngestFailureKind = 'refused' | 'retries_exhausted' | 'closed';

/** A batch the client gave up on; its entries are not retried again. */
export class IngestBatchError extends Error {
  override readonly name = 'IngestBatchError';
  constructor(
    readonly kind: IngestFailureKind,
    message: string,
    /** The HTTP status of the last answer, or null if none came. */
    readonly status: number | null,
    /** logkeep's error code (`unauthorized`, `project_blocked`, `payload_too_large`, …) when the body carried one. */
    readonly code: string | null,
    /** The batch's entries, as sent. */
    readonly entries: Record<string, unknown>[],
    /** Requests made for this batch. */
    readonly attempts: number,
  ) {
    super(message);
  }
}

export interface IngestClientOptions {
  /** The service's base address, including any path prefix it is mounted under: `http://logs.internal:8080`, `https://example.com/logs`. */
  url: string | URL;
  /** A project secret key (`slk_…`). */
  secretKey: string;
  /** Most entries per request (default 500). */
  maxBatchEntries?: number;
  /** Largest request body in bytes (default 1 MiB; keep it under the server's `--max-ingest-body-bytes`). */
  maxBatchBytes?: number;
  /** Longest an entry waits for a batch to fill, in ms (default 1000). */
  flushIntervalMs?: number;
  /** Most entries waiting in memory, not counting the batch in flight (default 10000). */
  maxBufferedEntries?: number;
  /** Most bytes of serialised entries waiting in memory (default 16 MiB). */
  maxBufferedBytes?: number;
  /** Full buffer: drop the oldest waiting entry (counted in `stats.dropped`, the default) or make `log()` wait for room. */
  overflow?: OverflowPolicy;
  /** Requests per batch before it is given up (default: unlimited; retryable failures retry until `close()` times out). */
  maxAttempts?: number;
  /** Retry timing (defaults: base 200 ms, cap 30 s, `Retry-After` honoured up to 5 minutes). */
  backoff?: Partial<BackoffPolicy>;
  /** Give up on one request (and retry it) when headers or body stall this long, in ms (default 30000). */
  requestTimeoutMs?: number;
  /** How long `close()` keeps trying to deliver before it gives the rest up as `closed`, in ms (default 30000). */
  closeTimeoutMs?: number;
  /** Called once per entry the server rejected inside a 202. */
  onRejected?: (rejection: IngestRejection) => void;
  /** Called once per batch given up (default: a process warning). */
  onError?: (error: IngestBatchError) => void;
  /** Called before each retry wait. */
  onRetry?: (retry: IngestRetry) => void;
  /** Your own undici dispatcher (an `Agent` with TLS options, a proxy agent…); the client then does not close it. */
  dispatcher?: Dispatcher;
  /** Tests: a controllable clock. */
  clock?: IngestClientClock;
  /** Tests: the jitter source, a number in [0, 1). */
  random?: () => number;
}

/** Counters since the client was created, and the current buffer. */
export interface IngestClientStats {
  /** Entries waiting in the buffer. */
  buffered: number;
  bufferedBytes: number;
  /** Entries in the request being sent or retried. */
  inFlight: number;
  /** `log()` calls waiting for room (`overflow: 'block'`). */
  waiting: number;
  /** Entries the server accepted. */
  accepted: number;
  /** Entries the server rejected inside a 202 (reported to `onRejected`). */
  rejected: number;
  /** Entries of batches given up (reported to `onError`). */
  failed: number;
  /** Entries dropped because the buffer was full (`overflow: 'drop-oldest'`). */
  dropped: number;
  /** Requests answered with a 2xx. */
  batches: number;
  /** Retry waits started. */
  retries: number;
}

export const systemClock: IngestClientClock = {
  now: () => Date.now(),
  schedule(fn, ms) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

interface BlockedLog {
  entry: QueuedEntry;
  admitted: () => void;
}

interface PendingFlush {
  throughSeq: number;
  done: () => void;
}

const RESOLVED: Promise<void> = Promise.resolve();

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(value > 0) || (Number.isFinite(value) && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be a positive integer (got ${value})`);
  }
  return value;
}

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
    this.flushIntervalMs = positive('flushIntervalMs', options.flushIntervalMs, 1000);
    this.maxBufferedEntries = positive('maxBufferedEntries', options.maxBufferedEntries, 10_000);
    this.maxBufferedBytes = positive('maxBufferedBytes', options.maxBufferedBytes, 16 * 1024 * 1024);
    this.maxAttempts = positive('maxAttempts', options.maxAttempts, Infinity);
    this.closeTimeoutMs = positive('closeTimeoutMs', options.closeTimeoutMs, 30_000);
    const requestTimeoutMs = positive('requestTimeoutMs', options.requestTimeoutMs, 30_000);
    this.overflow = options.overflow ?? 'drop-oldest';
    if (this.overflow !== 'drop-oldest' && this.overflow !== 'block') throw new TypeError(`overflow must be 'drop-oldest' or 'block'`);
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.onRejected = options.onRejected;
    this.onError = options.onError ?? ((error) => process.emitWarning(error.message, { type: 'LogkeepIngestWarning', code: 'LOGKEEP_INGEST_FAILED' }));
    this.onRetry = options.onRetry;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.target = {
      dispatcher: options.dispatcher ?? new Pool(base.origin, { headersTimeout: requestTimeoutMs, bodyTimeout: requestTimeoutMs }),
      origin: base.origin,
      path: `${base.pathname.replace(/\/+$/, '')}/v1/logs`,
      secretKey: options.secretKey,
      timeoutMs: requestTimeoutMs,
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
      void this.sendDueBatches();
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
    const body = `[${batch.map((e) => e.json).join(',')}]`;
    for (let attempt = 1; ; attempt++) {
      if (this.abandoned) return this.giveUp(batch, 'closed', attempt - 1, null, null, 'the client closed before the batch was delivered');
      const outcome: PostOutcome = await postBatch(this.target, body);
      if (outcome.kind === 'delivered') return this.delivered(batch, outcome.body);
      if (outcome.kind === 'refused') return this.giveUp(batch, 'refused', attempt, outcome.status, outcome.code, `logkeep refused a batch of ${batch.length}: ${outcome.reason}`);
      if (this.abandoned) return this.giveUp(batch, 'closed', attempt, outcome.status, null, `the client closed before the batch was delivered (last: ${outcome.reason})`);
      if (attempt >= this.maxAttempts) {
        return this.giveUp(batch, 'retries_exhausted', attempt, outcome.status, null, `a batch of ${batch.length} failed ${attempt} times (last: ${outcome.reason})`);
      }
      const delayMs = retryDelay(attempt, outcome.retryAfterMs, this.backoff, this.random);
      this.counters.retries++;
      this.callback(this.onRetry, { retry: attempt, delayMs, status: outcome.status, reason: outcome.reason, entries: batch.length });
      await this.sleep(delayMs);
    }
  }

  private delivered(batch: QueuedEntry[], body: { accepted: number; rejected: { index: number; error: string; message: string }[] } | null): void {
    this.counters.batches++;
    if (body === null) {
      this.counters.accepted += batch.length;
      return;
    }
    this.counters.accepted += body.accepted;
    for (const rejection of body.rejected) {
      const sent = batch[rejection.index];
      if (sent === undefined) continue;
      this.counters.rejected++;
      this.callback(this.onRejected, { entry: JSON.parse(sent.json) as Record<string, unknown>, error: rejection.error, message: rejection.message });
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
      process.emitWarning(`a logkeep ingest client callback threw: ${err instanceof Error ? err.message : String(err)}`, { type: 'LogkeepIngestWarning' });
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
