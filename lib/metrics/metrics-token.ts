/**
 * The optional bearer token of `GET /metrics`. The presented token and the
 * configured one are compared as SHA-256 digests with `timingSafeEqual`:
 * equal lengths whatever was sent, so the time taken says nothing about
 * the token's length or content.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A check of an `Authorization` header: always true without a token. */
export function bearerTokenCheck(token: string | null): (authorization: string | undefined) => boolean {
  if (token === null || token === '') return () => true;
  const expected = digest(token);
  return (authorization) => {
    const presented = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
    // The digest is computed even for a missing token, so every refusal costs the same.
    const ok = timingSafeEqual(digest(presented ?? ''), expected);
    return ok && presented !== undefined;
  };
}
