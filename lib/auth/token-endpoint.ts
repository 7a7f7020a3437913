/**
 * The public token endpoint:
 * `POST /v1/auth/token` with the password and refresh grants and the
 * exchange of a single sign-on's one-time code (`authorization_code`), and
 * `DELETE /v1/auth/token` (RFC 7009 revocation). Errors are RFC 6749 codes;
 * the route table marks both routes `noStore`, so every response, success or
 * error, carries `Cache-Control: no-store`.
 */
import { LogServiceError } from '../core/errors.js';
import { hasNul } from '../core/text-fields.js';
import type { RoleGrant, UserRow } from '../storage/types-org.js';
import type { Storage, WriteOps } from '../storage/storage.js';
import { recordAudit, type AuditEvent } from '../audit/audit.js';
import type { AccessTokenService } from './access-tokens.js';
import { PASSWORD_MAX_BYTES, type PasswordHasher } from './passwords.js';
import type { LogServiceConfig } from '../core/config.js';
import { claimRefreshToken, createSuccessorDeriver, issueRefreshToken, REFRESH_TOKEN_TTL_SECONDS, hashRefreshToken } from './refresh-tokens.js';
import type { Throttle, ThrottleOrigin } from './throttle.js';
import { claimLoginCode } from './login-codes.js';

/** What the token endpoint needs from the service. */
export interface TokenEndpointDeps {
  storage: Storage;
  passwords: PasswordHasher;
  throttle: Throttle;
  accessTokens: AccessTokenService;
  /** The signing secret also keys the refresh tokens' successors. */
  config: Pick<LogServiceConfig, 'jwtSecret' | 'passwordLoginEnabled'>;
  /**
   * Run inside a refresh's transaction before the roles are read: single
   * sign-on brings the user's team memberships up to date there.
   */
  beforeRefresh?: (tx: WriteOps, userId: number, now: number) => Promise<void>;
  now(): number;
}

/** The TokenResponse resource. */
export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_expires_in: number;
}

/** Who is asking, for rate limiting and the audit rows. */
export interface TokenRequestOrigin extends ThrottleOrigin {
  userAgent: string | null;
}

// One description for every credential failure: nothing tells a blocked,
// deleted or unknown account from a wrong password.
const BAD_CREDENTIALS = 'The username or password is incorrect.';
const BAD_REFRESH_TOKEN = 'The refresh token is invalid, expired or revoked.';
const BAD_LOGIN_CODE = 'The sign-in code is invalid, expired or already used.';
const PASSWORD_LOGIN_OFF = 'Password sign-in is turned off; sign in with single sign-on.';
/** User agents are stored in audit rows; a header can be long, the row need not be. */
const MAX_USER_AGENT_CHARS = 512;
/**
 * The token endpoint's form bodies are small (a username, a password, a
 * token): 64 KiB leaves room for any of them and keeps an anonymous caller
 * from making every attempt carry a megabyte.
 */
export const TOKEN_FORM_MAX_BYTES = 64 * 1024;
/** Longer usernames are refused at login without a lookup (no account can have one). */
export const LOGIN_USERNAME_MAX_CHARS = 200;

function oauthError(code: 'invalid_request' | 'unsupported_grant_type' | 'invalid_grant', description: string): LogServiceError {
  return new LogServiceError(code, description);
}

/**
 * A form field: RFC 6749 §3.1 treats an empty value as absent and refuses a
 * repeated parameter. Returns null when absent.
 */
function formField(form: URLSearchParams, name: string): string | null {
  const values = form.getAll(name);
  if (values.length > 1) throw oauthError('invalid_request', `The parameter '${name}' must not be repeated.`);
  const value = values[0];
  return value === undefined || value === '' ? null : value;
}

function requiredField(form: URLSearchParams, name: string): string {
  const value = formField(form, name);
  if (value === null) throw oauthError('invalid_request', `The parameter '${name}' is required.`);
  return value;
}

function auditOrigin(origin: TokenRequestOrigin): { client_ip: string; user_agent: string | null } {
  return { client_ip: origin.clientIp, user_agent: origin.userAgent === null ? null : origin.userAgent.slice(0, MAX_USER_AGENT_CHARS) };
}

async function tokenResponse(deps: TokenEndpointDeps, user: UserRow, roles: RoleGrant[], refreshToken: string, now: number): Promise<TokenResponse> {
  const access = await deps.accessTokens.issue(user, roles, now);
  return {
    access_token: access.token,
    refresh_token: refreshToken,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    refresh_expires_in: REFRESH_TOKEN_TTL_SECONDS,
  };
}

/** `POST /v1/auth/token`: dispatches on `grant_type` (missing or unknown: 400 `unsupported_grant_type`). */
export async function grantToken(deps: TokenEndpointDeps, form: URLSearchParams, origin: TokenRequestOrigin): Promise<TokenResponse> {
  const grantType = formField(form, 'grant_type');
  if (grantType === 'password') return passwordGrant(deps, form, origin);
  if (grantType === 'refresh_token') return refreshGrant(deps, form);
  if (grantType === 'authorization_code') return loginCodeGrant(deps, form, origin);
  throw oauthError('unsupported_grant_type', "grant_type must be 'password', 'refresh_token' or 'authorization_code'.");
}

type LoginFailure = { reason: 'invalid_password' | 'blocked' | 'deleted' | 'password_login_disabled' } | { unknownUser: true };

/** Why a login with a known or unknown account fails, or null when it succeeds. */
function loginFailure(user: UserRow | null, passwordOk: boolean): LoginFailure | null {
  if (!user) return { unknownUser: true };
  // The account's state explains the refusal whatever the password was.
  if (user.deletedAt !== null) return { reason: 'deleted' };
  if (!user.isActive) return { reason: 'blocked' };
  return passwordOk ? null : { reason: 'invalid_password' };
}

/** A known account is actor and target; an unknown username is not stored at all. */
function loginFailedEvent(user: UserRow | null, failure: LoginFailure, meta: Record<string, unknown>): AuditEvent {
  if (!user || 'unknownUser' in failure) {
    return { actorUserId: null, action: 'auth.login_failed', targetType: 'user', targetId: null, metadata: { unknown_user: true, ...meta } };
  }
  return { actorUserId: user.id, action: 'auth.login_failed', targetType: 'user', targetId: user.id, metadata: { reason: failure.reason, ...meta } };
}

/**
 * Whether a username could name an account, so it is worth looking up: not
 * too long, and no U+0000 (PostgreSQL text cannot hold one; no account has one).
 */
function mayNameAnAccount(username: string): boolean {
  if (hasNul(username) || username.length > 2 * LOGIN_USERNAME_MAX_CHARS) return false;
  return [...username].length <= LOGIN_USERNAME_MAX_CHARS;
}

/** Whether a password could be any account's: within the byte limit and free of U+0000. */
function mayBeAPassword(password: string): boolean {
  return !hasNul(password) && Buffer.byteLength(password, 'utf8') <= PASSWORD_MAX_BYTES;
}

async function passwordGrant(deps: TokenEndpointDeps, form: URLSearchParams, origin: TokenRequestOrigin): Promise<TokenResponse> {
  const username = requiredField(form, 'username');
  const password = requiredField(form, 'password');
  const lookup = async () => (mayNameAnAccount(username) ? deps.storage.getUserByUsername(username) : null);
  // The subject key is the submitted string, never the row it may name.
  const attempt = await deps.throttle.beginAttempt(origin, {
    key: username,
    actorUserId: async () => (await lookup())?.id ?? null,
  });
  try {
    const found = await lookup();
    // An unknown account, or a password no rule could have allowed, still costs one hash (timing reveals nothing).
    const candidate = found && mayBeAPassword(password) ? found.passwordHash : null;
    const passwordOk = (await deps.passwords.verify(candidate, password)) && candidate !== null;

    const now = deps.now();
    const meta = auditOrigin(origin);
    const outcome = await deps.storage.write(async (tx) => {
      // Re-read inside the transaction: a block or delete that landed during the hash wins.
      const user = found ? await tx.getUserById(found.id) : null;
      let failure = loginFailure(user, passwordOk);
      // Only a right password learns that passwords are off for this account.
      if (!failure && user && !deps.config.passwordLoginEnabled && !(await tx.isBreakGlassAccount(user.id))) {
        failure = { reason: 'password_login_disabled' };
      }
      if (failure || !user) {
        await recordAudit(tx, loginFailedEvent(user, failure ?? { unknownUser: true }, meta), now);
        return { ok: false as const, passwordOff: failure !== null && 'reason' in failure && failure.reason === 'password_login_disabled' };
      }
      const roles = await tx.effectiveGrants(user.id);
      const refreshToken = await issueRefreshToken(tx, user.id, now);
      await recordAudit(tx, { actorUserId: user.id, action: 'auth.login_succeeded', targetType: 'user', targetId: user.id, metadata: meta }, now);
      return { ok: true as const, user, roles, refreshToken };
    });

    if (!outcome.ok) {
      attempt.failed();
      throw oauthError('invalid_grant', outcome.passwordOff ? PASSWORD_LOGIN_OFF : BAD_CREDENTIALS);
    }
    attempt.succeeded();
    return await tokenResponse(deps, outcome.user, outcome.roles, outcome.refreshToken, now);
  } finally {
    // An unexpected failure never reached a verdict: give the subject token back.
    attempt.abandoned();
  }
}

/**
 * Refresh: rotates the token and re-resolves roles and `tv` from the
 * database. No audit row. Within the reuse grace the token just rotated
 * gets the same successor again with a fresh access token (a reload that
 * lost the first answer stays signed in). The transaction commits even on
 * refusal, so a reuse's family revocation sticks.
 */
async function refreshGrant(deps: TokenEndpointDeps, form: URLSearchParams): Promise<TokenResponse> {
  const presented = requiredField(form, 'refresh_token');
  const now = deps.now();
  const outcome = await deps.storage.write(async (tx) => {
    const claim = await claimRefreshToken(tx, createSuccessorDeriver(deps.config.jwtSecret), presented, now);
    if (claim.kind !== 'claimed' && claim.kind !== 'graced') return { ok: false as const };
    const user = await tx.getUserById(claim.userId);
    if (!user?.isActive || user.deletedAt !== null) return { ok: false as const };
    if (deps.beforeRefresh) await deps.beforeRefresh(tx, user.id, now);
    // The sync may have moved token_version: the new access token carries the current one.
    const current = (await tx.getUserById(user.id)) ?? user;
    const roles = await tx.effectiveGrants(user.id);
    return { ok: true as const, user: current, roles, refreshToken: claim.successor };
  });
  if (!outcome.ok) throw oauthError('invalid_grant', BAD_REFRESH_TOKEN);
  return tokenResponse(deps, outcome.user, outcome.roles, outcome.refreshToken, now);
}

/**
 * `grant_type=authorization_code`: a single sign-on's one-time code (see
 * login-codes.ts) becomes the same access and refresh tokens a password
 * sign-in gets, with the same `auth.login_succeeded` row. A spent, expired
 * or unknown code, or an account blocked or deleted since, is `invalid_grant`.
 */
async function loginCodeGrant(deps: TokenEndpointDeps, form: URLSearchParams, origin: TokenRequestOrigin): Promise<TokenResponse> {
  const code = requiredField(form, 'code');
  const now = deps.now();
  const meta = { ...auditOrigin(origin), method: 'oidc' };
  const outcome = await deps.storage.write(async (tx) => {
    const userId = await claimLoginCode(tx, code, now);
    const user = userId === null ? null : await tx.getUserById(userId);
    if (!user?.isActive || user.deletedAt !== null) return { ok: false as const };
    const roles = await tx.effectiveGrants(user.id);
    const refreshToken = await issueRefreshToken(tx, user.id, now);
    await recordAudit(tx, { actorUserId: user.id, action: 'auth.login_succeeded', targetType: 'user', targetId: user.id, metadata: meta }, now);
    return { ok: true as const, user, roles, refreshToken };
  });
  if (!outcome.ok) throw oauthError('invalid_grant', BAD_LOGIN_CODE);
  return tokenResponse(deps, outcome.user, outcome.roles, outcome.refreshToken, now);
}

/**
 * `DELETE /v1/auth/token` (RFC 7009): revokes the token if it is live and
 * audits `auth.logged_out` only then; answers the same either way. Only a
 * missing `refresh_token` is an error (a repeated one uses the first value).
 */
export async function revokeToken(deps: TokenEndpointDeps, form: URLSearchParams, origin: TokenRequestOrigin): Promise<void> {
  const presented = form.get('refresh_token');
  if (presented === null || presented === '') throw oauthError('invalid_request', "The parameter 'refresh_token' is required.");
  const now = deps.now();
  const meta = auditOrigin(origin);
  await deps.storage.write(async (tx) => {
    const row = await tx.revokeRefreshToken(hashRefreshToken(presented), now);
    if (row) {
      await recordAudit(tx, { actorUserId: row.userId, action: 'auth.logged_out', targetType: 'user', targetId: row.userId, metadata: meta }, now);
    }
  });
}
