/**
 * The PostgreSQL schema as an ordered list of steps. Opening a database runs,
 * inside one transaction holding a transaction-scoped advisory lock (so two
 * processes opening the same empty database at once take turns, and the
 * second finds the work done), every step above the stored version; a
 * version above SCHEMA_VERSION is refused. DDL is transactional here, so a
 * failed step leaves nothing behind. Later issues append steps.
 */
import type { ITask } from 'pg-promise';
import { SCHEMA_VERSION } from '../storage.js';
import { SchemaTooNewError, StorageUnavailableError } from '../../core/errors.js';

/** What a step runs against: the migration transaction. */
export type MigrationTask = ITask<unknown>;

/** One schema step: brings a database at `version - 1` to `version`. */
export interface PostgresMigration {
  version: number;
  up(t: MigrationTask): Promise<void>;
}

/**
 * Version 1: everything. Ids are identity columns (never reused), timestamps
 * BIGINT epoch milliseconds, entry bodies `text` (jsonb would reorder keys and
 * drop duplicates). Constraint names are spelled out because conflicts are
 * mapped to domain names by them (see pg-errors.ts).
 */
const SCHEMA_V1 = `
CREATE TABLE schema_version (
  version INTEGER NOT NULL
);

CREATE TABLE users (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  username TEXT NOT NULL CONSTRAINT users_username_key UNIQUE,
  username_lower TEXT NOT NULL,
  display_name TEXT NULL,
  email TEXT NULL CONSTRAINT users_email_key UNIQUE,
  email_verified_at BIGINT NULL,
  password_hash TEXT NOT NULL,
  must_change_password BOOLEAN NOT NULL,
  is_active BOOLEAN NOT NULL DEFAULT TRUE,
  deleted_at BIGINT NULL,
  is_primary_admin BOOLEAN NOT NULL DEFAULT FALSE,
  token_version INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL
);
-- At most one primary admin, ever: the last word when two processes race.
CREATE UNIQUE INDEX users_one_primary_admin ON users (is_primary_admin) WHERE is_primary_admin;

CREATE TABLE refresh_tokens (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users (id),
  token_hash TEXT NOT NULL CONSTRAINT refresh_tokens_token_hash_key UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT NULL
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires ON refresh_tokens (expires_at);

CREATE TABLE org_groups (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE teams (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  group_id BIGINT NOT NULL REFERENCES org_groups (id),
  name TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX teams_group ON teams (group_id, id);

CREATE TABLE team_members (
  team_id BIGINT NOT NULL REFERENCES teams (id),
  user_id BIGINT NOT NULL REFERENCES users (id),
  CONSTRAINT team_members_pkey PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE projects (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  group_id BIGINT NOT NULL REFERENCES org_groups (id),
  name TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  retention_days INTEGER NOT NULL,
  max_entries BIGINT NULL,
  max_bytes BIGINT NULL,
  is_blocked BOOLEAN NOT NULL DEFAULT FALSE,
  created_at BIGINT NOT NULL,
  entry_count BIGINT NOT NULL DEFAULT 0,
  total_bytes BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX projects_group ON projects (group_id, id);

CREATE TABLE secret_keys (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id BIGINT NOT NULL REFERENCES projects (id),
  label TEXT NULL,
  key_hash TEXT NOT NULL CONSTRAINT secret_keys_key_hash_key UNIQUE,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT NULL
);
CREATE INDEX secret_keys_project ON secret_keys (project_id);

-- Subject and scope are polymorphic, hence no foreign keys: the service
-- deletes a user's grants itself.
CREATE TABLE role_assignments (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subject_type TEXT NOT NULL CHECK (subject_type IN ('user', 'team')),
  subject_id BIGINT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'owner', 'user')),
  scope_type TEXT NOT NULL CHECK (scope_type IN ('global', 'group', 'project')),
  scope_id BIGINT NULL,
  created_at BIGINT NOT NULL,
  CHECK ((scope_id IS NULL) = (scope_type = 'global'))
);
CREATE INDEX role_assignments_subject ON role_assignments (subject_type, subject_id);
CREATE INDEX role_assignments_scope ON role_assignments (scope_type, scope_id);

CREATE TABLE audit_log (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  actor_user_id BIGINT NULL,
  action TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id BIGINT NULL,
  metadata TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_actor ON audit_log (actor_user_id, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);
CREATE INDEX audit_log_created ON audit_log (created_at);
-- Audit retention deletes by class (a list of actions) and age.
CREATE INDEX audit_log_action_created ON audit_log (action, created_at);

-- body is the submitted object's compact JSON text, key order kept: text,
-- never jsonb.
CREATE TABLE log_entries (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id BIGINT NOT NULL REFERENCES projects (id),
  received_at BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  level SMALLINT NOT NULL CHECK (level BETWEEN 0 AND 4),
  bytes INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX log_entries_project ON log_entries (project_id, id);
-- INCLUDE (id): the newest id inside a time range comes from the index alone.
CREATE INDEX log_entries_project_ts ON log_entries (project_id, ts) INCLUDE (id);
-- Retention deletes per project by received_at.
CREATE INDEX log_entries_received ON log_entries (project_id, received_at);

-- The search index, one row per block of consecutive entries of one project
-- (see storage/log-blocks.ts): logkeep's own search terms (see
-- search/search-terms.ts) plus project and level terms, built with
-- array_to_tsvector so nothing re-tokenizes them.
CREATE TABLE log_blocks (
  last_id BIGINT PRIMARY KEY,
  project_id BIGINT NOT NULL,
  first_id BIGINT NOT NULL,
  terms TSVECTOR NOT NULL
);
CREATE INDEX log_blocks_project ON log_blocks (project_id, last_id);
-- Its pending list is merged by the service after every ~1 MiB of new
-- entries (pending-list-cleaner.ts), not by the insert that fills it.
CREATE INDEX log_blocks_terms ON log_blocks USING GIN (terms);
-- An append-mostly table: analyse (planner statistics, incl. how common each
-- search term is) and vacuum (visibility map, for index-only scans) after
-- every few percent of new rows rather than the default 10-20 %.
ALTER TABLE log_entries SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);

INSERT INTO schema_version (version) VALUES (1);
`;

/** Every step, in order. Append; never edit a released step. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    async up(t) {
      await t.none(SCHEMA_V1);
    },
  },
];

/**
 * Serialises migrations across processes for the length of the transaction.
 * The key is an arbitrary constant that only logkeep's migrations use.
 */
const LOCK_MIGRATIONS = `SELECT pg_advisory_xact_lock(7813586357102192)`;
const SCHEMA_VERSION_TABLE_EXISTS = `SELECT to_regclass('schema_version') IS NOT NULL AS present`;
const SELECT_SCHEMA_VERSION = `SELECT version FROM schema_version`;
const UPDATE_SCHEMA_VERSION = `UPDATE schema_version SET version = $1`;

/** The stored version, 0 for an empty database. */
export async function readSchemaVersion(t: MigrationTask): Promise<number> {
  const table = await t.one<{ present: boolean }>(SCHEMA_VERSION_TABLE_EXISTS);
  if (!table.present) return 0;
  const rows = await t.any<{ version: number }>(SELECT_SCHEMA_VERSION);
  if (rows.length !== 1) {
    // Never written by logkeep: refuse rather than guess and re-create tables.
    throw new StorageUnavailableError(`schema_version holds ${rows.length} rows instead of one; the database is not a logkeep database`);
  }
  return rows[0]!.version;
}

/** Anything that can open a transaction: the pool, or a task. */
interface TransactionOpener {
  tx<T>(tag: string, cb: (t: MigrationTask) => Promise<T>): Promise<T>;
}

/**
 * Brings the database to SCHEMA_VERSION in one transaction under the
 * migration lock, or throws SchemaTooNewError (having changed nothing).
 * Returns the version the database is now at.
 */
export async function migrate(db: TransactionOpener, migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS): Promise<number> {
  return db.tx('logkeep-migrate', async (t) => {
    await t.one(LOCK_MIGRATIONS);
    // Read only after the lock: a process that waited sees the winner's commit.
    const current = await readSchemaVersion(t);
    const target = Math.max(SCHEMA_VERSION, ...migrations.map((m) => m.version));
    if (current > target) throw new SchemaTooNewError(current, target);
    for (const step of migrations) {
      if (step.version <= current) continue;
      await step.up(t);
      await t.none(UPDATE_SCHEMA_VERSION, [step.version]);
    }
    return Math.max(current, target);
  });
}
