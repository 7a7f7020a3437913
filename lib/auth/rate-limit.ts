/**
 * Token buckets for the credential-sensitive endpoints, as pure in-memory
 * data: every call takes the current time,
 * so the arithmetic is testable without clocks or sockets.
 *
 * - Refill is continuous, computed on access: `capacity` tokens at most,
 *   `refillPerMinute` tokens per minute.
 * - A table tracks at most `maxKeys` keys; touching a key makes it the most
 *   recently used, and the least recently used one is forgotten first (it
 *   comes back full, which is what a fresh key gets anyway).
 * - A key is stored as its SHA-256 digest, never as submitted: a caller
 *   choosing long keys (a username is anything a form can carry) cannot
 *   make the table hold more than `maxKeys` × a few dozen bytes of keys.
 * - A throttling episode starts with the first refusal of a key and lasts
 *   until the key's bucket is full again (or it is refilled by a success, or
 *   evicted). Only the refusal that starts an episode is reported as such,
 *   so a caller hammering a key yields one audit row, not one per request.
 */

import { createHash } from 'node:crypto';

export interface BucketSettings {
  /** Tokens a full bucket holds (shared by the IP and subject tables). */
  capacity: number;
  /** Tokens added per minute, continuously. */
  refillPerMinute: number;
  /** Keys tracked at most; the least recently used is evicted beyond it. */
  maxKeys: number;
}

/** The answer to `take`. */
export type TakeResult =
  | { allowed: true }
  | {
      allowed: false;
      /** Whole seconds until one token is back, at least 1 (the `Retry-After` value). */
      retryAfterSeconds: number;
      /** This refusal opened a new throttling episode for the key. */
      episodeStarted: boolean;
    };

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  updatedAt: number;
  /** A refusal happened and the bucket has not been full since. */
  inEpisode: boolean;
}

const MS_PER_MINUTE = 60_000;

/** The fixed-size form a key is stored under (44 characters, whatever the key's length). */
function storedKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('base64');
}

/** One table of buckets (e.g. all IP buckets), LRU-capped. */
export class TokenBucketTable {
  readonly #settings: BucketSettings;
  /** Map iteration order is insertion order: re-inserting on access keeps the LRU key first. */
  readonly #buckets = new Map<string, Bucket>();

  constructor(settings: BucketSettings) {
    if (!(settings.capacity >= 1) || !(settings.refillPerMinute > 0) || !(settings.maxKeys >= 1)) {
      throw new RangeError('bucket settings must have capacity >= 1, refillPerMinute > 0 and maxKeys >= 1');
    }
    this.#settings = { ...settings };
  }

  /** How many keys are tracked now. */
  get size(): number {
    return this.#buckets.size;
  }

  /** Characters of key text the table holds, summed over its keys (an inspection aid: memory stays bounded). */
  get retainedKeyChars(): number {
    let total = 0;
    for (const key of this.#buckets.keys()) total += key.length;
    return total;
  }

  /** Whether the key is tracked (without touching its recency). */
  has(key: string): boolean {
    return this.#buckets.has(storedKey(key));
  }

  /** Tokens the key's bucket holds at `now` (a fresh key is full). Does not touch recency. */
  peek(key: string, now: number): number {
    const bucket = this.#buckets.get(storedKey(key));
    return bucket ? this.#refilled(bucket, now) : this.#settings.capacity;
  }

  /** Spends one token if there is one; otherwise refuses with the wait until the next token. */
  take(key: string, now: number): TakeResult {
    const bucket = this.#touch(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    const episodeStarted = !bucket.inEpisode;
    bucket.inEpisode = true;
    return { allowed: false, retryAfterSeconds: this.#secondsUntilOneToken(bucket.tokens), episodeStarted };
  }

  /** Gives back one token taken by `take` (never above capacity). */
  refund(key: string, now: number): void {
    const bucket = this.#touch(key, now);
    bucket.tokens = Math.min(this.#settings.capacity, bucket.tokens + 1);
    if (bucket.tokens >= this.#settings.capacity) bucket.inEpisode = false;
  }

  /** Refills the key's bucket to full and closes its episode (a successful attempt). */
  fill(key: string, now: number): void {
    const bucket = this.#touch(key, now);
    bucket.tokens = this.#settings.capacity;
    bucket.inEpisode = false;
  }

  /** Forgets every key. */
  clear(): void {
    this.#buckets.clear();
  }

  /** The key's bucket, brought up to date and made most recently used; evicts beyond maxKeys. */
  #touch(submitted: string, now: number): Bucket {
    const key = storedKey(submitted);
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key);
      bucket.tokens = this.#refilled(bucket, now);
      bucket.updatedAt = Math.max(bucket.updatedAt, now);
      if (bucket.tokens >= this.#settings.capacity) bucket.inEpisode = false;
    } else {
      bucket = { tokens: this.#settings.capacity, updatedAt: now, inEpisode: false };
    }
    this.#buckets.set(key, bucket);
    while (this.#buckets.size > this.#settings.maxKeys) {
      const oldest = this.#buckets.keys().next().value as string;
      this.#buckets.delete(oldest);
    }
    return bucket;
  }

  #refilled(bucket: Bucket, now: number): number {
    // A clock that steps backwards adds nothing rather than removing tokens.
    const elapsed = Math.max(0, now - bucket.updatedAt);
    return Math.min(this.#settings.capacity, bucket.tokens + (elapsed * this.#settings.refillPerMinute) / MS_PER_MINUTE);
  }

  #secondsUntilOneToken(tokens: number): number {
    const missing = 1 - tokens;
    const ms = (missing * MS_PER_MINUTE) / this.#settings.refillPerMinute;
    return Math.max(1, Math.ceil(ms / 1000));
  }
}

/** The two tables the service keeps: one keyed by caller address, one by subject. */
export interface RateLimiter {
  readonly ip: TokenBucketTable;
  readonly subject: TokenBucketTable;
}

/** Both tables with the same settings (the capacity is one shared number). */
export function createRateLimiter(settings: BucketSettings): RateLimiter {
  return { ip: new TokenBucketTable(settings), subject: new TokenBucketTable(settings) };
}
