/** Users as the admin routes answer them, and a generated temporary password. */
export interface User {
  id: number;
  username: string;
  display_name: string | null;
  email: string | null;
  must_change_password: boolean;
  is_active: boolean;
  deleted_at: string | null;
  is_primary_admin: boolean;
  created_at: string;
}

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
