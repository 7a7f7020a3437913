/**
 * Rate limiting as the endpoints use it: the IP
 * bucket spends a token on every request to a rate-limited route, before
 * anything else runs; the subject bucket is reserved for an attempt and
 * settled by its outcome (a failure keeps the token spent, a success refills
 * the bucket, a request that never reached the credential check gets the
 * token back). Reserving before the check, rather than spending after it,
 * keeps concurrent failures from all slipping past an almost empty bucket.
 *
 * A refusal is 429 `too_many_requests` with `Retry-After`; the refusal that
 * opens a throttling episode writes one `auth.throttled` audit row.
 */
import { LogServiceError } from '../core/errors.js';
import type { ServiceLogger } from '../core/logger.js';
import type { Storage } from '../storage/storage.js';
import { recordAudit } from '../audit/audit.js';
import { addressBucketKey } from '../core/client-ip.js';
import { createRateLimiter, type BucketSettings, type RateLimiter, type TakeResult } from './rate-limit.js';

/** Where a request came from, for the IP key and the audit row. */
export interface ThrottleOrigin {
  clientIp: string;
  /** The route path, e.g. `/v1/auth/token` (audit metadata). */
  path: string;
}

/** A subject key and, only if it is throttled, who it names (the audit row's actor). */
export interface ThrottleSubject {
  /** The submitted username verbatim, or `user:<id>` (the limiter stores only its digest). */
  key: string;
  /** Resolves the account the key names, or null; called only when an episode starts. */
  actorUserId(): Promise<number | null>;
}

/** A reserved subject token, settled exactly once by the attempt's outcome. */
export interface SubjectAttempt {
  /** The credential was right: the subject bucket is refilled to full. */
  succeeded(): void;
  /** The credential was wrong: the token stays spent. */
  failed(): void;
  /** The credential was never checked: the token is given back. */
  abandoned(): void;
}

export interface Throttle {
  /** Spends the caller's IP token or throws 429 (the handler's rate-limit hook). */
  checkIp(origin: ThrottleOrigin): Promise<void>;
  /** Reserves a subject token for one attempt or throws 429. */
  beginAttempt(origin: ThrottleOrigin, subject: ThrottleSubject): Promise<SubjectAttempt>;
}

export interface ThrottleOptions {
  enabled: boolean;
  buckets: BucketSettings;
  storage: Storage;
  logger: ServiceLogger;
  now(): number;
  /** The bucket tables to use (default: new ones from `buckets`); tests pass their own to inspect them. */
  limiter?: RateLimiter;
}

const NO_OP_ATTEMPT: SubjectAttempt = { succeeded() {}, failed() {}, abandoned() {} };

/** The 429: general envelope, whole seconds (at least 1) in `Retry-After`, never cached. */
export function tooManyRequests(retryAfterSeconds: number): LogServiceError {
  const unit = retryAfterSeconds === 1 ? 'second' : 'seconds';
  return new LogServiceError('too_many_requests', `Too many attempts; retry in ${retryAfterSeconds} ${unit}.`, {
    headers: { 'Retry-After': String(retryAfterSeconds), 'Cache-Control': 'no-store' },
  });
}

export function createThrottle(options: ThrottleOptions): Throttle {
  if (!options.enabled) {
    return {
      async checkIp() {},
      async beginAttempt() {
        return NO_OP_ATTEMPT;
      },
    };
  }
  const limiter: RateLimiter = options.limiter ?? createRateLimiter(options.buckets);

  async function refuse(
    refusal: Exclude<TakeResult, { allowed: true }>,
    keyKind: 'ip' | 'subject',
    origin: ThrottleOrigin,
    actor: () => Promise<number | null>,
  ): Promise<never> {
    if (refusal.episodeStarted) {
      try {
        const actorUserId = await actor();
        await options.storage.write((tx) =>
          recordAudit(
            tx,
            {
              actorUserId,
              action: 'auth.throttled',
              targetType: 'auth',
              targetId: null,
              metadata: { key_kind: keyKind, path: origin.path, client_ip: origin.clientIp },
            },
            options.now(),
          ),
        );
      } catch (err) {
        // Throttling must hold even when the audit row cannot be written.
        options.logger.error('could not record auth.throttled', { error: err instanceof Error ? err.message : String(err) });
      }
    }
    throw tooManyRequests(refusal.retryAfterSeconds);
  }

  return {
    async checkIp(origin) {
      const result = limiter.ip.take(addressBucketKey(origin.clientIp), options.now());
      if (!result.allowed) await refuse(result, 'ip', origin, async () => null);
    },
    async beginAttempt(origin, subject) {
      const result = limiter.subject.take(subject.key, options.now());
      if (!result.allowed) await refuse(result, 'subject', origin, subject.actorUserId);
      let settled = false;
      const settle = (action: (key: string, now: number) => void) => {
        if (settled) return;
        settled = true;
        action(subject.key, options.now());
      };
      return {
        succeeded: () => settle((k, t) => limiter.subject.fill(k, t)),
        failed: () => settle(() => {}),
        abandoned: () => settle((k, t) => limiter.subject.refund(k, t)),
      };
    },
  };
}
