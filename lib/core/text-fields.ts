/**
 * U+0000 in text the service stores or looks up. PostgreSQL text cannot hold
 * it (the query fails), SQLite would store it, and a NUL at the end of a
 * password is invisible to scrypt (HMAC pads keys with zero bytes). So every
 * string field and filter refuses it up front, with one answer on both
 * backends: 400 `invalid_request` naming the field.
 */
import { invalidRequest } from './errors.js';

export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

/** 400 `invalid_request` `{field, reason: 'invalid'}` when `text` holds U+0000. */
export function rejectNul(text: string | null | undefined, field: string): void {
  if (typeof text === 'string' && hasNul(text)) throw invalidRequest(`'${field}' must not contain the character U+0000.`, field, 'invalid');
}
