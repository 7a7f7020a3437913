/**
 * One-time sign-in codes: how a single sign-on reaches the console without
 * a token in any address. The callback stores a random code's SHA-256 hash
 * and sends the browser to the console with the code in the address's
 * fragment (which browsers never send to a server, so it is in no access
 * log and no Referer); the console exchanges it at once at the token
 * endpoint (`grant_type=authorization_code`) and removes it from the
 * address. A code is good once, for {@link LOGIN_CODE_TTL_SECONDS}.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { WriteOps } from '../storage/storage.js';

/** The console exchanges the code as soon as its page loads; a minute covers a slow page and no more. */
export const LOGIN_CODE_TTL_SECONDS = 60;
/** A code is 32 random bytes in base64url (43 characters); anything longer is not one. */
export const LOGIN_CODE_MAX_CHARS = 64;

export function hashLoginCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('base64url');
}

/** Stores a new code for the user and returns its plaintext (shown once, in the redirect). */
export async function issueLoginCode(tx: WriteOps, userId: number, now: number): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await tx.insertLoginCode({ codeHash: hashLoginCode(code), userId, createdAt: now, expiresAt: now + LOGIN_CODE_TTL_SECONDS * 1000 });
  return code;
}

/** The code's user when it is live; the code is spent either way. */
export function claimLoginCode(tx: WriteOps, code: string, now: number): Promise<number | null> {
  if (code.length > LOGIN_CODE_MAX_CHARS) return Promise.resolve(null);
  return tx.claimLoginCode(hashLoginCode(code), now);
}
