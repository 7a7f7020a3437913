/**
 * What administrators do about single sign-on: link a user to a provider's
 * subject (so that person's first sign-in finds the account instead of
 * being refused or creating another), unlink it, and set the mapping of
 * provider groups to teams. Each change is audited in its transaction.
 * Callers have checked that the actor is an administrator.
 */
import { StorageConflict, conflict, invalidRequest, notFound } from '../core/errors.js';
import type { Storage } from '../storage/storage.js';
import type { GroupTeamRow, IdentityRow } from '../storage/types-sso.js';
import { recordAudit } from '../audit/audit.js';
import { OIDC_GROUP_MAX_CHARS, OIDC_SUBJECT_MAX_CHARS } from './sso-sign-in.js';

/** Most pairs administrators may map: far more teams than an organisation keeps, few enough that every sign-in reads them all cheaply. */
export const SSO_GROUP_TEAMS_MAX = 500;

/** Links the live user to the issuer's subject; 409 `identity_taken` when that subject is linked already. */
export async function linkIdentity(
  storage: Storage,
  actorUserId: number,
  userId: number,
  input: { issuer: string; subject: string },
  now: number,
): Promise<IdentityRow> {
  if (input.subject.length === 0 || input.subject.length > OIDC_SUBJECT_MAX_CHARS) {
    throw invalidRequest(`The subject must be 1 to ${OIDC_SUBJECT_MAX_CHARS} characters.`, 'subject', input.subject.length === 0 ? 'required' : 'too_long', {
      max_length: OIDC_SUBJECT_MAX_CHARS,
    });
  }
  try {
    return await storage.write(async (tx) => {
      const user = await tx.getUserById(userId);
      if (!user || user.deletedAt !== null) throw notFound('No such user.');
      const identity = await tx.insertIdentity({ userId, issuer: input.issuer, subject: input.subject, createdAt: now });
      await recordAudit(
        tx,
        { actorUserId, action: 'user.identity_linked', targetType: 'user', targetId: userId, metadata: { issuer: input.issuer, subject: input.subject } },
        now,
      );
      return identity;
    });
  } catch (err) {
    if (err instanceof StorageConflict && err.constraint === 'identity') {
      throw conflict('identity_taken', 'That identity is linked to an account already.');
    }
    throw err;
  }
}

/** Unlinks one of the user's identities; 404 when the user has no such identity. */
export function unlinkIdentity(storage: Storage, actorUserId: number, userId: number, identityId: number, now: number): Promise<void> {
  return storage.write(async (tx) => {
    const identity = await tx.getIdentity(identityId);
    if (!identity || identity.userId !== userId) throw notFound('No such identity.');
    await tx.deleteIdentity(identityId);
    await recordAudit(
      tx,
      { actorUserId, action: 'user.identity_unlinked', targetType: 'user', targetId: userId, metadata: { issuer: identity.issuer, subject: identity.subject } },
      now,
    );
  });
}

/**
 * Replaces the mapping administrators set. Every team must exist and hold
 * no global-scope grant (global rights never come from a provider group).
 */
export function setGroupTeams(storage: Storage, actorUserId: number, rows: readonly GroupTeamRow[], now: number): Promise<GroupTeamRow[]> {
  if (rows.length > SSO_GROUP_TEAMS_MAX) {
    throw invalidRequest(`At most ${SSO_GROUP_TEAMS_MAX} pairs may be mapped.`, 'items', 'too_long', { max_length: SSO_GROUP_TEAMS_MAX });
  }
  for (const row of rows) {
    if (row.providerGroup.length === 0 || row.providerGroup.length > OIDC_GROUP_MAX_CHARS) {
      throw invalidRequest(`A provider group is 1 to ${OIDC_GROUP_MAX_CHARS} characters.`, 'provider_group', 'invalid', { max_length: OIDC_GROUP_MAX_CHARS });
    }
  }
  return storage.write(async (tx) => {
    for (const teamId of new Set(rows.map((r) => r.teamId))) {
      if (!(await tx.getTeam(teamId))) throw invalidRequest(`There is no team ${teamId}.`, 'team_id', 'invalid');
      if ((await tx.listRoleAssignments({ subjectType: 'team', subjectId: teamId, scopeType: 'global' })).length > 0) {
        throw invalidRequest(`Team ${teamId} holds a global role; global rights never come from a provider group.`, 'team_id', 'invalid');
      }
    }
    await tx.replaceGroupTeams(rows);
    const stored = await tx.listGroupTeams();
    await recordAudit(
      tx,
      {
        actorUserId,
        action: 'sso.group_teams_set',
        targetType: 'sso',
        targetId: null,
        metadata: { pairs: stored.map((r) => ({ provider_group: r.providerGroup, team_id: r.teamId })) },
      },
      now,
    );
    return stored;
  });
}
