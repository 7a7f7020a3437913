/**
 * Refresh tokens: 32 bytes, base64url; the database keeps only their
 * SHA-256 hash and finds them by it. Lifetime 2592000 s. A password grant
 * issues random bytes; a rotation issues the presented token's successor,
 * an HMAC of it under a server-side key, so presenting the same token again
 * names the same successor without the database holding any secret.
 * Rotation revokes the presented token and issues its successor in the same
 * transaction. Presenting a token that was already rotated or revoked is
 * treated as theft and revokes every live token of its user, except within
 * {@link REFRESH_REUSE_GRACE_MS} of its rotation while its successor is
 * still unused: then the answer is that same successor again.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { RefreshTokenRow } from '../storage/types-org.js';
import type { WriteOps } from '../storage/storage.js';

export const REFRESH_TOKEN_TTL_SECONDS = 2_592_000;

/**
 * How long after a rotation the rotated token may be presented again and
 * get the same successor (RFC 9700 §4.14.2's reuse interval). A page reload
 * during a refresh re-sends the token the lost answer had rotated; under load
 * a refresh takes seconds and a reload a few more, so 60 s covers it with
 * room, while a stolen token replayed later still trips reuse detection.
 */
export const REFRESH_REUSE_GRACE_MS = 60_000;

/** A new random plaintext refresh token (shown to the client once). */
export function generateRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a refresh token. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/**
 * Derives successors from the service's signing secret (domain-separated,
 * as the cursor codec does). Changing the secret changes every successor:
 * a token rotated before the change and presented again after it counts as
 * reuse, as it did before the grace existed.
 */
export interface SuccessorDeriver {
  /** The successor of `token`: the same token for the same input, 32 bytes base64url. */
  successorOf(token: string): string;
}

/** A successor deriver keyed by `secret`. */
export function createSuccessorDeriver(secret: string): SuccessorDeriver {
  const key = createHmac('sha256', 'logkeep-refresh-successor-v1').update(secret, 'utf8').digest();
  return { successorOf: (token) => createHmac('sha256', key).update(token, 'utf8').digest('base64url') };
}

async function storeRefreshToken(tx: WriteOps, token: string, userId: number, now: number): Promise<string> {
  await tx.insertRefreshToken({ userId, tokenHash: hashRefreshToken(token), createdAt: now, expiresAt: now + REFRESH_TOKEN_TTL_SECONDS * 1000 });
  return token;
}

/** Stores a new random refresh token for the user and returns its plaintext. */
export function issueRefreshToken(tx: WriteOps, userId: number, now: number): Promise<string> {
  return storeRefreshToken(tx, generateRefreshToken(), userId, now);
}

/** What presenting a refresh token for rotation found. */
export type RotationClaim =
  /** Rotated now: `successor` is stored and live. */
  | { kind: 'claimed'; userId: number; successor: string }
  /** Rotated moments ago and its successor is still unused: the same successor, nothing written. */
  | { kind: 'graced'; userId: number; successor: string }
  | { kind: 'unknown' }
  | { kind: 'expired' }
  /** Already rotated or revoked: the user's live tokens were revoked in this transaction. */
  | { kind: 'reused'; userId: number };

/**
 * Revokes the presented token if it is live and stores its successor
 * (atomic: of two concurrent claims exactly one rotates; the other finds it
 * rotated, within the grace, and gets the same successor). Otherwise
 * classifies it and, on reuse outside the grace, revokes the whole family.
 * Runs inside the caller's transaction, which must commit even when the
 * answer is a refusal.
 */
export async function claimRefreshToken(tx: WriteOps, successors: SuccessorDeriver, token: string, now: number): Promise<RotationClaim> {
  const tokenHash = hashRefreshToken(token);
  const successor = successors.successorOf(token);
  const row = await tx.revokeRefreshToken(tokenHash, now);
  if (row) return { kind: 'claimed', userId: row.userId, successor: await storeRefreshToken(tx, successor, row.userId, now) };
  const known = await tx.getRefreshToken(tokenHash);
  if (!known) return { kind: 'unknown' };
  if (known.revokedAt === null) return { kind: 'expired' };
  if (await withinGrace(tx, known, hashRefreshToken(successor), now)) return { kind: 'graced', userId: known.userId, successor };
  await tx.revokeUserRefreshTokens(known.userId, now);
  return { kind: 'reused', userId: known.userId };
}

/**
 * A revoked token is re-presented within the grace when it was revoked
 * moments ago by its own rotation (only a rotation stores its successor) and
 * that successor is live: not rotated, not revoked by logout, reuse, block
 * or a new password, not expired.
 */
async function withinGrace(tx: WriteOps, known: RefreshTokenRow, successorHash: string, now: number): Promise<boolean> {
  if (known.revokedAt === null || now - known.revokedAt > REFRESH_REUSE_GRACE_MS) return false;
  const next = await tx.getRefreshToken(successorHash);
  return next !== null && next.userId === known.userId && next.revokedAt === null && next.expiresAt > now;
}
