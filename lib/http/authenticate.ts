/**
 * The credentials a route can ask for, checked before the route's own
 * code runs: an access token (`user` routes), a project secret key
 * (`project-key` routes) and, on the routes that accept one, a person's
 * access key. The prefix decides what a bearer value is looked up as:
 * `slk_` only ever as a secret key, `lka_` only ever as an access key,
 * anything else only as an access token.
 */
import type { IncomingMessage } from 'node:http';
import { forbidden, invalidRequest, notFound, projectBlocked, unauthorized } from '../core/errors.js';
import { parseId } from '../core/ids.js';
import { accessKeyLive, hashAccessKey, isAccessKey, keyMayIngest, parseScope, type AccessKeyPermission } from '../auth/access-keys.js';
import type { ServiceDeps } from './service-deps.js';
import { hashSecretKey } from '../admin/secret-keys.js';
import type { AuthenticatedKey, UserPrincipal } from './route.js';

/** The bearer value of `Authorization`, or null when absent or not a Bearer header. */
export function bearerOf(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const m = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header);
  return m ? m[1]! : null;
}

/** 401 unless the access token is valid and its user still active with the same token version. */
export async function authenticateUser(deps: ServiceDeps, req: IncomingMessage): Promise<UserPrincipal> {
  const token = bearerOf(req);
  if (token === null || token.startsWith('slk_')) throw unauthorized();
  if (isAccessKey(token)) return authenticateAccessKey(deps, token);
  const claims = await deps.accessTokens.verify(token);
  const user = await deps.storage.getUserById(Number(claims.sub));
  if (!user || user.tokenVersion !== claims.tv || !user.isActive || user.deletedAt !== null) {
    throw unauthorized('The access token is no longer valid.');
  }
  return { user, grants: claims.roles, claims, accessKey: null };
}

/**
 * 401 unless the access key is known, not revoked, not expired and its
 * user active and not deleted. The user's grants are read now, not from a
 * token, so a role revoked a moment ago no longer counts, in any process.
 * Which routes a key may call is the handler's check (`accessKey` of the
 * route); what it may see there is the route's, through `principal.accessKey`.
 */
async function authenticateAccessKey(deps: ServiceDeps, key: string): Promise<UserPrincipal> {
  // One statement: the key, its person and their grants (an access token's check reads the user alone).
  const holder = await deps.storage.findAccessKeyHolder(hashAccessKey(key));
  const now = deps.now();
  if (!holder || !accessKeyLive(holder.key, now)) throw unauthorized('The access key is invalid, revoked or expired.');
  const { key: row, user, grants } = holder;
  if (!user.isActive || user.deletedAt !== null) throw unauthorized('The access key is invalid, revoked or expired.');
  await deps.accessKeyUse.record(row, now);
  return { user, grants, claims: null, accessKey: { id: row.id, scope: parseScope(row.scope) } };
}

/** 403 unless the access key of this principal (if any) carries the permission the route asks. */
export function requireKeyPermission(principal: UserPrincipal, permission: AccessKeyPermission | undefined): void {
  if (principal.accessKey === null) return;
  if (permission === undefined) throw forbidden('Access keys cannot be used on this route.');
  if (!principal.accessKey.scope.permissions.includes(permission)) throw forbidden(`This access key does not carry the '${permission}' permission.`);
}

/**
 * Ingestion with an access key (`?project_id=` names the project): the
 * key checked as on any route, then 403 without `ingest` → 400 for a
 * missing or malformed `project_id` → 404 → 403 unless the key covers the
 * project and its user may write there now → 403 `project_blocked`.
 */
export async function authenticateIngestAccessKey(
  deps: ServiceDeps,
  req: IncomingMessage,
  query: URLSearchParams,
  accepted: AccessKeyPermission | undefined,
): Promise<AuthenticatedKey> {
  const principal = await authenticateUser(deps, req);
  // A route that takes secret keys only refuses a (valid) access key like any route it does not cover.
  requireKeyPermission(principal, accepted === 'ingest' ? 'ingest' : undefined);
  const raw = query.get('project_id');
  if (raw === null) throw invalidRequest('project_id is required with an access key.', 'project_id', 'required');
  const projectId = parseId(raw);
  if (projectId === null) throw invalidRequest('project_id must be a positive integer.', 'project_id', 'invalid');
  const project = await deps.storage.getProject(projectId);
  if (!project) throw notFound('No such project.');
  if (!keyMayIngest(principal.accessKey!.scope, principal.grants, project)) throw forbidden('This access key may not write to this project.');
  if (project.isBlocked) throw projectBlocked();
  return { keyId: null, accessKeyId: principal.accessKey!.id, projectId: project.id };
}

/**
 * 401 for a missing, unknown or revoked key, then 403 `project_blocked` when
 * its project is blocked: both before a byte of the body is read.
 */
export async function authenticateProjectKey(deps: ServiceDeps, req: IncomingMessage): Promise<AuthenticatedKey> {
  const secret = bearerOf(req);
  if (secret === null || !secret.startsWith('slk_')) throw unauthorized();
  const key = await deps.storage.findSecretKeyByHash(hashSecretKey(secret));
  if (!key || key.revokedAt !== null) throw unauthorized();
  if (key.projectBlocked) throw projectBlocked();
  return { keyId: key.keyId, accessKeyId: null, projectId: key.projectId };
}
