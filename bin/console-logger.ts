/**
 * The binary's diagnostics: `lib/logging.ts` wired to this process's
 * console, or to `--log-file`, from the resolved configuration. On the
 * console, debug and info go to stdout, warnings and errors to stderr.
 */
import type { LogLevelName, LogServiceConfig } from '../lib/core/config.js';
import { CONFIG_DEFAULTS } from '../lib/core/config.js';
import type { ServiceLogger } from '../lib/core/logger.js';
import { createServiceLogging, type ServiceLogging } from '../lib/logging.js';

/**
 * `--log-level`, `--log-format`, `--log-file`, `--log-max-file-bytes` and
 * `--log-max-files` applied. Throws ConfigError when the log file cannot be
 * written. Close it before the process exits, so the file gets every line.
 */
export function createBinLogging(config: Pick<LogServiceConfig, 'logLevel' | 'logFormat' | 'logFile' | 'logMaxFileBytes' | 'logMaxFiles'>): ServiceLogging {
  return createServiceLogging({
    level: config.logLevel,
    format: config.logFormat,
    file: config.logFile,
    maxFileBytes: config.logMaxFileBytes,
    maxFiles: config.logMaxFiles,
    stdout: process.stdout,
    stderr: process.stderr,
  });
}

/** Console lines at or above `level`, for commands without the own-log settings (`create-admin`). */
export function createConsoleLogger(level: LogLevelName): ServiceLogger {
  return createBinLogging({ ...CONFIG_DEFAULTS, logLevel: level, logFormat: 'console', logFile: null }).logger;
}
