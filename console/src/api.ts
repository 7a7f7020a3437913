/**
 * Talking to the service: the base URL (the console lives at
 * `<base>/console/`, the API at `<base>/v1`), the session (access token in
 * memory only, refresh token in this tab's sessionStorage), refresh before
 * expiry, and one retry through a refresh when a call answers 401.
 */
import { signal } from '@preact/signals';
import { navigate } from './router';

/** Everything before `/console/` in this page's path: the embedding base path, or empty. */
export const BASE = location.pathname.replace(/\/console(\/.*)?$/, '');

const REFRESH_KEY = 'logkeep.refresh_token';
/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_S = 60;

export interface Session {
  userId: number;
  username: string;
  /** The temporary password must be changed before anything else works. */
  mustChangePassword: boolean;
  /** The caller's grants, from the token (for showing or hiding actions). */
  roles: { role: string; scope_type: string; scope_id: number | null }[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Who is signed in; null: the sign-in page. */
export const session = signal<Session | null>(null);
/** Why the last session ended, shown on the sign-in page. */
export const signedOutReason = signal<string | null>(null);
/** False until a stored refresh token (or a single sign-on's code) was tried at start. */
export const sessionChecked = signal(false);

/** How people may sign in here (`GET /v1/auth/methods`); null until known. */
export interface AuthMethods {
  password: boolean;
  sso: { provider_name: string; start_url: string } | null;
}
export const authMethods = signal<AuthMethods | null>(null);
/** Why the last single sign-on was refused: the callback's `error` and the provider's own code. */
export const ssoRefusal = signal<{ error: string; providerError: string | null } | null>(null);

let accessToken: string | null = null;
let refreshTimer: ReturnType<typeof setTimeout> | null = null;
let refreshing: Promise<boolean> | null = null;

interface TokenResponse {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

function claims(token: string): { sub: string; preferred_username: string; roles: Session['roles'] } {
  const part = token.split('.')[1] ?? '';
  const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(decodeURIComponent(escape(json)));
}

async function tokenCall(method: 'POST' | 'DELETE', form: Record<string, string>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${BASE}/v1/auth/token`, {
    ...(signal ? { signal } : {}),
    method,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    credentials: 'omit',
    cache: 'no-store',
  });
}

async function errorOf(res: Response): Promise<ApiError> {
  let body: { error?: string; message?: string; error_description?: string; details?: Record<string, unknown> } = {};
  try {
    body = await res.json();
  } catch {
    // Not JSON (a proxy's page): the status alone.
  }
  return new ApiError(res.status, body.error ?? 'error', body.message ?? body.error_description ?? `The service answered ${res.status}.`, body.details);
}

/** Stores a fresh token pair and learns who the caller is and whether they must change their password. */
async function adopt(tokens: TokenResponse): Promise<void> {
  accessToken = tokens.access_token;
  sessionStorage.setItem(REFRESH_KEY, tokens.refresh_token);
  if (refreshTimer) clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void refresh(), Math.max(5, tokens.expires_in - REFRESH_MARGIN_S) * 1000);
  const c = claims(tokens.access_token);
  // No claim says it: a cheap call answers 403 must_change_password while the password is temporary.
  const probe = await fetch(`${BASE}/v1/groups?limit=1`, { headers: { Authorization: `Bearer ${accessToken}` } });
  const mustChangePassword = probe.status === 403 && (await errorOf(probe)).code === 'must_change_password';
  session.value = { userId: Number(c.sub), username: c.preferred_username, roles: c.roles ?? [], mustChangePassword };
  signedOutReason.value = null;
  ssoRefusal.value = null;
}

export async function signIn(username: string, password: string): Promise<void> {
  const res = await tokenCall('POST', { grant_type: 'password', username, password });
  if (!res.ok) {
    const err = await errorOf(res);
    if (err.code === 'invalid_grant') throw new ApiError(res.status, err.code, 'The username or password is wrong.');
    throw err;
  }
  await adopt(await res.json());
}

/**
 * A single sign-on's result in the address (`#/sso?code=…` or
 * `#/sso?error=…`), taken out of it at once: the address is replaced, so
 * the one-time code stays in no history entry.
 */
export function takeSsoResult(): { code: string | null; error: string | null; providerError: string | null } | null {
  const match = /^#\/sso\?(.*)$/.exec(location.hash);
  if (!match) return null;
  const params = new URLSearchParams(match[1]);
  navigate('explore', {}, true);
  return { code: params.get('code'), error: params.get('error'), providerError: params.get('provider_error') };
}

/** Exchanges a single sign-on's one-time code for the session's tokens. */
export async function signInWithCode(code: string): Promise<void> {
  const res = await tokenCall('POST', { grant_type: 'authorization_code', code });
  if (!res.ok) {
    ssoRefusal.value = { error: 'code_refused', providerError: null };
    return;
  }
  await adopt(await res.json());
}

/** Learns the sign-in methods for the sign-in page (a failure leaves the password form alone). */
export async function loadAuthMethods(): Promise<void> {
  try {
    const res = await fetch(`${BASE}/v1/auth/methods`, { credentials: 'omit', cache: 'no-store' });
    if (res.ok) authMethods.value = (await res.json()) as AuthMethods;
  } catch {
    // The sign-in form still works without it.
  }
}

/** Rotates the refresh token; false (and back to sign-in) when it is gone or refused. */
export function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const stored = sessionStorage.getItem(REFRESH_KEY);
    if (!stored) return false;
    try {
      const res = await tokenCall('POST', { grant_type: 'refresh_token', refresh_token: stored });
      if (!res.ok) {
        endSession('Your session has ended. Please sign in again.');
        return false;
      }
      await adopt(await res.json());
      return true;
    } catch {
      endSession('The service cannot be reached. Please sign in again.');
      return false;
    }
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** At start: a refresh token left in this tab (a reload) signs in again. */
export async function resumeSession(): Promise<void> {
  void loadAuthMethods();
  const sso = takeSsoResult();
  if (sso?.code) await signInWithCode(sso.code).catch(() => (ssoRefusal.value = { error: 'code_refused', providerError: null }));
  else if (sso?.error) ssoRefusal.value = { error: sso.error, providerError: sso.providerError };
  if (!session.value && sessionStorage.getItem(REFRESH_KEY)) await refresh();
  sessionChecked.value = true;
}

function endSession(reason: string | null): void {
  accessToken = null;
  if (refreshTimer) clearTimeout(refreshTimer);
  refreshTimer = null;
  sessionStorage.removeItem(REFRESH_KEY);
  session.value = null;
  signedOutReason.value = reason;
}

/** Longest wait for the service to revoke the refresh token at sign-out. */
const REVOKE_TIMEOUT_MS = 5000;

/**
 * Revokes the refresh token, then forgets both tokens, so "signed out"
 * shows only once the token no longer works. A service that cannot be
 * reached in time still signs the tab out.
 */
export async function signOut(): Promise<void> {
  const stored = sessionStorage.getItem(REFRESH_KEY);
  // Nothing in this tab may rotate it while it is being revoked.
  sessionStorage.removeItem(REFRESH_KEY);
  if (stored) await tokenCall('DELETE', { refresh_token: stored }, AbortSignal.timeout(REVOKE_TIMEOUT_MS)).catch(() => undefined);
  endSession('You have signed out.');
}

/** The current access token, for the live stream's own request. */
export function currentAccessToken(): string | null {
  return accessToken;
}

/** Called after the account is deleted: nothing to revoke any more. */
export function forgetSession(reason: string): void {
  endSession(reason);
}

export interface CallOptions {
  method?: string;
  json?: unknown;
  signal?: AbortSignal;
}

/** An authenticated call; a 401 refreshes once and retries. Throws ApiError with the service's message. */
export async function call<T>(path: string, options: CallOptions = {}, retried = false): Promise<T> {
  const res = await fetch(`${BASE}${path}`, {
    method: options.method ?? 'GET',
    headers: {
      ...(accessToken ? { Authorization: `Bearer ${accessToken}` } : {}),
      ...(options.json === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: options.json === undefined ? null : JSON.stringify(options.json),
    credentials: 'omit',
    cache: 'no-store',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!res.ok) {
    const err = await errorOf(res);
    // An expired or retired access token (not a wrong current password, also 401): refresh once and retry.
    if (err.status === 401 && err.code === 'unauthorized' && !retried && sessionStorage.getItem(REFRESH_KEY)) {
      if (await refresh()) return call<T>(path, options, true);
    }
    throw err;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Changes the password, then takes a new access token (the change retires older ones). */
export async function changePassword(current: string, next: string): Promise<void> {
  await call('/v1/auth/change-password', { method: 'POST', json: { current_password: current, new_password: next } });
  await refresh();
}

export async function deleteMyAccount(password: string): Promise<void> {
  await call('/v1/users/me', { method: 'DELETE', json: { password } });
  forgetSession('Your account has been deleted.');
}
