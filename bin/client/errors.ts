/**
 * How the command line fails: a message in words, the HTTP error's code
 * when the service gave one, and a documented exit code (docs/cli.md).
 */

/** The exit codes of the client commands (`login`, `query`, `tail`, `export`, `ingest`, `mcp`). */
export const EXIT = {
  ok: 0,
  /** The service could not be reached or answered something unexpected (5xx, a broken answer). */
  failure: 1,
  /** The command line itself is wrong: an unknown flag, a missing value. */
  usage: 2,
  /** No usable credentials: none stored, or the service answered 401. */
  unauthorized: 3,
  /** The service answered 403 (`forbidden`, `project_blocked`, `must_change_password`). */
  forbidden: 4,
  /** The service answered 404 (no such project or group). */
  notFound: 5,
  /** `ingest`: every batch was delivered but some entries were rejected. */
  partial: 6,
  /** Any other 4xx: the request was refused (`invalid_request`, …). */
  refused: 7,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** The exit code for an HTTP error status. */
export function exitCodeForStatus(status: number): number {
  if (status === 401) return EXIT.unauthorized;
  if (status === 403) return EXIT.forbidden;
  if (status === 404) return EXIT.notFound;
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return EXIT.refused;
  return EXIT.failure;
}

/** An HTTP error answer as a CliError: "HTTP 403 forbidden: This access key does not cover this project." */
export function httpError(status: number, body: unknown, what: string): CliError {
  const error = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof error.error === 'string' ? error.error : null;
  const message = typeof error.message === 'string' ? error.message : typeof error.error_description === 'string' ? error.error_description : null;
  const field = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>).field : undefined;
  const parts = [`${what}: HTTP ${status}${code ? ` ${code}` : ''}`];
  if (message) parts.push(message);
  if (typeof field === 'string') parts.push(`(field: ${field})`);
  return new CliError(parts.join(': ').replace(/: \(/, ' ('), exitCodeForStatus(status));
}
