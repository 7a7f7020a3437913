/**
 * Which startup errors are the operator's to fix (exit 78: configuration
 * problems, a database that cannot be opened, a newer schema) and how each is worded.
 */
import { ConfigError, SchemaTooNewError, StorageUnavailableError } from '../lib/core/errors.js';

export const EXIT_CONFIG = 78;

/** The message for an exit-78 failure, or null when `err` is something else. */
export function configurationFailure(err: unknown): string | null {
  if (err instanceof ConfigError) return err.message;
  // Names both versions: the database's and the one this build supports.
  if (err instanceof SchemaTooNewError) return `${err.message}; upgrade logkeep to use this database`;
  if (err instanceof StorageUnavailableError) return `the database cannot be used: ${err.message}`;
  return null;
}

/** Prints every problem, one per line, to stderr. */
export function reportProblems(problems: readonly string[]): void {
  process.stderr.write(`logkeep: configuration problems:\n${problems.map((p) => `  - ${p}\n`).join('')}`);
}
