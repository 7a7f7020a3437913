/**
 * Authorization predicates over the effective grants carried by the access
 * token (roles are read from the token claims). Every route and every
 * list query asks these, so the rules live in one place. They are pure: the
 * caller looks up the resource (a project's group, a team's group) and passes
 * the ids in.
 *
 * The rules:
 * - see: a global grant of any role sees everything; a group-scope grant sees
 *   the group and its projects, teams, members and keys; a project-scope
 *   grant sees that project (and its keys) only, never its group;
 * - manage a group (teams, members, projects, keys, grants inside it): admin,
 *   `owner` at global scope, or `owner` of that group;
 * - manage a project (PATCH, secret keys): whoever manages its group, or an
 *   `owner` grant on that very project. Decision: a project-scope `owner`
 *   would otherwise be indistinguishable from `user`; it may change the
 *   project's quotas and retention and create and revoke its keys, but it
 *   owns no group, so it grants no roles and manages no team;
 * - grant or revoke a role: admin, any role at any scope; otherwise only
 *   `owner` or `user`, at the scope of a group the caller manages or one of
 *   its projects, to a user or to a team of that same group. Global-scope
 *   grants are admin's alone (a global owner is not admin);
 * - add or remove a team's members: whoever manages the team's group, but a
 *   non-admin only while the team holds nothing the caller could not grant
 *   the team itself (joining a team hands out its grants, leaving one takes
 *   them away);
 * - admin only: user administration, blocking, the audit log.
 */
import type { Role, RoleGrant, ScopeType, Visibility } from '../storage/types-org.js';

/** A project as the predicates need it. */
export interface ProjectRef {
  id: number;
  groupId: number;
}

/** The scope of a grant being created or revoked, resolved to its group. */
export type GrantScope = { type: 'global' } | { type: 'group'; groupId: number } | { type: 'project'; projectId: number; groupId: number };

/** The subject of a grant being created or revoked; a team comes with its group. */
export type GrantSubject = { type: 'user' } | { type: 'team'; groupId: number };

/** `admin` at global scope: user administration, blocking, the audit log. */
export function isAdmin(grants: readonly RoleGrant[]): boolean {
  return grants.some((g) => g.role === 'admin' && g.scope_type === 'global');
}

function has(grants: readonly RoleGrant[], scopeType: ScopeType, scopeId: number | null, roles?: readonly Role[]): boolean {
  return grants.some((g) => g.scope_type === scopeType && g.scope_id === scopeId && (roles === undefined || roles.includes(g.role)));
}

const OWNING: readonly Role[] = ['admin', 'owner'];

/** Any role at global scope: sees every group and project. */
export function hasGlobalGrant(grants: readonly RoleGrant[]): boolean {
  return grants.some((g) => g.scope_type === 'global');
}

/** A global grant, or any grant on the group (direct or through a team). */
export function canSeeGroup(grants: readonly RoleGrant[], groupId: number): boolean {
  return hasGlobalGrant(grants) || has(grants, 'group', groupId);
}

/** A global grant, a grant on the project's group, or one on the project. */
export function canSeeProject(grants: readonly RoleGrant[], project: ProjectRef): boolean {
  return canSeeGroup(grants, project.groupId) || has(grants, 'project', project.id);
}

/** Admin, or `owner` at global scope, or `owner` of this group. */
export function canManageGroup(grants: readonly RoleGrant[], groupId: number): boolean {
  return isAdmin(grants) || has(grants, 'global', null, OWNING) || has(grants, 'group', groupId, OWNING);
}

/** Whoever manages the project's group, or an `owner` grant on the project itself (see the module comment). */
export function canManageProject(grants: readonly RoleGrant[], project: ProjectRef): boolean {
  return canManageGroup(grants, project.groupId) || has(grants, 'project', project.id, OWNING);
}

/**
 * Whether the caller may grant anything at all: admin, or an `owner` at
 * global or group scope. Callers without it are refused before any lookup.
 */
export function mayGrantAnything(grants: readonly RoleGrant[]): boolean {
  return isAdmin(grants) || grants.some((g) => g.role === 'owner' && (g.scope_type === 'global' || g.scope_type === 'group'));
}

/** Role rule alone: only admin hands out `admin` or grants at global scope. */
export function mayGrantRoleAtScopeType(grants: readonly RoleGrant[], role: Role, scopeType: ScopeType): boolean {
  if (isAdmin(grants)) return true;
  return role !== 'admin' && scopeType !== 'global' && mayGrantAnything(grants);
}

/**
 * May the caller create (or revoke) a grant of `role` at `scope` for
 * `subject`? (Revocation uses the same rule.)
 */
export function mayGrant(grants: readonly RoleGrant[], role: Role, scope: GrantScope, subject: GrantSubject): boolean {
  if (isAdmin(grants)) return true;
  if (scope.type === 'global' || !mayGrantRoleAtScopeType(grants, role, scope.type)) return false;
  if (!canManageGroup(grants, scope.groupId)) return false;
  return subject.type === 'user' || subject.groupId === scope.groupId;
}

/** A grant a team holds, its scope resolved to its group (null: the group or project is gone). */
export interface HeldGrant {
  role: Role;
  scope: GrantScope | null;
}

/**
 * May the caller add or remove members of a team of `teamGroupId` holding
 * `held`? Admin always; anyone else only when each held grant is one they
 * could have given the team themselves, so membership never hands out (or
 * takes away) an `admin`, a global grant or a grant outside their groups.
 * The caller must also manage the team's group (checked before).
 */
export function mayChangeTeamMembers(grants: readonly RoleGrant[], teamGroupId: number, held: readonly HeldGrant[]): boolean {
  if (isAdmin(grants)) return true;
  const team: GrantSubject = { type: 'team', groupId: teamGroupId };
  return held.every((h) => h.scope !== null && mayGrant(grants, h.role, h.scope, team));
}

/**
 * Which role assignments the caller may list: all of them (admin, or
 * owner at global scope), those scoped to the listed groups or their
 * projects, or nothing (`null`: 403).
 */
export function roleAssignmentListScope(grants: readonly RoleGrant[]): { all: true } | { all: false; groupIds: number[] } | null {
  if (isAdmin(grants) || has(grants, 'global', null, OWNING)) return { all: true };
  const groupIds = ownedGroupIds(grants);
  return groupIds.length > 0 ? { all: false, groupIds } : null;
}

/** Groups the caller owns through a group-scope `owner` grant (direct or via a team). */
export function ownedGroupIds(grants: readonly RoleGrant[]): number[] {
  return unique(grants.filter((g) => g.scope_type === 'group' && g.scope_id !== null && OWNING.includes(g.role)).map((g) => g.scope_id as number));
}

/**
 * What list queries may return, applied inside the query: everything
 * with a global grant; otherwise the groups with a group-scope grant (and
 * their projects) plus the projects with a project-scope grant.
 */
export function visibilityOf(grants: readonly RoleGrant[]): Visibility {
  if (hasGlobalGrant(grants)) return { all: true };
  const groupIds: number[] = [];
  const projectIds: number[] = [];
  for (const g of grants) {
    if (g.scope_id === null) continue;
    if (g.scope_type === 'group') groupIds.push(g.scope_id);
    else if (g.scope_type === 'project') projectIds.push(g.scope_id);
  }
  return { all: false, groupIds: unique(groupIds), projectIds: unique(projectIds) };
}

/** True when a visibility can match nothing (no query needed). */
export function seesNothing(visibility: Visibility): boolean {
  return !visibility.all && visibility.groupIds.length === 0 && visibility.projectIds.length === 0;
}

function unique(ids: number[]): number[] {
  return [...new Set(ids)].sort((a, b) => a - b);
}
