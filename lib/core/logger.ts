/**
 * The service's own diagnostics. The library writes through this interface
 * only; the bin (or an embedder) decides where lines go.
 */
export interface ServiceLogger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: ServiceLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/**
 * Used when an embedder passes no logger: a library stays quiet unless
 * asked, so only warnings and errors reach the host's console (stderr), one
 * line each. Passing a logger opts in to every line, a request line at
 * `info` included.
 */
export const warningsOnlyConsoleLogger: ServiceLogger = {
  debug() {},
  info() {},
  warn: (msg, fields) => console.warn(oneLine(msg, fields)),
  error: (msg, fields) => console.error(oneLine(msg, fields)),
};

/** `logkeep: <message> {fields as JSON}`: JSON escapes the newlines of a stack. */
function oneLine(msg: string, fields?: Record<string, unknown>): string {
  if (fields === undefined) return `logkeep: ${msg}`;
  let text: string;
  try {
    text = JSON.stringify(fields, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  } catch {
    text = '{"fields":"not serialisable"}';
  }
  return `logkeep: ${msg} ${text}`;
}
