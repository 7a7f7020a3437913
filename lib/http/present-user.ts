/**
 * The User resource as the API shows it. Built field by field
 * from the row, so the password hash and token_version can never leak.
 */
import type { UserRow } from '../storage/types-org.js';
import { isoOrNull, isoTimestamp } from '../core/timestamps.js';

/** The User JSON shape. */
export interface UserResource {
  id: number;
  username: string;
  display_name: string | null;
  email: string | null;
  email_verified_at: string | null;
  must_change_password: boolean;
  is_active: boolean;
  deleted_at: string | null;
  is_primary_admin: boolean;
  created_at: string;
}

export function presentUser(row: UserRow): UserResource {
  return {
    id: row.id,
    username: row.username,
    display_name: row.displayName,
    email: row.email,
    // Always null without an email, whatever the row says.
    email_verified_at: row.email === null ? null : isoOrNull(row.emailVerifiedAt),
    must_change_password: row.mustChangePassword,
    is_active: row.isActive,
    deleted_at: isoOrNull(row.deletedAt),
    is_primary_admin: row.isPrimaryAdmin,
    created_at: isoTimestamp(row.createdAt),
  };
}
