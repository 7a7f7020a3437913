/**
 * The binary's diagnostics for now: one plain line per message, levels at
 * or above `--log-level` only; info and debug to stdout, warnings and errors
 * to stderr. (`--log-format` and `--log-file` belong to a later logging
 * library.)
 */
import type { LogLevelName } from '../lib/config.js';
import type { ServiceLogger } from '../lib/logger.js';

const RANK: Readonly<Record<LogLevelName, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

export function createConsoleLogger(level: LogLevelName): ServiceLogger {
  const threshold = RANK[level];
  const line = (name: 'debug' | 'info' | 'warn' | 'error', stream: NodeJS.WriteStream) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[name] < threshold) return;
    const extra = fields && Object.keys(fields).length > 0 ? ` ${safeJson(fields)}` : '';
    stream.write(`${new Date().toISOString()} ${name.toUpperCase().padEnd(5)} ${msg}${extra}\n`);
  };
  return {
    debug: line('debug', process.stdout),
    info: line('info', process.stdout),
    warn: line('warn', process.stderr),
    error: line('error', process.stderr),
  };
}

function safeJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(fields, (_key, value: unknown) =>
      value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value,
    );
  } catch {
    return '[unserialisable fields]';
  }
}
