/**
 * People for HTTP tests, made through the public API only: the bootstrap
 * admin with its temporary password replaced, users created by that admin
 * (who must change their password before anything else works), and the
 * grants, groups, teams and projects the organisation tests build on.
 */
import assert from 'node:assert/strict';
import { ADMIN_PASSWORD, api, login } from './service.js';

export interface TestActor {
  id: number;
  username: string;
  password: string;
  /** A fresh access token (valid at the user's current token_version). */
  token: string;
  refreshToken: string;
}

/** The password the bootstrap admin is moved to on first sign-in. */
export const ADMIN_FINAL_PASSWORD = 'admin-password-final-1';

const admins = new Map<string, Promise<TestActor>>();

/** The `sub` claim of an access token, as a number. */
export function userIdOf(accessToken: string): number {
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string };
  return Number(payload.sub);
}

/** Signs in with a password, returning the actor with fresh tokens. */
export async function signIn(url: string, username: string, password: string): Promise<TestActor> {
  const tokens = await login(url, username, password);
  return { id: userIdOf(tokens.access_token), username, password, token: tokens.access_token, refreshToken: tokens.refresh_token };
}

/** A new token for the actor (after its token_version moved). */
export async function refreshActor(url: string, actor: TestActor): Promise<TestActor> {
  const again = await signIn(url, actor.username, actor.password);
  actor.token = again.token;
  actor.refreshToken = again.refreshToken;
  return actor;
}

async function changePassword(url: string, token: string, current: string, next: string): Promise<void> {
  const res = await api(url, 'POST', '/v1/auth/change-password', { token, json: { current_password: current, new_password: next } });
  assert.equal(res.status, 200, `change-password: ${res.status} ${res.text}`);
}

/**
 * The bootstrap admin, its temporary password changed (once per service),
 * signed in with a fresh token.
 */
export function signInAdmin(url: string): Promise<TestActor> {
  let admin = admins.get(url);
  if (!admin) {
    admin = (async () => {
      const first = await login(url, 'admin', ADMIN_PASSWORD);
      await changePassword(url, first.access_token, ADMIN_PASSWORD, ADMIN_FINAL_PASSWORD);
      return signIn(url, 'admin', ADMIN_FINAL_PASSWORD);
    })();
    admins.set(url, admin);
  }
  return admin;
}

/** One grant, as the body of `POST /v1/role-assignments` wants it. */
export interface GrantSpec {
  role: 'admin' | 'owner' | 'user';
  scope_type: 'global' | 'group' | 'project';
  scope_id?: number | null;
}

/** Grants a role (as `token`'s owner) and returns the assignment id. */
export async function grant(url: string, token: string, subject: { type: 'user' | 'team'; id: number }, spec: GrantSpec): Promise<number> {
  const res = await api(url, 'POST', '/v1/role-assignments', {
    token,
    json: { subject_type: subject.type, subject_id: subject.id, role: spec.role, scope_type: spec.scope_type, scope_id: spec.scope_id ?? null },
  });
  assert.equal(res.status, 201, `grant: ${res.status} ${res.text}`);
  return res.body.id;
}

/**
 * Creates a user as admin, applies `grants`, then signs the user in and
 * replaces the temporary password, so the returned token works everywhere.
 * `teams` are joined before the password change (each join moves
 * token_version, so the final token is issued last).
 */
export async function createActor(
  url: string,
  adminToken: string,
  username: string,
  options: { grants?: GrantSpec[]; teams?: number[] } = {},
): Promise<TestActor> {
  const temporary = `temporary-${username}-1`;
  const password = `password-${username}-1`;
  const created = await api(url, 'POST', '/v1/users', { token: adminToken, json: { username, password: temporary } });
  assert.equal(created.status, 201, `create user ${username}: ${created.status} ${created.text}`);
  const id: number = created.body.id;
  for (const spec of options.grants ?? []) await grant(url, adminToken, { type: 'user', id }, spec);
  for (const teamId of options.teams ?? []) await addMember(url, adminToken, teamId, id);
  const first = await login(url, username, temporary);
  await changePassword(url, first.access_token, temporary, password);
  return signIn(url, username, password);
}

export async function createGroup(url: string, token: string, name: string): Promise<number> {
  const res = await api(url, 'POST', '/v1/groups', { token, json: { name } });
  assert.equal(res.status, 201, `create group: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function createTeam(url: string, token: string, groupId: number, name: string): Promise<number> {
  const res = await api(url, 'POST', `/v1/groups/${groupId}/teams`, { token, json: { name } });
  assert.equal(res.status, 201, `create team: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function createProject(
  url: string,
  token: string,
  groupId: number,
  name: string,
  extra: { retention_days?: number; max_entries?: number | null; max_bytes?: number | null } = {},
): Promise<number> {
  const res = await api(url, 'POST', `/v1/groups/${groupId}/projects`, { token, json: { name, retention_days: 30, ...extra } });
  assert.equal(res.status, 201, `create project: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function addMember(url: string, token: string, teamId: number, userId: number): Promise<void> {
  const res = await api(url, 'POST', `/v1/teams/${teamId}/members`, { token, json: { user_id: userId } });
  assert.equal(res.status, 204, `add member: ${res.status} ${res.text}`);
}

/** Creates a secret key and returns its id and plaintext. */
export async function createKey(url: string, token: string, projectId: number, label: string | null = null): Promise<{ id: number; secret: string }> {
  const res = await api(url, 'POST', `/v1/projects/${projectId}/secret-keys`, { token, json: { label } });
  assert.equal(res.status, 201, `create key: ${res.status} ${res.text}`);
  return { id: res.body.id, secret: res.body.secret };
}

/** A group G with projects A and B, a key for each, and a member holding `user` on G (the streams' usual fixture). */
export interface TwoProjectGroup {
  groupG: number;
  projectA: number;
  projectB: number;
  keyA: string;
  keyB: string;
  member: TestActor;
}

export async function createTwoProjectGroup(url: string, token: string, memberName: string): Promise<TwoProjectGroup> {
  const groupG = await createGroup(url, token, 'G');
  const projectA = await createProject(url, token, groupG, 'A');
  const projectB = await createProject(url, token, groupG, 'B');
  const keyA = (await createKey(url, token, projectA)).secret;
  const keyB = (await createKey(url, token, projectB)).secret;
  const member = await createActor(url, token, memberName, { grants: [{ role: 'user', scope_type: 'group', scope_id: groupG }] });
  return { groupG, projectA, projectB, keyA, keyB, member };
}

/** Asserts a response's status and, for errors, its machine code. */
export function assertStatus(res: { status: number; body: any; text: string }, status: number, code?: string, message?: string): void {
  const where = message ? `${message}: ` : '';
  assert.equal(res.status, status, `${where}expected ${status}${code ? ` ${code}` : ''}, got ${res.status} ${res.text}`);
  if (code !== undefined) assert.equal(res.body?.error, code, `${where}error code`);
}

/** Audit rows matching the filters (newest first), read as admin through the API. */
export async function auditRows(url: string, adminToken: string, filters: Record<string, string | number>): Promise<any[]> {
  const query = new URLSearchParams(Object.entries(filters).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await api(url, 'GET', `/v1/audit-log?${query}&limit=200`, { token: adminToken });
  assert.equal(res.status, 200, `audit log: ${res.status} ${res.text}`);
  return res.body.items;
}

/** Whether the access token still authenticates (any JWT route; 401 means its token_version moved). */
export async function tokenWorks(url: string, token: string): Promise<boolean> {
  const res = await api(url, 'GET', '/v1/groups?limit=1', { token });
  if (res.status !== 200 && res.status !== 401) throw new Error(`unexpected ${res.status} ${res.text}`);
  return res.status === 200;
}
