/**
 * The read verbs of the PostgreSQL backend, over any pg-promise protocol
 * object: the pool (plain reads outside a transaction) or a transaction task
 * (reads inside `Storage.write`). The same code serves both.
 */
import * as SsoRows from './sso.js';
import type { SqlExecutor } from './connection.js';
import type * as Org from '../types-org.js';
import type { ReadOps } from '../storage.js';
import type { OpenIngestion } from './ingesting.js';
import * as sql from './sql.js';
import * as LogEntries from './log-entries.js';
import * as Retention from './retention.js';
import * as Histogram from './histogram.js';
import * as SavedSearches from './saved-searches.js';
import * as AlertRules from './alert-rules.js';
import { type RowReadVerbs, rowReadVerbs } from '../row-verbs.js';
import { DictionaryCache } from '../log-index/sealed-reads.js';

/** An audit row as selected: metadata still JSON text. */
export type StoredAuditRow = Omit<Org.AuditRow, 'metadata'> & { metadata: string };

/** Parses the stored metadata text back into the object that was written. */
export function toAudit(row: StoredAuditRow): Org.AuditRow {
  return { ...row, metadata: JSON.parse(row.metadata) as Record<string, unknown> };
}

/** The lower-cased needle of a substring filter, null when absent. */
function needleOf(text: string | undefined): string | null {
  return text === undefined ? null : text.toLowerCase();
}

/** Visibility as bound parameters: a flag plus (possibly empty) id arrays. */
function visibilityParams(visibility: Org.Visibility): { all: boolean; groupIds: number[]; projectIds: number[] } {
  return visibility.all ? { all: true, groupIds: [], projectIds: [] } : { all: false, groupIds: visibility.groupIds, projectIds: visibility.projectIds };
}

// The verbs that are one row function each are bound to this connection, bound in the constructor (row-verbs.ts).
export interface PostgresReads extends RowReadVerbs {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every verb RowReadVerbs names, typed by rowReadVerbs.
export class PostgresReads implements ReadOps {
  constructor(
    protected readonly db: SqlExecutor,
    /** This pool's ingestion in flight (the storage's), so settles wait for it without polling. */
    protected readonly open?: OpenIngestion,
    /** Dictionaries of sealed blocks read lately (the storage's, shared by its queries). */
    protected readonly dictionaries: DictionaryCache = new DictionaryCache(),
  ) {
    Object.assign(this, rowReadVerbs(db, this.dictionaries, { ...SavedSearches, ...AlertRules, ...SsoRows, ...LogEntries, ...Histogram, ...Retention }));
  }

  async countUsers(): Promise<number> {
    return (await this.db.one<{ n: number }>(sql.COUNT_USERS)).n;
  }

  getUserById(id: number): Promise<Org.UserRow | null> {
    return this.db.oneOrNone<Org.UserRow>(sql.SELECT_USER_BY_ID, [id]);
  }

  getUserByUsername(username: string): Promise<Org.UserRow | null> {
    return this.db.oneOrNone<Org.UserRow>(sql.SELECT_USER_BY_USERNAME, [username]);
  }

  listUsers(filter: Org.UserFilter): Promise<Org.UserRow[]> {
    return this.db.any<Org.UserRow>(sql.LIST_USERS, {
      beforeId: filter.beforeId ?? null,
      needle: needleOf(filter.usernameContains),
      limit: filter.limit,
    });
  }

  async hasPrimaryAdmin(): Promise<boolean> {
    return (await this.db.one<{ present: boolean }>(sql.HAS_PRIMARY_ADMIN)).present;
  }

  getRefreshToken(tokenHash: string): Promise<Org.RefreshTokenRow | null> {
    return this.db.oneOrNone<Org.RefreshTokenRow>(sql.SELECT_REFRESH_TOKEN, [tokenHash]);
  }

  getGroup(id: number): Promise<Org.GroupRow | null> {
    return this.db.oneOrNone<Org.GroupRow>(sql.SELECT_GROUP, [id]);
  }

  listGroups(filter: Org.GroupFilter): Promise<Org.GroupRow[]> {
    return this.db.any<Org.GroupRow>(sql.LIST_GROUPS, {
      ...visibilityParams(filter.visibility),
      beforeId: filter.beforeId ?? null,
      needle: needleOf(filter.nameContains),
      limit: filter.limit,
    });
  }

  getTeam(id: number): Promise<Org.TeamRow | null> {
    return this.db.oneOrNone<Org.TeamRow>(sql.SELECT_TEAM, [id]);
  }

  listTeams(groupId: number): Promise<Org.TeamRow[]> {
    return this.db.any<Org.TeamRow>(sql.LIST_TEAMS, [groupId]);
  }

  listTeamMembers(teamId: number): Promise<Org.TeamMemberRow[]> {
    return this.db.any<Org.TeamMemberRow>(sql.LIST_TEAM_MEMBERS, [teamId]);
  }

  async isTeamMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.db.one<{ present: boolean }>(sql.IS_TEAM_MEMBER, [teamId, userId])).present;
  }

  teamIdsOfUser(userId: number): Promise<number[]> {
    return this.db.map(sql.TEAM_IDS_OF_USER, [userId], (row: { id: number }) => row.id);
  }

  getProject(id: number): Promise<Org.ProjectRow | null> {
    return this.db.oneOrNone<Org.ProjectRow>(sql.SELECT_PROJECT, [id]);
  }

  listProjects(filter: Org.ProjectFilter): Promise<Org.ProjectRow[]> {
    return this.db.any<Org.ProjectRow>(sql.LIST_PROJECTS, {
      ...visibilityParams(filter.visibility),
      groupId: filter.groupId ?? null,
      beforeId: filter.beforeId ?? null,
      needle: needleOf(filter.nameContains),
      limit: filter.limit,
    });
  }

  projectIdsOfGroup(groupId: number): Promise<{ id: number; isBlocked: boolean }[]> {
    return this.db.any<{ id: number; isBlocked: boolean }>(sql.PROJECTS_OF_GROUP, [groupId]);
  }

  getSecretKey(id: number): Promise<Org.SecretKeyRow | null> {
    return this.db.oneOrNone<Org.SecretKeyRow>(sql.SELECT_SECRET_KEY, [id]);
  }

  listSecretKeys(projectId: number): Promise<Org.SecretKeyRow[]> {
    return this.db.any<Org.SecretKeyRow>(sql.LIST_SECRET_KEYS, [projectId]);
  }

  findSecretKeyByHash(keyHash: string): Promise<Org.SecretKeyLookup | null> {
    return this.db.oneOrNone<Org.SecretKeyLookup>(sql.FIND_SECRET_KEY_BY_HASH, [keyHash]);
  }

  getAccessKey(id: number): Promise<Org.AccessKeyRow | null> {
    return this.db.oneOrNone<Org.AccessKeyRow>(sql.SELECT_ACCESS_KEY, [id]);
  }

  listAccessKeys(userId: number): Promise<Org.AccessKeyRow[]> {
    return this.db.any<Org.AccessKeyRow>(sql.LIST_ACCESS_KEYS, [userId]);
  }

  findAccessKeyByHash(keyHash: string): Promise<Org.AccessKeyRow | null> {
    return this.db.oneOrNone<Org.AccessKeyRow>(sql.FIND_ACCESS_KEY_BY_HASH, [keyHash]);
  }

  async findAccessKeyHolder(keyHash: string): Promise<Org.AccessKeyHolder | null> {
    // Named, so each connection parses it once and soon keeps a generic plan: planned afresh, this
    // statement (subqueries, a sort and json_agg) cost several times the user lookup an access token makes.
    const row = await this.db.oneOrNone<Record<string, unknown>>({ name: 'find-access-key-holder', text: sql.FIND_ACCESS_KEY_HOLDER, values: [keyHash] });
    if (!row) return null;
    const { keyId, keyLabel, keyScope, keyCreatedBy, keyCreatedAt, keyExpiresAt, keyLastUsedAt, keyRevokedAt, grants, ...user } = row;
    const key = { id: keyId, userId: user.id, label: keyLabel, scope: keyScope, createdBy: keyCreatedBy, createdAt: keyCreatedAt, expiresAt: keyExpiresAt };
    return {
      key: { ...key, lastUsedAt: keyLastUsedAt, revokedAt: keyRevokedAt } as Org.AccessKeyRow,
      user: user as unknown as Org.UserRow,
      grants: grants as Org.RoleGrant[],
    };
  }

  getRoleAssignment(id: number): Promise<Org.RoleAssignmentRow | null> {
    return this.db.oneOrNone<Org.RoleAssignmentRow>(sql.SELECT_ROLE_ASSIGNMENT, [id]);
  }

  listRoleAssignments(filter: Org.RoleAssignmentFilter): Promise<Org.RoleAssignmentRow[]> {
    return this.db.any<Org.RoleAssignmentRow>(sql.LIST_ROLE_ASSIGNMENTS, {
      subjectType: filter.subjectType ?? null,
      subjectId: filter.subjectId ?? null,
      scopeType: filter.scopeType ?? null,
      scopeId: filter.scopeId ?? null,
      withinGroupId: filter.withinGroupId ?? null,
    });
  }

  effectiveGrants(userId: number): Promise<Org.RoleGrant[]> {
    return this.db.any<Org.RoleGrant>(sql.EFFECTIVE_GRANTS, [userId]);
  }

  async countGroupOwners(groupIds: number[]): Promise<Org.GroupOwnerCount[]> {
    if (groupIds.length === 0) return [];
    return this.db.any<Org.GroupOwnerCount>(sql.COUNT_GROUP_OWNERS, [groupIds]);
  }

  groupsOwnedBy(userId: number): Promise<Org.GroupRow[]> {
    return this.db.any<Org.GroupRow>(sql.GROUPS_OWNED_BY, [userId]);
  }

  async listAudit(filter: Org.AuditFilter): Promise<Org.AuditRow[]> {
    const rows = await this.db.any<StoredAuditRow>(sql.LIST_AUDIT, {
      beforeId: filter.beforeId ?? null,
      actorUserId: filter.actorUserId ?? null,
      action: filter.action ?? null,
      targetType: filter.targetType ?? null,
      targetId: filter.targetId ?? null,
      from: filter.from ?? null,
      to: filter.to ?? null,
      limit: filter.limit,
    });
    return rows.map(toAudit);
  }

  lastLogId(settledProjects?: readonly number[], above?: number): Promise<number> {
    return LogEntries.lastLogId(this.db, settledProjects, above, this.open);
  }
}
