/**
 * The SQLite schema as an ordered list of steps. Opening a database runs,
 * inside one `BEGIN IMMEDIATE` transaction (so two processes opening the
 * same file at once take turns), every step above the stored version; a
 * version above SCHEMA_VERSION is refused. Later issues append steps.
 */
import type { Database } from 'sqlite';
import { SCHEMA_VERSION } from '../storage.js';
import { SchemaTooNewError } from '../../core/errors.js';

/** One schema step: brings a database at `version - 1` to `version`. */
export interface SqliteMigration {
  version: number;
  up(db: Database): Promise<void>;
}

/**
 * Version 1: everything. Booleans are INTEGER 0/1 with a CHECK; timestamps
 * are INTEGER epoch milliseconds; AUTOINCREMENT so ids are never reused.
 */
const SCHEMA_V1 = `
CREATE TABLE schema_version (
  version INTEGER NOT NULL
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username TEXT NOT NULL UNIQUE,
  username_lower TEXT NOT NULL,
  display_name TEXT NULL,
  email TEXT NULL UNIQUE,
  email_verified_at INTEGER NULL,
  password_hash TEXT NOT NULL,
  must_change_password INTEGER NOT NULL CHECK (must_change_password IN (0, 1)),
  is_active INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
  deleted_at INTEGER NULL,
  is_primary_admin INTEGER NOT NULL DEFAULT 0 CHECK (is_primary_admin IN (0, 1)),
  token_version INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
-- At most one primary admin, ever: the last word when two processes race.
CREATE UNIQUE INDEX users_one_primary_admin ON users (is_primary_admin) WHERE is_primary_admin = 1;

CREATE TABLE refresh_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users (id),
  token_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER NULL
);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires ON refresh_tokens (expires_at);

CREATE TABLE org_groups (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE teams (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  group_id INTEGER NOT NULL REFERENCES org_groups (id),
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX teams_group ON teams (group_id, id);

CREATE TABLE team_members (
  team_id INTEGER NOT NULL REFERENCES teams (id),
  user_id INTEGER NOT NULL REFERENCES users (id),
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE projects (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  group_id INTEGER NOT NULL REFERENCES org_groups (id),
  name TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  retention_days INTEGER NOT NULL,
  max_entries INTEGER NULL,
  max_bytes INTEGER NULL,
  is_blocked INTEGER NOT NULL DEFAULT 0 CHECK (is_blocked IN (0, 1)),
  created_at INTEGER NOT NULL,
  entry_count INTEGER NOT NULL DEFAULT 0,
  total_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX projects_group ON projects (group_id, id);

CREATE TABLE secret_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  label TEXT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER NULL
);
CREATE INDEX secret_keys_project ON secret_keys (project_id);

-- Subject and scope are polymorphic, hence no foreign keys: the service
-- deletes a user's grants itself.
CREATE TABLE role_assignments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  subject_type TEXT NOT NULL CHECK (subject_type IN ('user', 'team')),
  subject_id INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'owner', 'user')),
  scope_type TEXT NOT NULL CHECK (scope_type IN ('global', 'group', 'project')),
  scope_id INTEGER NULL,
  created_at INTEGER NOT NULL,
  CHECK ((scope_id IS NULL) = (scope_type = 'global'))
);
CREATE INDEX role_assignments_subject ON role_assignments (subject_type, subject_id);
CREATE INDEX role_assignments_scope ON role_assignments (scope_type, scope_id);

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  actor_user_id INTEGER NULL,
  action TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id INTEGER NULL,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_actor ON audit_log (actor_user_id, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id);
CREATE INDEX audit_log_created ON audit_log (created_at);
-- Audit retention deletes by class (a list of actions) and age.
CREATE INDEX audit_log_action_created ON audit_log (action, created_at);

CREATE TABLE log_entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  received_at INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  level INTEGER NOT NULL CHECK (level BETWEEN 0 AND 4),
  bytes INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX log_entries_project ON log_entries (project_id, id);
CREATE INDEX log_entries_project_ts ON log_entries (project_id, ts);
-- Retention deletes per project by received_at.
CREATE INDEX log_entries_received ON log_entries (project_id, received_at);

-- The search index, one row per block of consecutive entries of one project
-- (see storage/log-blocks.ts): rowid = last_id = the id of its last entry.
-- Its terms are computed by logkeep (lower-case letters and digits, or '§'
-- and letters and digits; see search/search-terms.ts), so the plain ascii
-- tokenizer never splits them further. detail = 'none': queries only
-- intersect terms (no phrases), so positions would be dead weight.
-- automerge = 8 (FTS5's default is 4): each commit adds a segment, and
-- merging them 8 at a time rewrites postings less often; 500-entry
-- ingestion ran 16-24 % faster (16.2-16.9k -> 18.9-21.0k entries/s over
-- 300k) while word, prefix and no-match lookups measured the same.
CREATE TABLE log_blocks (
  last_id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL,
  first_id INTEGER NOT NULL
);
CREATE INDEX log_blocks_project ON log_blocks (project_id, last_id);
CREATE VIRTUAL TABLE log_block_terms USING fts5 (terms, content = '', contentless_delete = 1, tokenize = 'ascii', detail = 'none');
INSERT INTO log_block_terms (log_block_terms, rank) VALUES ('automerge', 8);

INSERT INTO schema_version (version) VALUES (1);
`;

/** Every step, in order. Append; never edit a released step. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    async up(db) {
      await db.exec(SCHEMA_V1);
    },
  },
];

const SCHEMA_VERSION_TABLE_EXISTS = `SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`;
const SELECT_SCHEMA_VERSION = `SELECT version FROM schema_version`;
const UPDATE_SCHEMA_VERSION = `UPDATE schema_version SET version = ?`;

/** The stored version, 0 for an empty database. Callers hold a transaction. */
export async function readSchemaVersion(db: Database): Promise<number> {
  const table = await db.get<{ present: number }>(SCHEMA_VERSION_TABLE_EXISTS);
  if (!table) return 0;
  const row = await db.get<{ version: number }>(SELECT_SCHEMA_VERSION);
  return row?.version ?? 0;
}

/**
 * Brings the database to `target` (SCHEMA_VERSION unless a test says
 * otherwise) in one immediate transaction, or throws SchemaTooNewError
 * having changed nothing. A failing step rolls every step back. Returns the
 * version the database is at afterwards.
 */
export async function migrate(
  db: Database,
  options: { migrations?: readonly SqliteMigration[]; target?: number } = {},
): Promise<number> {
  const { migrations = SQLITE_MIGRATIONS, target = SCHEMA_VERSION } = options;
  await db.exec('BEGIN IMMEDIATE');
  try {
    const current = await readSchemaVersion(db);
    if (current > target) throw new SchemaTooNewError(current, target);
    let version = current;
    for (const step of migrations) {
      if (step.version <= current || step.version > target) continue;
      await step.up(db);
      await db.run(UPDATE_SCHEMA_VERSION, [step.version]);
      version = step.version;
    }
    if (version !== target) throw new Error(`no migration step reaches schema version ${target} (at ${version})`);
    await db.exec('COMMIT');
    return version;
  } catch (err) {
    await db.exec('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
