/**
 * Helpers for the identity HTTP tests: signing the bootstrap admin in past
 * the forced password change, creating ready-to-use users, and a second,
 * real connection to the service's database for audit rows and for setting
 * up groups and grants whose routes belong to other suites.
 */
import { openStorage } from '../../lib/storage/open-storage.js';
import type { Storage } from '../../lib/storage/storage.js';
import type { AuditAction } from '../../lib/audit/audit.js';
import { silentLogger } from '../../lib/core/logger.js';
import { ADMIN_PASSWORD, api, login, type RunningService } from './service.js';

/** The bootstrap admin's password after its forced change. */
export const ADMIN_NEW_PASSWORD = 'admin-password-2';
/** The password users pick for themselves in these tests. */
export const USER_PASSWORD = 'user-password-1';

export interface SignedIn {
  id: number;
  username: string;
  password: string;
  access_token: string;
  refresh_token: string;
}

/** Changes the bootstrap admin's temporary password and signs in again. */
export async function signInAdmin(svc: RunningService): Promise<SignedIn> {
  const first = await login(svc.url, 'admin', ADMIN_PASSWORD);
  const changed = await api(svc.url, 'POST', '/v1/auth/change-password', {
    token: first.access_token,
    json: { current_password: ADMIN_PASSWORD, new_password: ADMIN_NEW_PASSWORD },
  });
  if (changed.status !== 200) throw new Error(`admin password change failed: ${changed.status} ${changed.text}`);
  const tokens = await login(svc.url, 'admin', ADMIN_NEW_PASSWORD);
  return { id: subjectOf(tokens.access_token), username: 'admin', password: ADMIN_NEW_PASSWORD, ...tokens };
}

/** Creates a user as admin (temporary password) and returns the User body. */
export async function createUser(svc: RunningService, adminToken: string, username: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await api(svc.url, 'POST', '/v1/users', { token: adminToken, json: { username, password: 'temporary-pass', ...extra } });
  if (res.status !== 201) throw new Error(`create ${username} failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Creates a user, lets them replace the temporary password, and signs them in. */
export async function readyUser(svc: RunningService, adminToken: string, username: string, extra: Record<string, unknown> = {}): Promise<SignedIn> {
  const created = await createUser(svc, adminToken, username, extra);
  const first = await login(svc.url, username, 'temporary-pass');
  const changed = await api(svc.url, 'POST', '/v1/auth/change-password', {
    token: first.access_token,
    json: { current_password: 'temporary-pass', new_password: USER_PASSWORD },
  });
  if (changed.status !== 200) throw new Error(`password change of ${username} failed: ${changed.status} ${changed.text}`);
  const tokens = await login(svc.url, username, USER_PASSWORD);
  return { id: created.id, username, password: USER_PASSWORD, ...tokens };
}

/** The claims of a JWT (no verification: the service verified it). */
export function claimsOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

export function headerOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'));
}

export function subjectOf(token: string): number {
  return Number(claimsOf(token).sub);
}

/** A second connection to the running service's database (close it after). */
export function openDatabase(svc: RunningService): Promise<Storage> {
  return openStorage(svc.database.config, { logger: silentLogger });
}

/** Audit rows of one action, newest first. */
export async function auditRows(db: Storage, action: AuditAction) {
  return db.listAudit({ action, limit: 500 });
}

export function refresh(svc: RunningService, refreshToken: string, headers: Record<string, string> = {}) {
  return api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'refresh_token', refresh_token: refreshToken }, headers });
}

export function passwordGrant(svc: RunningService, username: string, password: string, headers: Record<string, string> = {}) {
  return api(svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username, password }, headers });
}
