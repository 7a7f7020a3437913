/** Users as the admin routes answer them, and a generated temporary password. */
import type { User } from './api-types';

export type { User };

/** Where the user stands, in words. */
export function userState(u: User): string {
  if (u.deleted_at) return 'deleted';
  if (!u.is_active) return 'blocked';
  return u.must_change_password ? 'active, must change password' : 'active';
}

const ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** 16 characters from the browser's random source (the person changes it at first sign-in). */
export function temporaryPassword(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join('');
}
