/**
 * Retry timing for the ingestion client: capped exponential backoff with
 * full jitter, and the server's `Retry-After` when it sends one. Pure
 * functions of their inputs (the random source and the clock are passed in),
 * so every delay is testable exactly.
 */

/** How long to wait between attempts of one batch. */
export interface BackoffPolicy {
  /** The first retry waits up to this long (ms); each further one doubles it. */
  baseDelayMs: number;
  /** No computed wait exceeds this (ms). */
  maxDelayMs: number;
  /** A `Retry-After` longer than this (ms) is shortened to it, so a misconfigured proxy cannot stall the client for hours. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseDelayMs: 200,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 300_000,
};

/**
 * Full jitter ("Exponential Backoff and Jitter", AWS architecture blog):
 * a uniform wait in [0, min(max, base·2^(retry-1))). `retry` counts from 1;
 * `random` returns a number in [0, 1).
 */
export function backoffDelay(retry: number, policy: BackoffPolicy, random: () => number): number {
  // 2^exponent overflows to Infinity for large retries, which min() then caps.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/**
 * The wait a `Retry-After` header asks for, in ms: delta-seconds (`120`) or
 * an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`, RFC 9110 §10.2.3). A date
 * in the past is 0. Anything unparsable is null (fall back to backoff).
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  // An HTTP date always names a weekday and GMT; plain numbers were handled above.
  if (!/GMT$/i.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The wait before retry number `retry`: the server's `Retry-After` (capped) when given, else backoff. */
export function retryDelay(retry: number, retryAfterMs: number | null, policy: BackoffPolicy, random: () => number): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  return backoffDelay(retry, policy, random);
}
