/**
 * `logkeep create-admin --username U [--password P]`: needs only the
 * database settings. A generated password is printed once; a taken
 * username exits 1 with a message.
 */
import { createAdmin } from '../lib/admin/create-admin.js';
import type { DatabaseConfig } from '../lib/core/config.js';
import { LogServiceError } from '../lib/core/errors.js';
import { createConsoleLogger } from './console-logger.js';
import { EXIT_CONFIG, configurationFailure } from './startup-failure.js';

export interface CreateAdminRequest {
  database: DatabaseConfig;
  username: string;
  password: string | null;
  warnings: readonly string[];
}

export async function runCreateAdmin(request: CreateAdminRequest): Promise<void> {
  const logger = createConsoleLogger('warn');
  for (const warning of request.warnings) logger.warn(warning);
  try {
    const created = await createAdmin(request.database, { username: request.username, password: request.password, logger });
    const who = `administrator '${created.user.username}' (id ${created.user.id})`;
    if (created.generated) {
      process.stdout.write(`Created ${who}.\nTEMPORARY password, shown only this once (it must be changed at first login):\n\n    ${created.password}\n\n`);
    } else {
      process.stdout.write(`Created ${who}; the password must be changed at first login.\n`);
    }
  } catch (err) {
    const configProblem = configurationFailure(err);
    if (configProblem !== null) {
      process.stderr.write(`logkeep: cannot create the administrator: ${configProblem}\n`);
      process.exitCode = EXIT_CONFIG;
      return;
    }
    if (err instanceof LogServiceError) {
      // username_taken, or a username the service refuses: the message is written for people.
      process.stderr.write(`logkeep: cannot create the administrator: ${err.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}
