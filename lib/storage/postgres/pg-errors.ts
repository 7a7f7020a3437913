/**
 * Driver errors turned into the storage contract's errors: unique
 * violations become StorageConflict with a domain name, chosen by the
 * constraint PostgreSQL reports (named explicitly in migrations.ts).
 */
import { StorageConflict } from '../../core/errors.js';

/** SQLSTATE of a unique violation. */
const UNIQUE_VIOLATION = '23505';

/** Constraint or index name → the name StorageConflict carries. */
const CONFLICT_BY_CONSTRAINT: Readonly<Record<string, string>> = {
  users_username_key: 'username',
  users_email_key: 'email',
  users_one_primary_admin: 'primary_admin',
  refresh_tokens_token_hash_key: 'token_hash',
  secret_keys_key_hash_key: 'key_hash',
  team_members_pkey: 'team_member',
  user_identities_issuer_subject_key: 'identity',
};

/** The fields of a `pg` DatabaseError this module reads. */
interface PgErrorFields {
  code?: unknown;
  constraint?: unknown;
}

/**
 * StorageConflict for a unique violation of a known constraint; any other
 * error is returned unchanged (an unknown constraint is a bug, not a conflict).
 */
export function toStorageError(err: unknown): unknown {
  if (typeof err !== 'object' || err === null) return err;
  const { code, constraint } = err as PgErrorFields;
  if (code !== UNIQUE_VIOLATION || typeof constraint !== 'string') return err;
  const name = CONFLICT_BY_CONSTRAINT[constraint];
  return name === undefined ? err : new StorageConflict(name);
}

/** A short, credential-free description of a connection failure. */
export function describeConnectionError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
}
