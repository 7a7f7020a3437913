/**
 * Access tokens: HS256 JWTs signed with the configured secret, the
 * algorithm pinned on verify, `iss` checked, 900 s lifetime, random `jti`.
 */
import { randomBytes, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { unauthorized } from '../core/errors.js';
import type { RoleGrant, UserRow } from '../storage/types-org.js';
import { parseId } from '../core/ids.js';

export const ACCESS_TOKEN_TTL_SECONDS = 900;
const ALGORITHM = 'HS256';

export interface AccessClaims {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  jti: string;
  preferred_username: string;
  tv: number;
  roles: RoleGrant[];
}

export interface AccessTokenService {
  issue(user: Pick<UserRow, 'id' | 'username' | 'tokenVersion'>, roles: RoleGrant[], nowMs: number): Promise<{ token: string; expiresIn: number }>;
  /** Verifies signature, algorithm, issuer and expiry; any failure is 401. */
  verify(token: string): Promise<AccessClaims>;
}

/** `now` is the service's clock: expiry is checked against it, as issuing uses it. */
export function createAccessTokenService(secret: string, issuer: string, now: () => number = Date.now): AccessTokenService {
  // Imported once: given the raw bytes, jose imports a CryptoKey on every
  // sign and verify, which more than doubled each request's token check.
  let imported: Promise<webcrypto.CryptoKey> | null = null;
  const hmacKey = () =>
    (imported ??= webcrypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']));
  return {
    async issue(user, roles, nowMs) {
      const iat = Math.floor(nowMs / 1000);
      const token = await new SignJWT({ preferred_username: user.username, tv: user.tokenVersion, roles })
        .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject(String(user.id))
        .setIssuedAt(iat)
        .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
        .setJti(randomBytes(16).toString('base64url'))
        .sign(await hmacKey());
      return { token, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
    },
    async verify(token) {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, await hmacKey(), { algorithms: [ALGORITHM], issuer, currentDate: new Date(now()) }));
      } catch {
        throw unauthorized('The access token is invalid or expired.');
      }
      if (
        typeof payload.sub !== 'string' ||
        parseId(payload.sub) === null ||
        typeof payload.tv !== 'number' ||
        !Array.isArray(payload.roles) ||
        typeof payload.jti !== 'string'
      ) {
        throw unauthorized('The access token is invalid or expired.');
      }
      return payload as unknown as AccessClaims;
    },
  };
}
