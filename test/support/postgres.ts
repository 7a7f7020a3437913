/**
 * Throwaway PostgreSQL databases for tests: one per call, dropped by the
 * returned `drop()`. The server is the local one (127.0.0.1:5432, user
 * postgres, trust auth) unless LOGKEEP_TEST_PG_* says otherwise.
 */
import { randomBytes } from 'node:crypto';
import pgPromise from 'pg-promise';

export const PG = {
  host: process.env.LOGKEEP_TEST_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.LOGKEEP_TEST_PG_PORT ?? 5432),
  user: process.env.LOGKEEP_TEST_PG_USER ?? 'postgres',
  password: process.env.LOGKEEP_TEST_PG_PASSWORD ?? 'postgres',
  adminDatabase: process.env.LOGKEEP_TEST_PG_DATABASE ?? 'test',
};

const pgp = pgPromise({ noWarnings: true });
let admin: ReturnType<typeof pgp> | null = null;

function adminDb() {
  admin ??= pgp({ host: PG.host, port: PG.port, user: PG.user, password: PG.password, database: PG.adminDatabase, max: 2 });
  return admin;
}

let availability: Promise<string | null> | null = null;

/**
 * The one rule for tests that need a database server: `why` it is missing
 * comes back for a local run to skip with (null: it is there); under CI=true
 * a missing server fails instead, so CI never skips those tests silently.
 */
export function skipReasonOutsideCi(why: string | null, required = 'PostgreSQL is required'): string | null {
  if (why !== null && process.env.CI) throw new Error(`${why} (CI=true: ${required})`);
  return why;
}

/** Why the PostgreSQL tests are skipped here, or null; throws under CI=true when PostgreSQL is missing. */
export async function postgresSkipReason(): Promise<string | null> {
  return skipReasonOutsideCi(await postgresUnavailable());
}

/** null when PostgreSQL answers; otherwise why not. */
export function postgresUnavailable(): Promise<string | null> {
  availability ??= adminDb()
    .one('SELECT 1 AS ok')
    .then(() => null)
    .catch((err: unknown) => `PostgreSQL at ${PG.host}:${PG.port} is not reachable: ${err instanceof Error ? err.message : String(err)}`);
  return availability;
}

export interface ThrowawayDatabase {
  name: string;
  drop(): Promise<void>;
}

export async function createThrowawayDatabase(): Promise<ThrowawayDatabase> {
  const name = `logkeep_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await adminDb().none('CREATE DATABASE $1:name', [name]);
  return {
    name,
    async drop() {
      await adminDb().none('DROP DATABASE IF EXISTS $1:name WITH (FORCE)', [name]);
    },
  };
}

/** Ends the shared admin pool so the test process can exit. */
export function endPostgresAdmin(): void {
  pgp.end();
  admin = null;
}

/**
 * Resolves once at least `count` sessions of the database wait for a lock
 * (to interleave transactions without sleeping). Polls every 10 ms.
 */
export async function lockWaiters(database: string, count: number): Promise<void> {
  for (;;) {
    const row = await adminDb().one<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [
      database,
    ]);
    if (row.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
