/**
 * Teams and their members. A team belongs to exactly one group; membership
 * changes move the member's token_version (the added or removed user's
 * only), and removing a member runs the sole-owner guard over the groups the
 * team owns.
 *
 * Joining a team hands out every grant the team holds, so a non-admin may
 * change its members only while the team holds nothing they could not have
 * granted it themselves (`mayChangeTeamMembers`). The check runs inside the
 * member change's transaction with the team's group locked; a grant to the
 * team locks the same group, so the two take turns on PostgreSQL (SQLite
 * runs write transactions one at a time anyway).
 */
import { forbidden, notFound } from '../core/errors.js';
import { isAdmin, mayChangeTeamMembers, type HeldGrant } from '../auth/rbac.js';
import type { ReadOps, Storage, WriteOps } from '../storage/storage.js';
import type { TeamMemberRow, TeamRow } from '../storage/types-org.js';
import { recordAudit } from '../audit/audit.js';
import { guardGroupOwners } from './owner-guard.js';
import { findScope } from './role-assignments.js';
import type { Actor } from './org-access.js';

/** Inserts the team and its `team.created` audit row. The caller checked it may manage the group. */
export function createTeam(storage: Storage, actor: Actor, groupId: number, name: string, now: number): Promise<TeamRow> {
  return storage.write(async (tx) => {
    const team = await tx.insertTeam(groupId, name, now);
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'team.created', targetType: 'team', targetId: team.id, metadata: { name, group_id: groupId } },
      now,
    );
    return team;
  });
}

/**
 * 403 unless the caller may change this team's members (see the module
 * comment). The route asks it before reading the body; the member change
 * asks again inside its transaction.
 */
export async function requireTeamMembershipRights(db: ReadOps, actor: Actor, team: TeamRow): Promise<void> {
  if (isAdmin(actor.grants)) return;
  const held: HeldGrant[] = [];
  for (const grant of await db.listRoleAssignments({ subjectType: 'team', subjectId: team.id })) {
    held.push({ role: grant.role, scope: await findScope(db, grant.scopeType, grant.scopeId) });
  }
  if (!mayChangeTeamMembers(actor.grants, team.groupId, held)) {
    throw forbidden('This team holds roles you could not grant yourself; only an administrator may change its members.');
  }
}

/**
 * Adds a live user to the team. Adding an existing member changes nothing
 * (no bump, no audit row). A missing or deleted user is 404.
 */
export function addTeamMember(storage: Storage, actor: Actor, team: TeamRow, userId: number, now: number): Promise<void> {
  return storage.write(async (tx) => {
    await tx.lockGroups([team.groupId]);
    await requireTeamMembershipRights(tx, actor, team);
    const user = await tx.getUserById(userId);
    if (!user || user.deletedAt !== null) throw notFound('No such user.');
    if (!(await tx.addTeamMember(team.id, userId))) return;
    await tx.bumpTokenVersion([userId]);
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'team.member_added', targetType: 'team', targetId: team.id, metadata: { user_id: userId } },
      now,
    );
  });
}

/**
 * Removes a member: 404 when the user is not a member; 403 when the
 * team holds grants the caller could not make; 409 `sole_group_owner` when
 * the team owns a group that would be left without an owner.
 */
export function removeTeamMember(storage: Storage, actor: Actor, team: TeamRow, userId: number, now: number): Promise<void> {
  return storage.write(async (tx) => {
    const owned = await groupsOwnedByTeam(tx, team.id);
    // Every group this change depends on, locked at once (in id order) so it cannot deadlock with the guard.
    await tx.lockGroups([team.groupId, ...owned]);
    if (!(await tx.isTeamMember(team.id, userId))) throw notFound('That user is not a member of this team.');
    await requireTeamMembershipRights(tx, actor, team);
    await guardGroupOwners(tx, await groupsOwnedByTeam(tx, team.id), () => tx.removeTeamMember(team.id, userId));
    await tx.bumpTokenVersion([userId]);
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'team.member_removed', targetType: 'team', targetId: team.id, metadata: { user_id: userId } },
      now,
    );
  });
}

/** Groups in which the team holds an `owner` grant at group scope. */
export async function groupsOwnedByTeam(tx: WriteOps, teamId: number): Promise<number[]> {
  const grants = await tx.listRoleAssignments({ subjectType: 'team', subjectId: teamId, scopeType: 'group' });
  return grants.filter((g) => g.role === 'owner' && g.scopeId !== null).map((g) => g.scopeId as number);
}

export function listTeams(storage: Storage, groupId: number): Promise<TeamRow[]> {
  return storage.listTeams(groupId);
}

export function listTeamMembers(storage: Storage, teamId: number): Promise<TeamMemberRow[]> {
  return storage.listTeamMembers(teamId);
}
