/**
 * The tables of schema version 1 that both backends share, written once with
 * the few column types that differ between SQLite and PostgreSQL left to a
 * dialect. What only one backend has (the search index's tables, partial and
 * covering indexes, storage parameters) stays in that backend's
 * migrations.ts.
 */

/** How one SQL dialect spells the column types the shared tables use. */
export interface SchemaDialect {
  /** A primary key whose values are never reused. */
  readonly id: string;
  /** Epoch milliseconds, references to other rows' ids, and counts. */
  readonly int64: string;
  /** A small integer: the entry's level. */
  readonly int16: string;
  /** A NOT NULL boolean column, with its default when it has one. */
  flag(column: string, defaultValue?: boolean): string;
  /** Names a constraint where the backend reports conflicts by name ('' where it does not). */
  named(constraint: string): string;
}

/** Every shared table and its indexes, as one script. */
export function sharedTablesV1(d: SchemaDialect): string {
  const { id, int64 } = d;
  return `
CREATE TABLE schema_version (
  version INTEGER NOT NULL
);

CREATE TABLE users (
  id ${id},
  username TEXT NOT NULL ${d.named('users_username_key')}UNIQUE,
  username_lower TEXT NOT NULL,
  display_name TEXT NULL,
  email TEXT NULL ${d.named('users_email_key')}UNIQUE,
  email_verified_at ${int64} NULL,
  password_hash TEXT NOT NULL,
  must_change_password ${d.flag('must_change_password')},
  is_active ${d.flag('is_active', true)},
  deleted_at ${int64} NULL,
  is_primary_admin ${d.flag('is_primary_admin', false)},
  token_version INTEGER NOT NULL DEFAULT 0,
  created_at ${int64} NOT NULL
);

CREATE TABLE refresh_tokens (
  id ${id},
  user_id ${int64} NOT NULL REFERENCES users (id),
  token_hash TEXT NOT NULL ${d.named('refresh_tokens_token_hash_key')}UNIQUE,
  created_at ${int64} NOT NULL,
  expires_at ${int64} NOT NULL,
  revoked_at ${int64} NULL
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires ON refresh_tokens (expires_at);

CREATE TABLE org_groups (
  id ${id},
  name TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  created_at ${int64} NOT NULL
);

CREATE TABLE teams (
  id ${id},
  group_id ${int64} NOT NULL REFERENCES org_groups (id),
  name TEXT NOT NULL,
  created_at ${int64} NOT NULL
);
CREATE INDEX teams_group ON teams (group_id, id);

CREATE TABLE team_members (
  team_id ${int64} NOT NULL REFERENCES teams (id),
  user_id ${int64} NOT NULL REFERENCES users (id),
  ${d.named('team_members_pkey')}PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE projects (
  id ${id},
  group_id ${int64} NOT NULL REFERENCES org_groups (id),
  name TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  retention_days INTEGER NOT NULL,
  max_entries ${int64} NULL,
  max_bytes ${int64} NULL,
  is_blocked ${d.flag('is_blocked', false)},
  created_at ${int64} NOT NULL,
  entry_count ${int64} NOT NULL DEFAULT 0,
  total_bytes ${int64} NOT NULL DEFAULT 0
);
CREATE INDEX projects_group ON projects (group_id, id);

CREATE TABLE secret_keys (
  id ${id},
  project_id ${int64} NOT NULL REFERENCES projects (id),
  label TEXT NULL,
  key_hash TEXT NOT NULL ${d.named('secret_keys_key_hash_key')}UNIQUE,
  created_at ${int64} NOT NULL,
  revoked_at ${int64} NULL
);
CREATE INDEX secret_keys_project ON secret_keys (project_id);

-- Subject and scope are polymorphic, hence no foreign keys: the service
-- deletes a user's grants itself.
CREATE TABLE role_assignments (
  id ${id},
  subject_type TEXT NOT NULL CHECK (subject_type IN ('user', 'team')),
  subject_id ${int64} NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'owner', 'user')),
  scope_type TEXT NOT NULL CHECK (scope_type IN ('global', 'group', 'project')),
  scope_id ${int64} NULL,
  created_at ${int64} NOT NULL,
  CHECK ((scope_id IS NULL) = (scope_type = 'global'))
);
CREATE INDEX role_assignments_subject ON role_assignments (subject_type, subject_id);
CREATE INDEX role_assignments_scope ON role_assignments (scope_type, scope_id);

CREATE TABLE audit_log (
  id ${id},
  actor_user_id ${int64} NULL,
  action TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id ${int64} NULL,
  metadata TEXT NOT NULL,
  created_at ${int64} NOT NULL
);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_actor ON audit_log (actor_user_id, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);
CREATE INDEX audit_log_created ON audit_log (created_at);
-- Audit retention deletes by class (a list of actions) and age.
CREATE INDEX audit_log_action_created ON audit_log (action, created_at);

-- body is the submitted object's compact JSON text, key order kept (a JSON
-- column type would reorder keys and drop duplicates).
CREATE TABLE log_entries (
  id ${id},
  project_id ${int64} NOT NULL REFERENCES projects (id),
  received_at ${int64} NOT NULL,
  ts ${int64} NOT NULL,
  level ${d.int16} NOT NULL CHECK (level BETWEEN 0 AND 4),
  bytes INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX log_entries_project ON log_entries (project_id, id);
-- Retention deletes per project by received_at.
CREATE INDEX log_entries_received ON log_entries (project_id, received_at);
`;
}
