/**
 * Refresh tokens: 32 random bytes, base64url; the database
 * keeps only their SHA-256 hash and finds them by it. Lifetime 2592000 s.
 * Rotation revokes the presented token and issues a new one in the same
 * transaction; presenting a token that was already rotated or revoked is
 * treated as theft and revokes every live token of its user.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RefreshTokenRow } from '../storage/types-org.js';
import type { WriteOps } from '../storage/storage.js';

export const REFRESH_TOKEN_TTL_SECONDS = 2_592_000;

/** A new plaintext refresh token (shown to the client once). */
export function generateRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a refresh token. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/** Stores a new refresh token for the user and returns its plaintext. */
export async function issueRefreshToken(tx: WriteOps, userId: number, now: number): Promise<string> {
  const token = generateRefreshToken();
  await tx.insertRefreshToken({ userId, tokenHash: hashRefreshToken(token), createdAt: now, expiresAt: now + REFRESH_TOKEN_TTL_SECONDS * 1000 });
  return token;
}

/** What presenting a refresh token for rotation found. */
export type RotationClaim =
  | { kind: 'claimed'; row: RefreshTokenRow }
  | { kind: 'unknown' }
  | { kind: 'expired' }
  /** Already rotated or revoked: the user's live tokens were revoked in this transaction. */
  | { kind: 'reused'; userId: number };

/**
 * Revokes the presented token if it is live (atomic: of two concurrent
 * claims exactly one gets `claimed`); otherwise classifies it and, on reuse,
 * revokes the whole family. Runs inside the caller's transaction, which must
 * commit even when the answer is a refusal.
 */
export async function claimRefreshToken(tx: WriteOps, token: string, now: number): Promise<RotationClaim> {
  const tokenHash = hashRefreshToken(token);
  const row = await tx.revokeRefreshToken(tokenHash, now);
  if (row) return { kind: 'claimed', row };
  const known = await tx.getRefreshToken(tokenHash);
  if (!known) return { kind: 'unknown' };
  if (known.revokedAt === null) return { kind: 'expired' };
  await tx.revokeUserRefreshTokens(known.userId, now);
  return { kind: 'reused', userId: known.userId };
}
