/**
 * Lookups that apply the 404-before-403 rule once for every organisation
 * route: a resource the caller cannot see answers 404 exactly like a missing
 * one; a visible one the caller may not act on answers 403. Teams and keys
 * follow their group or project.
 */
import { forbidden, notFound } from '../core/errors.js';
import { canManageGroup, canManageProject, canSeeGroup, canSeeProject, isAdmin } from '../auth/rbac.js';
import type { GroupRow, ProjectRow, RoleGrant, TeamRow } from '../storage/types-org.js';
import type { ReadOps } from '../storage/storage.js';

/** The signed-in caller as the admin operations need it. */
export interface Actor {
  userId: number;
  /** Effective grants from the access token's `roles` claim. */
  grants: RoleGrant[];
}

export type Access = 'see' | 'manage';

/** Admin-only routes answer 403 to everyone else before any lookup. */
export function requireAdmin(actor: Actor): void {
  if (!isAdmin(actor.grants)) throw forbidden('Only an administrator may do this.');
}

export async function requireGroup(db: ReadOps, actor: Actor, groupId: number, access: Access): Promise<GroupRow> {
  const group = await db.getGroup(groupId);
  if (!group || !canSeeGroup(actor.grants, group.id)) throw notFound('No such group.');
  if (access === 'manage' && !canManageGroup(actor.grants, group.id)) throw forbidden();
  return group;
}

export async function requireTeam(db: ReadOps, actor: Actor, teamId: number, access: Access): Promise<TeamRow> {
  const team = await db.getTeam(teamId);
  if (!team || !canSeeGroup(actor.grants, team.groupId)) throw notFound('No such team.');
  if (access === 'manage' && !canManageGroup(actor.grants, team.groupId)) throw forbidden();
  return team;
}

export async function requireProject(db: ReadOps, actor: Actor, projectId: number, access: Access): Promise<ProjectRow> {
  const project = await db.getProject(projectId);
  if (!project || !canSeeProject(actor.grants, project)) throw notFound('No such project.');
  if (access === 'manage' && !canManageProject(actor.grants, project)) throw forbidden();
  return project;
}

/** A project for admin-only routes (block, unblock): existence only, the admin check ran before. */
export async function requireExistingProject(db: ReadOps, projectId: number): Promise<ProjectRow> {
  const project = await db.getProject(projectId);
  if (!project) throw notFound('No such project.');
  return project;
}
