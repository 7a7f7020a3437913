/**
 * Every machine code the service answers with, and the HTTP status it goes
 * with. This table is the only place a status is chosen: a LogServiceError
 * looks its status up here. One code has two statuses: `invalid_grant` is
 * 400 at the token endpoint (RFC 6749) and 401 when a signed-in user's
 * current password is wrong; the first listed is the default.
 */
export const ERROR_CODES = {
  invalid_request: 400,
  unsupported_grant_type: 400,
  invalid_grant: [400, 401],
  self_deletion_requires_me: 400,
  unauthorized: 401,
  forbidden: 403,
  project_blocked: 403,
  cannot_delete_primary_admin: 403,
  must_change_password: 403,
  not_found: 404,
  username_taken: 409,
  email_taken: 409,
  sole_group_owner: 409,
  deleted_account: 409,
  identity_taken: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  internal_error: 500,
  temporarily_unavailable: 503,
} as const satisfies Record<string, number | readonly number[]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The statuses a code may be answered with, the default first. */
export function errorStatuses(code: ErrorCode): readonly number[] {
  const entry: number | readonly number[] = ERROR_CODES[code];
  return typeof entry === 'number' ? [entry] : entry;
}

export interface LogServiceErrorOptions {
  /** Sent as `details` in the general envelope. */
  details?: Record<string, unknown> | undefined;
  /** Extra response headers, e.g. `Retry-After` on 429. */
  headers?: Record<string, string> | undefined;
  /** Only for a code with more than one status in ERROR_CODES; must be one of them. */
  status?: number | undefined;
}

/**
 * The one error type the service raises on purpose. `code` is the machine
 * code clients branch on, `status` its HTTP status from ERROR_CODES; the
 * HTTP edge turns it into the general or the RFC 6749 envelope. Anything
 * that is not a LogServiceError becomes 500 `internal_error` with no detail.
 */
export class LogServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: LogServiceErrorOptions = {}) {
    super(message);
    const statuses = errorStatuses(code);
    const status = options.status ?? statuses[0]!;
    // A programming mistake, not a client's: it surfaces as a 500 and in the tests.
    if (!statuses.includes(status)) throw new Error(`error code ${code} is never answered with status ${status}`);
    this.name = 'LogServiceError';
    this.code = code;
    this.status = status;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export type FieldReason = 'required' | 'invalid' | 'too_short' | 'too_long' | 'unknown';

export function invalidRequest(message: string, field?: string, reason?: FieldReason, extra?: Record<string, unknown>): LogServiceError {
  const details = field ? { field, reason: reason ?? 'invalid', ...extra } : undefined;
  return new LogServiceError('invalid_request', message, { details });
}

export function unauthorized(message = 'Missing or invalid credentials.'): LogServiceError {
  return new LogServiceError('unauthorized', message);
}

export function forbidden(message = 'Your roles do not allow this action.'): LogServiceError {
  return new LogServiceError('forbidden', message);
}

/** 403 `project_blocked`: the project (of a key, or the one a query names) is blocked. */
export function projectBlocked(): LogServiceError {
  return new LogServiceError('project_blocked', 'The project is blocked.');
}

/** 413: a request body past its size limit (the general 1 MiB one, or the ingestion limit). */
export function payloadTooLarge(limit: number): LogServiceError {
  return new LogServiceError('payload_too_large', `The request body exceeds ${limit} bytes.`);
}

export function notFound(message = 'Resource not found.'): LogServiceError {
  return new LogServiceError('not_found', message);
}

export function conflict(
  code: 'username_taken' | 'email_taken' | 'sole_group_owner' | 'deleted_account' | 'identity_taken',
  message: string,
  details?: Record<string, unknown>,
): LogServiceError {
  return new LogServiceError(code, message, { details });
}

/** A configuration problem: the bin exits 78 with every message listed. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A uniqueness rule of the database refused a write. */
export class StorageConflict extends Error {
  /** 'username' | 'email' | 'primary_admin' | … : which uniqueness was violated. */
  readonly constraint: string;
  constructor(constraint: string) {
    super(`unique constraint violated: ${constraint}`);
    this.name = 'StorageConflict';
    this.constraint = constraint;
  }
}

/** The database is newer than this build understands (exit 78 in the bin). */
export class SchemaTooNewError extends Error {
  readonly databaseVersion: number;
  readonly supportedVersion: number;
  constructor(databaseVersion: number, supportedVersion: number) {
    super(`database schema version ${databaseVersion} is newer than this logkeep supports (${supportedVersion})`);
    this.name = 'SchemaTooNewError';
    this.databaseVersion = databaseVersion;
    this.supportedVersion = supportedVersion;
  }
}

/** The database could not be opened or reached (exit 78 in the bin). */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}
