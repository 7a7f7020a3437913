/**
 * Provider groups to teams. The mapping is the operator's pairs
 * (`--oidc-group-teams`) plus those administrators set; a team that appears
 * in it is kept in step with the provider for every person signed in
 * through single sign-on: a member exactly when one of their provider
 * groups maps to it. A membership the sync made is remembered, so it is
 * also taken back when its team leaves the mapping. Both directions are applied at each sign-in and each
 * refresh (from the groups of the last sign-in), each change audited with
 * no actor and `source: oidc`, and moving `token_version` as a change by
 * hand does.
 *
 * What the sync never does: join a team that holds a global-scope grant
 * (administrator rights come only from `--oidc-admin-claim`), join a
 * blocked or deleted account to anything, or remove the last owner of a
 * group (that removal is skipped and waits for a person to hand the group
 * on).
 */
import { parseGroupTeamPair } from '../core/config.js';
import type { ServiceLogger } from '../core/logger.js';
import type { WriteOps } from '../storage/storage.js';
import type { GroupTeamRow } from '../storage/types-sso.js';
import { recordAudit } from '../audit/audit.js';
import { groupsOwnedByTeam } from './teams.js';

/** The operator's pairs, parsed (the configuration check refused malformed ones). */
export function configuredGroupTeams(pairs: readonly string[]): GroupTeamRow[] {
  return pairs.flatMap((pair) => {
    const parsed = parseGroupTeamPair(pair);
    return parsed === null ? [] : [{ providerGroup: parsed.group, teamId: parsed.teamId }];
  });
}

/** What one sync changed, for tests and diagnostics. */
export interface SyncOutcome {
  added: number[];
  removed: number[];
  /** Teams left as they were: a global grant (join) or a group's last owner (leave). */
  skipped: number[];
}

async function holdsGlobalGrant(tx: WriteOps, teamId: number): Promise<boolean> {
  return (await tx.listRoleAssignments({ subjectType: 'team', subjectId: teamId, scopeType: 'global' })).length > 0;
}

/** Removes the member unless that leaves a group that had an owner with none; true when removed. */
async function removeUnlessLastOwner(tx: WriteOps, teamId: number, userId: number): Promise<boolean> {
  const owned = await groupsOwnedByTeam(tx, teamId);
  if (owned.length === 0) return tx.removeTeamMember(teamId, userId);
  await tx.lockGroups(owned);
  const before = await tx.countGroupOwners(owned);
  await tx.removeTeamMember(teamId, userId);
  const after = new Map((await tx.countGroupOwners(owned)).map((g) => [g.groupId, g.owners]));
  if (before.some((g) => g.owners > 0 && (after.get(g.groupId) ?? 0) === 0)) {
    await tx.addTeamMember(teamId, userId);
    return false;
  }
  return true;
}

/**
 * Brings the user's memberships of mapped teams in line with `groups`,
 * inside the caller's transaction.
 */
export async function syncGroupTeams(
  tx: WriteOps,
  input: { userId: number; groups: readonly string[]; configured: readonly GroupTeamRow[]; now: number; logger: ServiceLogger },
): Promise<SyncOutcome> {
  const outcome: SyncOutcome = { added: [], removed: [], skipped: [] };
  const user = await tx.getUserById(input.userId);
  if (!user) return outcome;
  const mapping = [...input.configured, ...(await tx.listGroupTeams())];
  const held = new Set(input.groups);
  const wanted = new Map<number, boolean>();
  for (const row of mapping) wanted.set(row.teamId, (wanted.get(row.teamId) ?? false) || held.has(row.providerGroup));
  // A membership the sync made in a team that has since left the mapping is the sync's to take back.
  const synced = await tx.syncedTeamIdsOfUser(user.id);
  for (const teamId of synced) if (!wanted.has(teamId)) wanted.set(teamId, false);
  const current = new Set(await tx.teamIdsOfUser(user.id));
  const live = user.isActive && user.deletedAt === null;
  for (const [teamId, want] of [...wanted].sort((a, b) => a[0] - b[0])) {
    const member = current.has(teamId);
    if (!want && !member && synced.includes(teamId)) await tx.setSyncedMembership(teamId, user.id, false);
    if (want === member || (want && !live)) continue;
    const team = await tx.getTeam(teamId);
    if (!team) continue;
    if (want) {
      if (await holdsGlobalGrant(tx, teamId)) {
        outcome.skipped.push(teamId);
        input.logger.warn('single sign-on did not join a team that holds a global grant', { team_id: teamId, user_id: user.id });
        continue;
      }
      await tx.lockGroups([team.groupId]);
      if (!(await tx.addTeamMember(teamId, user.id))) continue;
      await tx.setSyncedMembership(teamId, user.id, true);
      outcome.added.push(teamId);
    } else {
      if (!(await removeUnlessLastOwner(tx, teamId, user.id))) {
        outcome.skipped.push(teamId);
        input.logger.warn('single sign-on kept the last owner of a group in its team', { team_id: teamId, user_id: user.id });
        continue;
      }
      await tx.setSyncedMembership(teamId, user.id, false);
      outcome.removed.push(teamId);
    }
    await recordAudit(
      tx,
      {
        actorUserId: null,
        action: want ? 'team.member_added' : 'team.member_removed',
        targetType: 'team',
        targetId: teamId,
        metadata: { user_id: user.id, source: 'oidc' },
      },
      input.now,
    );
  }
  if (outcome.added.length + outcome.removed.length > 0) await tx.bumpTokenVersion([user.id]);
  return outcome;
}
