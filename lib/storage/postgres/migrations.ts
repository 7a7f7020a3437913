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
import { StorageUnavailableError } from '../../core/errors.js';
import { runMigrations, type Migration } from '../schema/run-migrations.js';
import { sharedTablesV1, type SchemaDialect } from '../schema/schema-v1.js';
import { savedSearchTables } from '../schema/schema-saved-searches.js';
import { ssoTables } from '../schema/schema-sso.js';
import { accessKeyTables } from '../schema/schema-access-keys.js';

/** What a step runs against: the migration transaction. */
export type MigrationTask = ITask<unknown>;

export type PostgresMigration = Migration<MigrationTask>;

/**
 * Ids are identity columns (never reused), timestamps BIGINT epoch
 * milliseconds, entry bodies `text` (jsonb would reorder keys and drop
 * duplicates). Constraint names are spelled out because conflicts are mapped
 * to domain names by them (see pg-errors.ts).
 */
const POSTGRES_TYPES: SchemaDialect = {
  id: 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
  int64: 'BIGINT',
  int16: 'SMALLINT',
  flag: (_column, defaultValue) => (defaultValue === undefined ? 'BOOLEAN NOT NULL' : `BOOLEAN NOT NULL DEFAULT ${defaultValue ? 'TRUE' : 'FALSE'}`),
  named: (constraint) => `CONSTRAINT ${constraint} `,
};

/** Version 1: everything. */
const SCHEMA_V1 = `${sharedTablesV1(POSTGRES_TYPES)}
-- At most one primary admin, ever: the last word when two processes race.
CREATE UNIQUE INDEX users_one_primary_admin ON users (is_primary_admin) WHERE is_primary_admin;
-- INCLUDE (id): the newest id inside a time range comes from the index alone.
CREATE INDEX log_entries_project_ts ON log_entries (project_id, ts) INCLUDE (id);

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

/**
 * Version 2: (project_id, ts) also carries the level, so counting a time
 * range per level (the log histogram) is an index-only scan.
 */
const SCHEMA_V2 = `
DROP INDEX log_entries_project_ts;
CREATE INDEX log_entries_project_ts ON log_entries (project_id, ts) INCLUDE (id, level);
`;

/**
 * Version 3: the rollup (storage/log-index/log-rollup.ts), entries per project, span
 * (a minute or an hour, in ms), span start and level, filled from the
 * entries already stored (hours from the minutes). Every ingest updates
 * its minute's and hour's rows, so half of each page is left free for
 * those updates to stay on the page (HOT: no new index entry, and dead
 * versions pruned as the page is read, even without autovacuum). Derived
 * from log_entries, so no foreign key.
 */
const SCHEMA_V3 = `
CREATE TABLE log_rollup (
  project_id BIGINT NOT NULL,
  span INTEGER NOT NULL,
  start BIGINT NOT NULL,
  level SMALLINT NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (project_id, span, start, level)
) WITH (fillfactor = 50);
INSERT INTO log_rollup (project_id, span, start, level, n)
  SELECT project_id, 60000, ts - (((ts % 60000) + 60000) % 60000) AS start, level, count(*)
  FROM log_entries GROUP BY 1, 3, 4;
INSERT INTO log_rollup (project_id, span, start, level, n)
  SELECT project_id, 3600000, start - (((start % 3600000) + 3600000) % 3600000), level, sum(n)
  FROM log_rollup WHERE span = 60000 GROUP BY 1, 3, 4;
ANALYZE log_rollup;
`;

/**
 * Version 4: single sign-on (schema/schema-sso.ts), with `break_glass_accounts` filled from the
 * audit rows of users created without an actor, and from the primary admin.
 */
const SCHEMA_V4 = `${ssoTables(POSTGRES_TYPES)}INSERT INTO break_glass_accounts (user_id)
  SELECT id FROM users WHERE is_primary_admin
  UNION SELECT target_id FROM audit_log
  WHERE action = 'user.created' AND actor_user_id IS NULL AND target_id IN (SELECT id FROM users)
  ON CONFLICT DO NOTHING;
`;

/** Version 5: access keys (schema/schema-access-keys.ts). */
const SCHEMA_V5 = accessKeyTables(POSTGRES_TYPES);

/** Saved searches (and what is built on them): see schema/schema-saved-searches.ts. */
const SCHEMA_V6 = savedSearchTables(POSTGRES_TYPES);

/**
 * Version 7: sealed storage (docs/storage-format.md), tables and keys.
 * Every log table's primary key and unique index now leads with
 * `project_id`, so each can be distributed by project: `log_entries` is
 * re-keyed (an index build, proportional to the rows stored) and keeps a
 * plain (non-unique) index on `id`: the live-stream horizon reads the
 * largest id over all projects through it. The GIN-indexed `log_blocks`
 * goes: sealed blocks carry their own filters. The tables of sealed blocks
 * are created empty; `log_tails` counts every stored entry as waiting to be
 * sealed, so the sealer converts existing entries in the background as it
 * seals any tail. A block is compressed already: kept out of line, not
 * compressed again (STORAGE EXTERNAL).
 */
/** The version that brings sealed storage's tables and keys (what an upgrade test starts below). */
export const SEALED_SCHEMA_VERSION = 7;

const SCHEMA_V7 = `
ALTER TABLE log_entries DROP CONSTRAINT log_entries_pkey;
ALTER TABLE log_entries ADD CONSTRAINT log_entries_pkey PRIMARY KEY (project_id, id);
DROP INDEX log_entries_project;
CREATE INDEX log_entries_id ON log_entries (id);
DROP TABLE log_blocks;

CREATE TABLE log_tails (
  project_id BIGINT PRIMARY KEY REFERENCES projects (id),
  entries BIGINT NOT NULL,
  oldest_received_at BIGINT
);
INSERT INTO log_tails (project_id, entries, oldest_received_at)
  SELECT project_id, count(*), min(received_at) FROM log_entries GROUP BY project_id;

CREATE TABLE log_sealed (
  project_id BIGINT NOT NULL REFERENCES projects (id),
  last_id BIGINT NOT NULL,
  first_id BIGINT NOT NULL,
  entries INTEGER NOT NULL,
  bytes BIGINT NOT NULL,
  min_ts BIGINT NOT NULL,
  max_ts BIGINT NOT NULL,
  min_received_at BIGINT NOT NULL,
  max_received_at BIGINT NOT NULL,
  levels SMALLINT NOT NULL,
  frames SMALLINT NOT NULL,
  dictionary_id INTEGER NOT NULL,
  block BYTEA NOT NULL,
  PRIMARY KEY (project_id, last_id)
);
ALTER TABLE log_sealed ALTER COLUMN block SET STORAGE EXTERNAL;
CREATE INDEX log_sealed_ts ON log_sealed (project_id, max_ts);
-- The live-stream horizon: the largest sealed id over all projects (one row per block).
CREATE INDEX log_sealed_last ON log_sealed (last_id);

CREATE TABLE log_filter_shards (
  project_id BIGINT NOT NULL,
  shard SMALLINT NOT NULL,
  block_last_id BIGINT NOT NULL,
  bits BYTEA NOT NULL,
  PRIMARY KEY (project_id, shard, block_last_id)
);

CREATE TABLE log_dictionaries (
  project_id BIGINT NOT NULL REFERENCES projects (id),
  id INTEGER NOT NULL,
  first_block_last_id BIGINT NOT NULL,
  bytes BYTEA NOT NULL,
  PRIMARY KEY (project_id, id)
);
ALTER TABLE log_dictionaries ALTER COLUMN bytes SET STORAGE EXTERNAL;
`;

/**
 * Version 8: the tail's rows keep no foreign key to their project. Its
 * check ran once per inserted row (a lookup and a row lock on the
 * project), a large share of PostgreSQL's ingestion work
 * (docs/storage-format.md); the ingest transaction locks the project's row
 * before it writes (and projects are never deleted), which is what the key
 * guarded.
 */
const SCHEMA_V8 = `ALTER TABLE log_entries DROP CONSTRAINT IF EXISTS log_entries_project_id_fkey;`;

/** Every step, in order. Append; never edit a step once it is on main (databases already ran it). */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    async up(t) {
      await t.none(SCHEMA_V1);
    },
  },
  {
    version: 2,
    async up(t) {
      await t.none(SCHEMA_V2);
    },
  },
  {
    version: 3,
    async up(t) {
      await t.none(SCHEMA_V3);
    },
  },
  {
    version: 4,
    async up(t) {
      await t.none(SCHEMA_V4);
    },
  },
  {
    version: 5,
    async up(t) {
      await t.none(SCHEMA_V5);
    },
  },
  {
    version: 6,
    async up(t) {
      await t.none(SCHEMA_V6);
    },
  },
  {
    version: SEALED_SCHEMA_VERSION,
    async up(t) {
      await t.none(SCHEMA_V7);
    },
  },
  {
    version: 8,
    async up(t) {
      await t.none(SCHEMA_V8);
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
 * Brings the database to SCHEMA_VERSION (or the last of `migrations`, if
 * later) in one transaction under the migration lock, or throws
 * SchemaTooNewError (having changed nothing). Returns the version the
 * database is now at.
 */
export async function migrate(db: TransactionOpener, migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS): Promise<number> {
  const target = Math.max(SCHEMA_VERSION, ...migrations.map((m) => m.version));
  return db.tx('logkeep-migrate', async (t) => {
    await t.one(LOCK_MIGRATIONS);
    // The runner reads the version only now: a process that waited sees the winner's commit.
    return runMigrations(t, migrations, target, {
      read: readSchemaVersion,
      write: async (conn, version) => void (await conn.none(UPDATE_SCHEMA_VERSION, [version])),
    });
  });
}
