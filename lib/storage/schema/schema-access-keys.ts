/**
 * The access-key table (version 5), the same in both backends but for their
 * type names (see `SchemaDialect`): a person's scoped, expiring credential
 * for scripts and agents. Only the SHA-256 hash of a key is stored; `scope`
 * is JSON text (its permissions and the projects and groups it is narrowed
 * to), read and checked by auth/access-keys.ts. Listed per user, hence the
 * index.
 */
import type { SchemaDialect } from './schema-v1.js';

export function accessKeyTables(d: SchemaDialect): string {
  const { id, int64 } = d;
  return `
CREATE TABLE access_keys (
  id ${id},
  user_id ${int64} NOT NULL REFERENCES users (id),
  label TEXT NOT NULL,
  key_hash TEXT NOT NULL ${d.named('access_keys_key_hash_key')}UNIQUE,
  scope TEXT NOT NULL,
  created_by ${int64} NOT NULL REFERENCES users (id),
  created_at ${int64} NOT NULL,
  expires_at ${int64} NOT NULL,
  last_used_at ${int64} NULL,
  revoked_at ${int64} NULL
);
CREATE INDEX access_keys_user ON access_keys (user_id, id);
`;
}
