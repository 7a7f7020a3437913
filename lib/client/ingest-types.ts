/**
 * The ingestion client's public shapes: the entry it takes, its options and
 * counters, what its callbacks receive, and the error of a batch it gave up.
 */
import type { Dispatcher } from 'undici';
import type { BackoffPolicy } from './backoff.js';

/** The five levels logkeep accepts. */
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
  /**
   * Send request bodies of at least this many bytes gzip-compressed
   * (`Content-Encoding: gzip`, which logkeep decompresses within its body
   * limit). Default: never. `maxBatchBytes` still bounds the uncompressed body.
   */
  compressAboveBytes?: number;
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
  /**
   * Give up on one request (and retry it) when its whole answer, headers and
   * body, has not arrived this long after it started, however steadily bytes
   * trickle in, in ms (default: twice `requestTimeoutMs`, 60000).
   */
  requestTotalTimeoutMs?: number;
  /** How long `close()` keeps trying to deliver before it gives the rest up as `closed`, in ms (default 30000). */
  closeTimeoutMs?: number;
  /** Called once per entry the server rejected and listed inside a 202 (never twice for one entry, never for an index not sent). */
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
  /** Entries the server accepted (never more than were sent). */
  accepted: number;
  /**
   * Entries the server rejected inside a 202: its `rejected_count` when it
   * sends one (it may list only the first rejections), else the listed ones;
   * never more than were sent and not accepted. The listed ones reach `onRejected`.
   */
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
