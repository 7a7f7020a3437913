/**
 * The two credentials a route can ask for, checked before the route's own
 * code runs: an access token (`user` routes) and a project secret key
 * (`project-key` routes). A secret key is only ever a key and an access token
 * never one, whatever the route.
 */
import type { IncomingMessage } from 'node:http';
import { projectBlocked, unauthorized } from '../core/errors.js';
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
  const claims = await deps.accessTokens.verify(token);
  const user = await deps.storage.getUserById(Number(claims.sub));
  if (!user || user.tokenVersion !== claims.tv || !user.isActive || user.deletedAt !== null) {
    throw unauthorized('The access token is no longer valid.');
  }
  return { user, grants: claims.roles, claims };
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
  return { keyId: key.keyId, projectId: key.projectId };
}
