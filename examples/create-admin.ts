/**
 * Creating an administrator from a script (what `logkeep create-admin`
 * does): only the database settings are needed, no signing secret. The
 * account must change its password at first sign-in; without a password one
 * is generated and returned, to be shown once.
 *
 *   npx tsx examples/create-admin.ts ./logkeep.db alice
 */
import { pathToFileURL } from 'node:url';
import { CONFIG_DEFAULTS, LogServiceError, createAdmin, type CreatedAdmin, type DatabaseConfig } from 'logkeep';

/** The database part of the settings, from the defaults plus what is given. */
export function databaseSettings(overrides: Partial<DatabaseConfig>): DatabaseConfig {
  const {
    dbBackend,
    dbPath,
    dbServerHost,
    dbServerPort,
    dbServerDatabase,
    dbServerUsername,
    dbServerPassword,
    dbServerPoolSize,
    dbServerSslMode,
    dbReadPoolSize,
  } = CONFIG_DEFAULTS;
  return {
    ...{
      dbBackend,
      dbPath,
      dbServerHost,
      dbServerPort,
      dbServerDatabase,
      dbServerUsername,
      dbServerPassword,
      dbServerPoolSize,
      dbServerSslMode,
      dbReadPoolSize,
    },
    ...overrides,
  };
}

/**
 * Creates the administrator `username`; returns null (after saying why) when
 * the name is taken, which deleted accounts keep reserving.
 */
export async function main(
  database: DatabaseConfig,
  username: string,
  options: { password?: string; passwordHashLogN?: number } = {},
): Promise<CreatedAdmin | null> {
  try {
    const admin = await createAdmin(database, {
      username,
      ...(options.password === undefined ? {} : { password: options.password }),
      ...(options.passwordHashLogN === undefined ? {} : { passwordHashLogN: options.passwordHashLogN }),
    });
    const shown = admin.generated ? `temporary password (shown once): ${admin.password}` : 'with the given temporary password';
    console.log(`created administrator '${admin.user.username}' (id ${admin.user.id}${admin.user.isPrimaryAdmin ? ', primary' : ''}), ${shown}`);
    return admin;
  } catch (err) {
    if (err instanceof LogServiceError && err.code === 'username_taken') {
      console.error(err.message);
      return null;
    }
    throw err;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dbPath = './logkeep.db', username = 'alice'] = process.argv.slice(2);
  const created = await main(databaseSettings({ dbPath }), username);
  process.exitCode = created ? 0 : 1;
}
