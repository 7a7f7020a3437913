/**
 * Role assignments: create, revoke and list with the owner/admin rules of
 * `auth/rbac.ts`. Every grant and revocation moves the token_version of the
 * users it touches (the user subject, or every member of a team subject), so
 * their access tokens, which carry a roles snapshot, stop working at once.
 * Revoking a group's last owner grant is refused by the sole-owner guard.
 *
 * Check order on role-assignment routes: 403 for a role or scope type
 * outside the caller's rights, 404 for a scope that does not exist, 403 for
 * a scope outside the caller's groups, 404 for a missing subject, 403 for a
 * team of another group.
 */
import { forbidden, invalidRequest, notFound } from '../core/errors.js';
import { mayGrant, mayGrantRoleAtScopeType, roleAssignmentListScope, type GrantScope, type GrantSubject } from '../auth/rbac.js';
import type { ReadOps, Storage } from '../storage/storage.js';
import type { Role, RoleAssignmentFilter, RoleAssignmentRow, ScopeType, SubjectType } from '../storage/types-org.js';
import { recordAudit } from '../audit/audit.js';
import { guardGroupOwners } from './owner-guard.js';
import type { Actor } from './org-access.js';

export interface RoleAssignmentInput {
  subjectType: SubjectType;
  subjectId: number;
  role: Role;
  scopeType: ScopeType;
  /** Required unless scopeType is 'global', where it must be absent or null. */
  scopeId: number | null;
}

/** Rules between fields that a schema cannot express: scope_id iff not global; `admin` only at global scope. */
function checkShape(input: RoleAssignmentInput): void {
  if (input.scopeType === 'global' && input.scopeId !== null) {
    throw invalidRequest('scope_id must be null or absent when scope_type is global.', 'scope_id', 'invalid');
  }
  if (input.scopeType !== 'global' && input.scopeId === null) {
    throw invalidRequest('scope_id is required unless scope_type is global.', 'scope_id', 'required');
  }
  if (input.role === 'admin' && input.scopeType !== 'global') {
    throw invalidRequest('The admin role exists only at global scope.', 'scope_type', 'invalid');
  }
}

/** The scope with its group, or null when the group or project does not exist. */
export async function findScope(db: ReadOps, scopeType: ScopeType, scopeId: number | null): Promise<GrantScope | null> {
  if (scopeType === 'global' || scopeId === null) return { type: 'global' };
  if (scopeType === 'group') {
    const group = await db.getGroup(scopeId);
    return group ? { type: 'group', groupId: group.id } : null;
  }
  const project = await db.getProject(scopeId);
  return project ? { type: 'project', projectId: project.id, groupId: project.groupId } : null;
}

/** The scope with its group, or 404. */
async function resolveScope(db: ReadOps, scopeType: ScopeType, scopeId: number | null): Promise<GrantScope> {
  const scope = await findScope(db, scopeType, scopeId);
  if (!scope) throw notFound(`No such ${scopeType}.`);
  return scope;
}

async function findTeamSubject(db: ReadOps, teamId: number): Promise<GrantSubject | null> {
  const team = await db.getTeam(teamId);
  return team ? { type: 'team', groupId: team.groupId } : null;
}

/** The subject, or 404 when the user (live) or team does not exist. */
async function resolveSubject(db: ReadOps, subjectType: SubjectType, subjectId: number): Promise<GrantSubject> {
  if (subjectType === 'user') {
    const user = await db.getUserById(subjectId);
    if (!user || user.deletedAt !== null) throw notFound('No such user.');
    return { type: 'user' };
  }
  const team = await findTeamSubject(db, subjectId);
  if (!team) throw notFound('No such team.');
  return team;
}

/** Users whose effective grants a change to this assignment's subject alters. */
async function affectedUsers(db: ReadOps, subjectType: SubjectType, subjectId: number): Promise<number[]> {
  if (subjectType === 'user') return [subjectId];
  return (await db.listTeamMembers(subjectId)).map((m) => m.userId);
}

function auditMetadata(row: RoleAssignmentRow) {
  return { role: row.role, scope_type: row.scopeType, scope_id: row.scopeId, subject_type: row.subjectType, subject_id: row.subjectId };
}

/**
 * Creates a grant. The route already refused callers who may grant nothing
 * and validated the body's types.
 */
export function createRoleAssignment(storage: Storage, actor: Actor, input: RoleAssignmentInput, now: number): Promise<RoleAssignmentRow> {
  if (!mayGrantRoleAtScopeType(actor.grants, input.role, input.scopeType)) throw forbidden('You may not grant this role at this scope.');
  checkShape(input);
  return storage.write(async (tx) => {
    const scope = await resolveScope(tx, input.scopeType, input.scopeId);
    if (!mayGrant(actor.grants, input.role, scope, { type: 'user' })) throw forbidden('This scope is outside your groups.');
    const subject = await resolveSubject(tx, input.subjectType, input.subjectId);
    if (!mayGrant(actor.grants, input.role, scope, subject)) throw forbidden('You may grant roles only to teams of the same group.');
    // Member changes of the team take turns with this grant (they lock the same group), so a member
    // added meanwhile is either seen below (and its tokens invalidated) or checked against this grant.
    if (subject.type === 'team') await tx.lockGroups([subject.groupId]);
    const row = await tx.insertRoleAssignment({ ...input, createdAt: now });
    await tx.bumpTokenVersion(await affectedUsers(tx, row.subjectType, row.subjectId));
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'role_assignment.created', targetType: 'role_assignment', targetId: row.id, metadata: auditMetadata(row) },
      now,
    );
    return row;
  });
}

/** Whether the caller could have created this assignment (the revocation rule is the creation rule). */
async function mayManageAssignment(db: ReadOps, actor: Actor, row: RoleAssignmentRow): Promise<boolean> {
  if (!mayGrantRoleAtScopeType(actor.grants, row.role, row.scopeType)) return false;
  const scope = await findScope(db, row.scopeType, row.scopeId);
  const subject: GrantSubject | null = row.subjectType === 'user' ? { type: 'user' } : await findTeamSubject(db, row.subjectId);
  // A grant pointing at nothing can only be cleaned up by an administrator (global-scope rule).
  if (!scope || !subject) return mayGrant(actor.grants, row.role, { type: 'global' }, { type: 'user' });
  return mayGrant(actor.grants, row.role, scope, subject);
}

/**
 * Revokes a grant: 404 when it does not exist, 403 when the caller could
 * not have created it, 409 `sole_group_owner` when it is a group's last
 * owner (directly or through the team's members).
 */
export function deleteRoleAssignment(storage: Storage, actor: Actor, id: number, now: number): Promise<void> {
  return storage.write(async (tx) => {
    const row = await tx.getRoleAssignment(id);
    if (!row) throw notFound('No such role assignment.');
    if (!(await mayManageAssignment(tx, actor, row))) throw forbidden('You may not revoke this role assignment.');
    const affected = await affectedUsers(tx, row.subjectType, row.subjectId);
    const ownedGroups = row.role === 'owner' && row.scopeType === 'group' && row.scopeId !== null ? [row.scopeId] : [];
    await guardGroupOwners(tx, ownedGroups, async () => {
      // A concurrent revocation may have won since the read above (PostgreSQL row lock).
      if (!(await tx.deleteRoleAssignment(row.id))) throw notFound('No such role assignment.');
    });
    await tx.bumpTokenVersion(affected);
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'role_assignment.revoked', targetType: 'role_assignment', targetId: row.id, metadata: auditMetadata(row) },
      now,
    );
  });
}

export interface RoleAssignmentQuery {
  subjectType?: SubjectType;
  subjectId?: number;
  scopeType?: ScopeType;
  scopeId?: number;
}

/**
 * Admin (and a global owner) list every assignment; a group owner the
 * ones scoped to its groups or their projects; anyone else is refused
 * before any lookup. A scope filter outside the caller's groups is 403, a
 * scope or subject that does not exist 404.
 */
export async function listRoleAssignments(storage: Storage, actor: Actor, query: RoleAssignmentQuery): Promise<RoleAssignmentRow[]> {
  const allowed = roleAssignmentListScope(actor.grants);
  if (!allowed) throw forbidden();
  const filter: RoleAssignmentFilter = { ...query };
  let scope: GrantScope | null = null;
  if (query.scopeType !== undefined) {
    if (query.scopeType === 'global' && !allowed.all) throw forbidden('Only an administrator may list global grants.');
    if (query.scopeId !== undefined) scope = await resolveScope(storage, query.scopeType, query.scopeId);
  }
  if (query.subjectType !== undefined && query.subjectId !== undefined) {
    const exists = query.subjectType === 'user' ? await storage.getUserById(query.subjectId) : await storage.getTeam(query.subjectId);
    if (!exists) throw notFound(`No such ${query.subjectType}.`);
  }
  if (allowed.all) return storage.listRoleAssignments(filter);
  if (scope && scope.type !== 'global') {
    if (!allowed.groupIds.includes(scope.groupId)) throw forbidden('This scope is outside your groups.');
    return storage.listRoleAssignments(filter);
  }
  const perGroup = await Promise.all(allowed.groupIds.map((groupId) => storage.listRoleAssignments({ ...filter, withinGroupId: groupId })));
  return mergeNewestFirst(perGroup);
}

function mergeNewestFirst(lists: RoleAssignmentRow[][]): RoleAssignmentRow[] {
  const byId = new Map<number, RoleAssignmentRow>();
  for (const list of lists) for (const row of list) byId.set(row.id, row);
  return [...byId.values()].sort((a, b) => b.id - a.id);
}
