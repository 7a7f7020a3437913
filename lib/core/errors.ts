/**
 * The one error type the service raises on purpose. `code` is the spec's
 * machine code, `status` the HTTP status; the HTTP edge turns it into the
 * general or the RFC 6749 envelope. Anything that is not a LogServiceError
 * becomes 500 `internal_error` with no detail.
 */
export class LogServiceError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers, e.g. `Retry-After` on 429. */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: string,
    status: number,
    message: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'LogServiceError';
    this.code = code;
    this.status = status;
    this.details = details;
    this.headers = headers;
  }
}

/** Every machine code the service may answer with, and its status. */
export const ERROR_CODES = {
  invalid_request: 400,
  unsupported_grant_type: 400,
  invalid_grant: 400,
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
  request_timeout: 408,
  payload_too_large: 413,
  too_many_requests: 429,
  internal_error: 500,
  temporarily_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export type FieldReason = 'required' | 'invalid' | 'too_short' | 'too_long' | 'unknown';

export function invalidRequest(message: string, field?: string, reason?: FieldReason, extra?: Record<string, unknown>): LogServiceError {
  const details = field ? { field, reason: reason ?? 'invalid', ...extra } : undefined;
  return new LogServiceError('invalid_request', 400, message, details);
}

export function unauthorized(message = 'Missing or invalid credentials.'): LogServiceError {
  return new LogServiceError('unauthorized', 401, message);
}

export function forbidden(message = 'Your roles do not allow this action.'): LogServiceError {
  return new LogServiceError('forbidden', 403, message);
}

export function notFound(message = 'Resource not found.'): LogServiceError {
  return new LogServiceError('not_found', 404, message);
}

export function conflict(code: 'username_taken' | 'email_taken' | 'sole_group_owner' | 'deleted_account', message: string, details?: Record<string, unknown>): LogServiceError {
  return new LogServiceError(code, 409, message, details);
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
