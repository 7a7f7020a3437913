/**
 * The backends every storage and HTTP test runs against: a real SQLite file
 * and a real, throwaway PostgreSQL database. Under CI=true a missing
 * PostgreSQL fails the run; elsewhere its cases are skipped with the reason.
 */
import { after, describe } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseConfig } from '../../lib/core/config.js';
import { CONFIG_DEFAULTS } from '../../lib/core/config.js';
import { PG, createThrowawayDatabase, endPostgresAdmin, postgresSkipReason } from './postgres.js';

export type BackendName = 'file' | 'server';
export const BACKENDS: readonly BackendName[] = ['file', 'server'];

/**
 * The backends this run covers: both, or the one named by TEST_BACKEND
 * (`npm run test:one -- --backend=file …` sets it), for a quicker inner loop.
 * A full run (`npm test`, CI) never sets it.
 */
function chosenBackends(): readonly BackendName[] {
  const named = process.env.TEST_BACKEND;
  if (named === undefined || named === '') return BACKENDS;
  if (named !== 'file' && named !== 'server') throw new Error(`TEST_BACKEND must be file or server, not ${JSON.stringify(named)}`);
  return [named];
}

export interface TestDatabase {
  config: DatabaseConfig;
  /** Removes the file or drops the database. */
  cleanup(): Promise<void>;
}

const tempDirs: string[] = [];
let dropped = false;
after(async () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  if (!dropped) {
    dropped = true;
    endPostgresAdmin();
  }
});

/** A fresh, empty database of the given backend. */
export async function newTestDatabase(backend: BackendName): Promise<TestDatabase> {
  const base = {
    dbServerPort: CONFIG_DEFAULTS.dbServerPort,
    dbServerPoolSize: 4,
    dbServerSslMode: 'disable' as const,
    dbReadPoolSize: 2,
  };
  if (backend === 'file') {
    const dir = mkdtempSync(join(tmpdir(), 'logkeep-test-'));
    tempDirs.push(dir);
    return {
      config: {
        ...base,
        dbBackend: 'file',
        dbPath: join(dir, 'logkeep.db'),
        dbServerHost: null,
        dbServerDatabase: null,
        dbServerUsername: null,
        dbServerPassword: null,
      },
      async cleanup() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const db = await createThrowawayDatabase();
  return {
    config: {
      ...base,
      dbBackend: 'server',
      dbPath: null,
      dbServerHost: PG.host,
      dbServerPort: PG.port,
      dbServerDatabase: db.name,
      dbServerUsername: PG.user,
      dbServerPassword: PG.password,
    },
    cleanup: () => db.drop(),
  };
}

/**
 * Declares the suite once per backend: `describeEachBackend('users', (backend) => { … })`.
 * The server backend's suite is skipped (with its reason) only when
 * PostgreSQL is down and CI is not set. `only` narrows it to some backends,
 * for long suites split into one file per backend (each file gets the
 * runner's per-file time limit to itself). TEST_BACKEND narrows every
 * suite to one backend.
 */
export function describeEachBackend(title: string, body: (backend: BackendName) => void, only: readonly BackendName[] = BACKENDS): void {
  for (const backend of only.filter((b) => chosenBackends().includes(b))) {
    describe(`${title} [${backend}]`, async () => {
      if (backend === 'server') {
        const why = await postgresSkipReason();
        if (why) {
          describe(`skipped: ${why}`, { skip: why }, () => {});
          return;
        }
      }
      body(backend);
    });
  }
}
