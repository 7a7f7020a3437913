/**
 * Password hashing with scrypt (`scrypt-kdf`), never on the event loop: in a
 * child process at the lowest CPU priority (hash-process.ts). One hash runs
 * at a time and only so many wait, so a burst of logins can neither take
 * every core nor queue without end. The stored hash carries its own
 * parameters, so the cost can be changed later without invalidating
 * existing hashes. docs/passwords.md has the whole story.
 */
import { createHash, randomBytes } from 'node:crypto';
import { LogServiceError, invalidRequest } from '../core/errors.js';
import { HashProcess, HashUnavailableError } from './hash-process.js';
import { NO_OBSERVER, secondsSince, type ServiceObserver } from '../core/observe.js';

/**
 * scrypt's cost: N = 2^14, r = 8, p = 5, one of the settings OWASP's
 * Password Storage Cheat Sheet lists as equivalent to its minimum
 * N = 2^17, r = 8, p = 1. Same protection, but 16 MiB per hash instead of
 * 128 MiB: a hash that fits the CPU caches better takes about half the
 * CPU and slows the service's own work on the other cores less
 * (docs/measurements.md, "Passwords").
 */
export const DEFAULT_SCRYPT_LOG_N = 14;
export const SCRYPT_R = 8;
export const SCRYPT_P = 5;
/**
 * Concurrent hashes at most. Each holds one core for the whole hash; one
 * at a time leaves the other cores to ingestion and queries, so a burst of
 * logins costs the people signing in time rather than everyone else CPU.
 */
export const DEFAULT_MAX_CONCURRENT_HASHES = 1;
/**
 * Hashes that may wait for a free slot (the `passwordHashMaxWaiting`
 * setting's default). At ~0.2 s a hash on an idle machine, and several
 * times that while the service keeps the CPUs busy, the last of 16 waits
 * from ~3 s to a few tens of seconds; past that a flood of sign-ins is
 * refused at once instead of queueing without end.
 */
export const DEFAULT_MAX_WAITING_HASHES = 16;
/** `Retry-After` when hashing is refused: about the time a full queue takes to drain. */
export const HASHING_RETRY_AFTER_SECONDS = 5;
export const PASSWORD_MIN_CHARS = 8;
export const PASSWORD_MAX_BYTES = 72;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Constant work whether or not `stored` is null (unknown user): one hash either way. */
  verify(stored: string | null, password: string): Promise<boolean>;
  /** Stops the hashing process (hashes in flight fail). */
  close(): Promise<void>;
}

export interface PasswordHasherOptions {
  logN?: number;
  /** How many hashes may run at once (each takes one core while it runs). */
  maxConcurrent?: number;
  /** How many hashes may wait for a slot; one more is refused with 503 (default 16). */
  maxWaiting?: number;
  /** How long one hash may take before its process is ended and replaced (default 30 s). */
  timeoutMs?: number;
  /** How long the hashing process stays after its last hash (default 30 s). */
  idleMs?: number;
  /** Test hook: true loses the reply to the hash about to be sent, as a stuck hashing process would. */
  loseReply?: () => boolean;
  /** Told how long each hash took once it had its slot (metrics). */
  observer?: ServiceObserver;
}

/** Hashes running and hashes waiting for a slot, right now. */
export interface HashLoad {
  running: number;
  waiting: number;
}

/**
 * 503 with `Retry-After`: the queue of waiting hashes is full, or a hash
 * timed out. `temporarily_unavailable` is RFC 6749's code for this, and the
 * same code serves the general envelope, so a client needs only one.
 */
export function hashingUnavailable(): LogServiceError {
  return new LogServiceError('temporarily_unavailable', `Password checks are busy; retry in ${HASHING_RETRY_AFTER_SECONDS} seconds.`, {
    headers: { 'Retry-After': String(HASHING_RETRY_AFTER_SECONDS) },
  });
}

export function createPasswordHasher(options: PasswordHasherOptions = {}): PasswordHasher & { load(): HashLoad } {
  const logN = options.logN ?? DEFAULT_SCRYPT_LOG_N;
  const maxConcurrent = options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_HASHES;
  const limit = createLimiter(maxConcurrent, options.maxWaiting ?? DEFAULT_MAX_WAITING_HASHES, options.observer ?? NO_OBSERVER);
  const hashing = new HashProcess({
    threads: maxConcurrent,
    ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.loseReply === undefined ? {} : { loseReply: options.loseReply }),
  });
  // Unknown accounts are verified against a well-formed key nobody's password
  // derives, with the current cost: the same work as a real verify, no setup hash.
  const unmatchable = unmatchableKey(logN).toString('base64');
  const cost = { logN, r: SCRYPT_R, p: SCRYPT_P };
  return {
    hash: (password) => limit(() => hashing.kdf(password, cost)),
    async verify(stored, password) {
      const ok = await limit(() => hashing.verify(stored ?? unmatchable, password));
      return stored !== null && ok;
    },
    close: () => hashing.close(),
    load: () => limit.load(),
  };
}

/**
 * The stored password of an account that has none (made by single sign-on):
 * a well-formed key no password derives, so a password sign-in with it
 * costs the usual hash and fails like any wrong password.
 */
export function unusablePasswordHash(): string {
  return unmatchableKey(DEFAULT_SCRYPT_LOG_N).toString('base64');
}

/**
 * A key in scrypt-kdf's 96-byte format (header, random salt, valid header
 * checksum, random HMAC) so `verify` runs the full scrypt before failing.
 */
function unmatchableKey(logN: number): Buffer {
  const key = Buffer.alloc(96);
  key.write('scrypt', 0, 'ascii');
  key.writeUInt8(0, 6);
  key.writeUInt8(logN, 7);
  key.writeUInt32BE(SCRYPT_R, 8);
  key.writeUInt32BE(SCRYPT_P, 12);
  randomBytes(32).copy(key, 16);
  createHash('sha256').update(key.subarray(0, 48)).digest().copy(key, 48, 0, 16);
  randomBytes(32).copy(key, 64);
  return key;
}

/**
 * The password rule: at least 8 characters (code points), at most 72 UTF-8
 * bytes. Throws 400 `invalid_request` with `{field, reason}` details.
 */
export function checkPasswordRule(password: string, field: 'password' | 'new_password'): void {
  if ([...password].length < PASSWORD_MIN_CHARS) {
    throw invalidRequest(`The ${field.replace('_', ' ')} must be at least ${PASSWORD_MIN_CHARS} characters long.`, field, 'too_short', {
      min_length: PASSWORD_MIN_CHARS,
    });
  }
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
    throw invalidRequest(`The ${field.replace('_', ' ')} must be at most ${PASSWORD_MAX_BYTES} bytes in UTF-8.`, field, 'too_long', {
      max_bytes: PASSWORD_MAX_BYTES,
    });
  }
}

/** The problem with a password, as text, or null (for configuration checks). */
export function passwordRuleProblem(password: string): string | null {
  try {
    checkPasswordRule(password, 'password');
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : 'invalid password';
  }
}

/**
 * A counting semaphore: at most `max` calls of `fn` run at once, at most
 * `maxWaiting` more queue in order, and any beyond that are refused with
 * 503. A finishing call hands its slot straight to the next waiter, so a
 * newcomer can never slip in between and exceed `max`. A hash that timed
 * out is refused the same way.
 */
function createLimiter(max: number, maxWaiting: number, observer: ServiceObserver) {
  let active = 0;
  const waiting: (() => void)[] = [];
  async function run<T>(fn: () => Promise<T>): Promise<T> {
    if (active < max) active++;
    else if (waiting.length >= maxWaiting) throw hashingUnavailable();
    else await new Promise<void>((resolve) => waiting.push(resolve));
    const started = process.hrtime.bigint();
    try {
      return await fn();
    } catch (err) {
      throw err instanceof HashUnavailableError ? hashingUnavailable() : err;
    } finally {
      observer.passwordHashed(secondsSince(started));
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  }
  return Object.assign(run, { load: (): HashLoad => ({ running: active, waiting: waiting.length }) });
}
