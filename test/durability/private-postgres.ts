/**
 * A PostgreSQL server of the test's own (initdb + pg_ctl in a temp
 * directory, on a free port, trust auth), so a test may stop and restart it
 * under load without touching the shared server other test files use. As
 * root the server runs as the `postgres` OS user (PostgreSQL refuses root).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pgPromise from 'pg-promise';
import { CONFIG_DEFAULTS, type DatabaseConfig } from '../../lib/core/config.js';
import { freePort } from '../support/bin.js';

const run = promisify(execFile);
const DATABASE = 'logkeep';

export interface PrivatePostgres {
  /** A database on this server, as the service's settings. */
  readonly config: DatabaseConfig;
  /** Stops the server at once (`-m immediate`: no checkpoint, crash recovery at the next start). */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  /** Stops the server and removes its directory. */
  destroy(): Promise<void>;
}

/** The directory holding initdb and pg_ctl, or null when PostgreSQL's server programs are not installed. */
function serverBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

/** Why a private server cannot be started here, or null when it can. */
export function privatePostgresUnavailable(): string | null {
  if (serverBinDir() === null) return 'PostgreSQL server programs (initdb, pg_ctl) are not installed under /usr/lib/postgresql';
  return null;
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  return { uid, gid };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = serverBinDir();
  if (bin === null) throw new Error(privatePostgresUnavailable() ?? 'no PostgreSQL');
  const dir = mkdtempSync(join(tmpdir(), 'logkeep-private-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    chownSync(dir, uid, gid);
  }
  /** Runs a server program, as the postgres user when we are root. */
  const server = (program: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args]) : run(join(bin, program), args);

  const port = await freePort();
  await server('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  const startServer = async () => {
    await server('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '30', 'start']);
  };
  const stopServer = async () => {
    await server('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']);
  };
  await startServer();

  const pgp = pgPromise({ noWarnings: true });
  try {
    await pgp({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' }).none('CREATE DATABASE $1:name', [DATABASE]);
  } finally {
    pgp.end();
  }
  return {
    config: {
      dbBackend: 'server',
      dbPath: null,
      dbServerHost: '127.0.0.1',
      dbServerPort: port,
      dbServerDatabase: DATABASE,
      dbServerUsername: 'postgres',
      dbServerPassword: 'unused-with-trust-auth',
      dbServerPoolSize: 4,
      dbServerSslMode: 'disable',
      dbReadPoolSize: CONFIG_DEFAULTS.dbReadPoolSize,
    },
    stopServer,
    startServer,
    async destroy() {
      await stopServer().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
