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

/** Plain console output, used when the embedder passes no logger. */
export const consoleLogger: ServiceLogger = {
  debug: (msg, fields) => console.debug(msg, fields ?? ''),
  info: (msg, fields) => console.info(msg, fields ?? ''),
  warn: (msg, fields) => console.warn(msg, fields ?? ''),
  error: (msg, fields) => console.error(msg, fields ?? ''),
};
