/**
 * Access keys: a person's credential for scripts, CI jobs and agents.
 * `lka_` + 32 random bytes in base64url, shown once; only the SHA-256 hash
 * is stored. A key carries a scope that only ever narrows its user's
 * rights: which permissions (`read`: queries and histograms; `tail`: live
 * streams; `ingest`: `POST /v1/logs`) and which projects and groups. What
 * a key may do is decided at every request from the user's rights at that
 * moment, read fresh from storage, intersected with that scope.
 */
import { createHash, randomBytes } from 'node:crypto';
import { canManageProject, canSeeGroup, canSeeProject, type ProjectRef } from './rbac.js';
import type { AccessKeyRow, RoleGrant } from '../storage/types-org.js';

/** Distinct from project secret keys (`slk_`), so the two are never mistaken for each other. */
export const ACCESS_KEY_PREFIX = 'lka_';

export const ACCESS_KEY_PERMISSIONS = ['read', 'tail', 'ingest'] as const;
export type AccessKeyPermission = (typeof ACCESS_KEY_PERMISSIONS)[number];

/** What a key is narrowed to. */
export interface AccessKeyScope {
  permissions: AccessKeyPermission[];
  /** Projects the key covers (any of their entries). */
  projectIds: number[];
  /** Groups the key covers: the group itself and every project in it. */
  groupIds: number[];
}

/** A key that authenticated a request: live, its user active. */
export interface AuthenticatedAccessKey {
  id: number;
  scope: AccessKeyScope;
}

/** A new plaintext key: `lka_` + 32 random bytes, base64url (43 characters). */
export function generateAccessKey(): string {
  return ACCESS_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form and lookup value: SHA-256, lower-case hex. */
export function hashAccessKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Whether a bearer value is an access key (by its prefix; nothing else is looked up as one). */
export function isAccessKey(bearer: string): boolean {
  return bearer.startsWith(ACCESS_KEY_PREFIX);
}

/** Neither revoked nor past its expiry at `now`. */
export function accessKeyLive(row: Pick<AccessKeyRow, 'revokedAt' | 'expiresAt'>, now: number): boolean {
  return row.revokedAt === null && row.expiresAt > now;
}

/** The stored JSON of a scope: permissions in a fixed order, ids sorted and unique. */
export function scopeJson(scope: AccessKeyScope): string {
  const ids = (list: number[]) => [...new Set(list)].sort((a, b) => a - b);
  return JSON.stringify({
    permissions: ACCESS_KEY_PERMISSIONS.filter((p) => scope.permissions.includes(p)),
    project_ids: ids(scope.projectIds),
    group_ids: ids(scope.groupIds),
  });
}

/** The empty scope: what a stored scope that cannot be read grants (nothing). */
const NOTHING: AccessKeyScope = { permissions: [], projectIds: [], groupIds: [] };

/** Reads a stored scope; anything unexpected reads as a scope that allows nothing. */
export function parseScope(json: string): AccessKeyScope {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return NOTHING;
  }
  if (typeof value !== 'object' || value === null) return NOTHING;
  const { permissions, project_ids: projectIds, group_ids: groupIds } = value as Record<string, unknown>;
  const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.every((id) => Number.isSafeInteger(id) && (id as number) > 0);
  if (!Array.isArray(permissions) || !isIds(projectIds) || !isIds(groupIds)) return NOTHING;
  return {
    permissions: ACCESS_KEY_PERMISSIONS.filter((p) => permissions.includes(p)),
    projectIds,
    groupIds,
  };
}

/** The key's scope names the project, directly or through its group. */
export function scopeCoversProject(scope: AccessKeyScope, project: ProjectRef): boolean {
  return scope.projectIds.includes(project.id) || scope.groupIds.includes(project.groupId);
}

/** The key's scope names the group itself (a project of it is not enough). */
export function scopeCoversGroup(scope: AccessKeyScope, groupId: number): boolean {
  return scope.groupIds.includes(groupId);
}

/** May the key read (or tail) the project: its scope names it and the user, now, may see it. */
export function keyMayReadProject(scope: AccessKeyScope, grants: readonly RoleGrant[], project: ProjectRef): boolean {
  return scopeCoversProject(scope, project) && canSeeProject(grants, project);
}

/** May the key read (or tail) the whole group: its scope names the group and the user, now, may see it. */
export function keyMayReadGroup(scope: AccessKeyScope, grants: readonly RoleGrant[], groupId: number): boolean {
  return scopeCoversGroup(scope, groupId) && canSeeGroup(grants, groupId);
}

/**
 * May the key ingest into the project: its scope names it and the user,
 * now, may write there. Writing takes the right to manage the project (the
 * same that creates its secret keys): whoever could hand a script a secret
 * key may hand it an access key instead, and nobody else.
 */
export function keyMayIngest(scope: AccessKeyScope, grants: readonly RoleGrant[], project: ProjectRef): boolean {
  return scope.permissions.includes('ingest') && scopeCoversProject(scope, project) && canManageProject(grants, project);
}
