/**
 * The SQLite schema as an ordered list of steps. Opening a database runs,
 * inside one `BEGIN IMMEDIATE` transaction (so two processes opening the
 * same file at once take turns), every step above the stored version; a
 * version above SCHEMA_VERSION is refused. Later issues append steps.
 */
import type { Database } from 'sqlite';
import { SCHEMA_VERSION } from '../storage.js';
import { runMigrations, type Migration } from '../schema/run-migrations.js';
import { sharedTablesV1, type SchemaDialect } from '../schema/schema-v1.js';
import { savedSearchTables } from '../schema/schema-saved-searches.js';
import { ssoTables } from '../schema/schema-sso.js';
import { accessKeyTables } from '../schema/schema-access-keys.js';

export type SqliteMigration = Migration<Database>;

/** Booleans are INTEGER 0/1 with a CHECK; timestamps are INTEGER epoch milliseconds; AUTOINCREMENT so ids are never reused. */
const SQLITE_TYPES: SchemaDialect = {
  id: 'INTEGER PRIMARY KEY AUTOINCREMENT',
  int64: 'INTEGER',
  int16: 'INTEGER',
  flag: (column, defaultValue) => `INTEGER NOT NULL ${defaultValue === undefined ? '' : `DEFAULT ${defaultValue ? 1 : 0} `}CHECK (${column} IN (0, 1))`,
  named: () => '',
};

/** Version 1: everything. */
const SCHEMA_V1 = `${sharedTablesV1(SQLITE_TYPES)}
-- At most one primary admin, ever: the last word when two processes race.
CREATE UNIQUE INDEX users_one_primary_admin ON users (is_primary_admin) WHERE is_primary_admin = 1;
CREATE INDEX log_entries_project_ts ON log_entries (project_id, ts);

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

/**
 * Version 2: (project_id, ts) also holds the level, so counting a time range
 * per level (the log histogram) reads the index alone instead of every
 * entry's row. The name stays: queries pick it with INDEXED BY.
 */
const SCHEMA_V2 = `
DROP INDEX log_entries_project_ts;
CREATE INDEX log_entries_project_ts ON log_entries (project_id, ts, level);
`;

/**
 * Version 3: the rollup (storage/log-index/log-rollup.ts), entries per project, span
 * (a minute or an hour, in ms), span start and level, filled from the
 * entries already stored (hours from the minutes). Clustered on its key
 * (WITHOUT ROWID): a histogram reads a project's hours, or minutes, as one
 * range. Derived from log_entries, so no foreign key.
 */
const SCHEMA_V3 = `
CREATE TABLE log_rollup (
  project_id INTEGER NOT NULL,
  span INTEGER NOT NULL,
  start INTEGER NOT NULL,
  level INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (project_id, span, start, level)
) WITHOUT ROWID;
INSERT INTO log_rollup (project_id, span, start, level, n)
  SELECT project_id, 60000, ts - (((ts % 60000) + 60000) % 60000) AS start, level, count(*)
  FROM log_entries GROUP BY project_id, start, level;
INSERT INTO log_rollup (project_id, span, start, level, n)
  SELECT project_id, 3600000, start - (((start % 3600000) + 3600000) % 3600000) AS hour, level, sum(n)
  FROM log_rollup WHERE span = 60000 GROUP BY project_id, hour, level;
`;

/**
 * Version 4: single sign-on (schema/schema-sso.ts), with `break_glass_accounts` filled from the
 * audit rows of users created without an actor, and from the primary admin.
 */
const SCHEMA_V4 = `${ssoTables(SQLITE_TYPES)}INSERT OR IGNORE INTO break_glass_accounts (user_id)
  SELECT id FROM users WHERE is_primary_admin = 1
  UNION SELECT target_id FROM audit_log
  WHERE action = 'user.created' AND actor_user_id IS NULL AND target_id IN (SELECT id FROM users);
`;

/** Version 5: access keys (schema/schema-access-keys.ts). */
const SCHEMA_V5 = accessKeyTables(SQLITE_TYPES);

/** Saved searches (and what is built on them): see schema/schema-saved-searches.ts. */
const SCHEMA_V6 = savedSearchTables(SQLITE_TYPES);

/**
 * Version 7: sealed storage, format 1 (docs/storage-format.md). The rows of
 * `log_entries` become the tail: `log_tails` counts them per project
 * (filled here), the sealer moves them into `log_sealed` blocks with their
 * filter's shards in `log_filter_shards` and each project's preset
 * dictionaries in `log_dictionaries`. The FTS5 block index and its block
 * table go: the tail is read without a term index, blocks through their
 * filters. The tail keeps its (project_id, ts, level) and (project_id,
 * received_at) indexes: a database upgraded in place starts with all its
 * entries in the tail, and time ranges, histograms and retention stay
 * index-served while the background conversion seals them.
 */
const SCHEMA_V7 = `
CREATE TABLE log_tails (
  project_id INTEGER PRIMARY KEY,
  entries INTEGER NOT NULL,
  oldest_received_at INTEGER
);
INSERT INTO log_tails (project_id, entries, oldest_received_at)
  SELECT project_id, count(*), min(received_at) FROM log_entries GROUP BY project_id;
CREATE TABLE log_sealed (
  last_id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  first_id INTEGER NOT NULL,
  entries INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  min_ts INTEGER NOT NULL,
  max_ts INTEGER NOT NULL,
  min_received_at INTEGER NOT NULL,
  max_received_at INTEGER NOT NULL,
  levels INTEGER NOT NULL,
  frames INTEGER NOT NULL,
  dictionary_id INTEGER NOT NULL,
  block BLOB NOT NULL
);
CREATE UNIQUE INDEX log_sealed_project ON log_sealed (project_id, last_id);
CREATE INDEX log_sealed_ts ON log_sealed (project_id, max_ts);
CREATE TABLE log_filter_shards (
  project_id INTEGER NOT NULL,
  shard INTEGER NOT NULL,
  block_last_id INTEGER NOT NULL,
  bits BLOB NOT NULL,
  PRIMARY KEY (project_id, shard, block_last_id)
) WITHOUT ROWID;
CREATE TABLE log_dictionaries (
  project_id INTEGER NOT NULL REFERENCES projects (id),
  id INTEGER NOT NULL,
  first_block_last_id INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (project_id, id)
) WITHOUT ROWID;
DROP TABLE log_block_terms;
DROP TABLE log_blocks;
`;

/** Every step, in order. Append; never edit a step once it is on main (databases already ran it). */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    async up(db) {
      await db.exec(SCHEMA_V1);
    },
  },
  {
    version: 2,
    async up(db) {
      await db.exec(SCHEMA_V2);
    },
  },
  {
    version: 3,
    async up(db) {
      await db.exec(SCHEMA_V3);
    },
  },
  {
    version: 4,
    async up(db) {
      await db.exec(SCHEMA_V4);
    },
  },
  {
    version: 5,
    async up(db) {
      await db.exec(SCHEMA_V5);
    },
  },
  {
    version: 6,
    async up(db) {
      await db.exec(SCHEMA_V6);
    },
  },
  {
    version: 7,
    async up(db) {
      await db.exec(SCHEMA_V7);
    },
  },
  {
    // PostgreSQL drops the tail's foreign key here (its per-row check was a sixth of its ingestion work); SQLite's costs an index probe and stays.
    version: 8,
    async up() {},
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
export async function migrate(db: Database, options: { migrations?: readonly SqliteMigration[]; target?: number } = {}): Promise<number> {
  const { migrations = SQLITE_MIGRATIONS, target = SCHEMA_VERSION } = options;
  await db.exec('BEGIN IMMEDIATE');
  try {
    const version = await runMigrations(db, migrations, target, {
      read: readSchemaVersion,
      write: async (conn, at) => void (await conn.run(UPDATE_SCHEMA_VERSION, [at])),
    });
    await db.exec('COMMIT');
    return version;
  } catch (err) {
    await db.exec('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
