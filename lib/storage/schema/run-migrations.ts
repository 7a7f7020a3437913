/**
 * The schema-step runner both backends use. A backend opens the migration
 * transaction (and takes whatever lock keeps two processes from migrating at
 * once), then hands this runner its connection, its steps and how to read
 * and write the stored version.
 */
import { SchemaTooNewError } from '../../core/errors.js';

/** One schema step: brings a database at `version - 1` to `version`. */
export interface Migration<Conn> {
  version: number;
  up(conn: Conn): Promise<void>;
}

/** How a backend reads and records the schema version inside the transaction. */
export interface SchemaVersionRecord<Conn> {
  /** The stored version, 0 for an empty database. */
  read(conn: Conn): Promise<number>;
  write(conn: Conn, version: number): Promise<void>;
}

/**
 * Runs, in order, every step above the stored version up to `target`, and
 * records each. A stored version above `target` throws SchemaTooNewError
 * before anything runs; so does a list of steps that cannot reach `target`
 * (a plain Error). The caller's transaction makes a failure change nothing.
 * Returns the version the database is at afterwards: `target`.
 */
export async function runMigrations<Conn>(conn: Conn, steps: readonly Migration<Conn>[], target: number, record: SchemaVersionRecord<Conn>): Promise<number> {
  const current = await record.read(conn);
  if (current > target) throw new SchemaTooNewError(current, target);
  let version = current;
  for (const step of steps) {
    if (step.version <= current || step.version > target) continue;
    await step.up(conn);
    await record.write(conn, step.version);
    version = step.version;
  }
  if (version !== target) throw new Error(`no migration step reaches schema version ${target} (at ${version})`);
  return version;
}
