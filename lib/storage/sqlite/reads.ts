/**
 * The contract's reading verbs in SQLite: one statement each (from `sql.ts`),
 * run through an executor that decides the connection. `SqliteReads`
 * serves both the Storage's plain reads (reader pool) and reads inside a
 * transaction (the writer); `SqliteWrites` (writes.ts) adds the writing
 * verbs.
 */
import * as SsoRows from './sso.js';
import type * as Org from '../types-org.js';
import type { ReadOps } from '../storage.js';
import type { SqlExecutor } from './connection.js';
import {
  toAccessKey,
  toAccessKeyHolder,
  toAudit,
  toGroup,
  toGroupOwnerCount,
  toProject,
  toProjectBlocked,
  toRefreshToken,
  toRoleAssignment,
  toRoleGrant,
  toSecretKey,
  toSecretKeyLookup,
  toTeam,
  toTeamMember,
  toUser,
} from './row-mappers.js';
import { jsonIds, orNull, visibilityParams } from './params.js';
import * as sql from './sql.js';
import * as LogEntries from './log-entries.js';
import * as Retention from './retention.js';
import * as Histogram from './histogram.js';
import * as SavedSearches from './saved-searches.js';
import * as AlertRules from './alert-rules.js';
import { type RowReadVerbs, rowReadVerbs } from '../row-verbs.js';
import { NO_UPPER_ID } from '../types-logs.js';
import { DictionaryCache } from '../log-index/sealed-reads.js';

const before = (beforeId: number | undefined): number => beforeId ?? NO_UPPER_ID;
/** The lower-cased needle; '' matches everything (instr(x, '') = 1). */
const needle = (s: string | undefined): string => (s ?? '').toLowerCase();

// The verbs that are one row function each are bound to this connection, bound in the constructor (row-verbs.ts).
export interface SqliteReads extends RowReadVerbs {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every verb RowReadVerbs names, typed by rowReadVerbs.
export class SqliteReads implements ReadOps {
  constructor(
    protected readonly db: SqlExecutor,
    /** The storage's dictionaries of sealed blocks (sealed-reads.ts), shared by its reads. */
    protected readonly dictionaries: DictionaryCache = new DictionaryCache(),
  ) {
    Object.assign(this, rowReadVerbs(db, this.dictionaries, { ...SavedSearches, ...AlertRules, ...SsoRows, ...LogEntries, ...Histogram, ...Retention }));
  }

  async countUsers(): Promise<number> {
    const row = await this.db.get(sql.COUNT_USERS);
    return Number(row?.n ?? 0);
  }

  async getUserById(id: number): Promise<Org.UserRow | null> {
    const row = await this.db.get(sql.SELECT_USER_BY_ID, [id]);
    return row ? toUser(row) : null;
  }

  async getUserByUsername(username: string): Promise<Org.UserRow | null> {
    const row = await this.db.get(sql.SELECT_USER_BY_USERNAME, [username]);
    return row ? toUser(row) : null;
  }

  async listUsers(filter: Org.UserFilter): Promise<Org.UserRow[]> {
    const rows = await this.db.all(sql.LIST_USERS, [needle(filter.usernameContains), before(filter.beforeId), filter.limit]);
    return rows.map(toUser);
  }

  async hasPrimaryAdmin(): Promise<boolean> {
    const row = await this.db.get(sql.HAS_PRIMARY_ADMIN);
    return row?.present === 1;
  }

  async getRefreshToken(tokenHash: string): Promise<Org.RefreshTokenRow | null> {
    const row = await this.db.get(sql.SELECT_REFRESH_TOKEN, [tokenHash]);
    return row ? toRefreshToken(row) : null;
  }

  async getGroup(id: number): Promise<Org.GroupRow | null> {
    const row = await this.db.get(sql.SELECT_GROUP, [id]);
    return row ? toGroup(row) : null;
  }

  async listGroups(filter: Org.GroupFilter): Promise<Org.GroupRow[]> {
    const v = visibilityParams(filter.visibility);
    const rows = await this.db.all(sql.LIST_GROUPS, [needle(filter.nameContains), v.all, v.groupIds, before(filter.beforeId), filter.limit]);
    return rows.map(toGroup);
  }

  async getTeam(id: number): Promise<Org.TeamRow | null> {
    const row = await this.db.get(sql.SELECT_TEAM, [id]);
    return row ? toTeam(row) : null;
  }

  async listTeams(groupId: number): Promise<Org.TeamRow[]> {
    return (await this.db.all(sql.LIST_TEAMS, [groupId])).map(toTeam);
  }

  async listTeamMembers(teamId: number): Promise<Org.TeamMemberRow[]> {
    return (await this.db.all(sql.LIST_TEAM_MEMBERS, [teamId])).map(toTeamMember);
  }

  async isTeamMember(teamId: number, userId: number): Promise<boolean> {
    const row = await this.db.get(sql.IS_TEAM_MEMBER, [teamId, userId]);
    return row?.present === 1;
  }

  async teamIdsOfUser(userId: number): Promise<number[]> {
    return (await this.db.all(sql.TEAM_IDS_OF_USER, [userId])).map((r) => r.team_id as number);
  }

  async getProject(id: number): Promise<Org.ProjectRow | null> {
    const row = await this.db.get(sql.SELECT_PROJECT, [id]);
    return row ? toProject(row) : null;
  }

  async listProjects(filter: Org.ProjectFilter): Promise<Org.ProjectRow[]> {
    const v = visibilityParams(filter.visibility);
    const groupId = orNull(filter.groupId);
    const rows = await this.db.all(sql.LIST_PROJECTS, [
      groupId,
      groupId,
      needle(filter.nameContains),
      v.all,
      v.groupIds,
      v.projectIds,
      before(filter.beforeId),
      filter.limit,
    ]);
    return rows.map(toProject);
  }

  async projectIdsOfGroup(groupId: number): Promise<{ id: number; isBlocked: boolean }[]> {
    const rows = await this.db.all(sql.PROJECTS_OF_GROUP, [groupId]);
    return rows.map(toProjectBlocked);
  }

  async getSecretKey(id: number): Promise<Org.SecretKeyRow | null> {
    const row = await this.db.get(sql.SELECT_SECRET_KEY, [id]);
    return row ? toSecretKey(row) : null;
  }

  async listSecretKeys(projectId: number): Promise<Org.SecretKeyRow[]> {
    return (await this.db.all(sql.LIST_SECRET_KEYS, [projectId])).map(toSecretKey);
  }

  async findSecretKeyByHash(keyHash: string): Promise<Org.SecretKeyLookup | null> {
    const row = await this.db.get(sql.FIND_SECRET_KEY_BY_HASH, [keyHash]);
    return row ? toSecretKeyLookup(row) : null;
  }

  async getAccessKey(id: number): Promise<Org.AccessKeyRow | null> {
    const row = await this.db.get(sql.SELECT_ACCESS_KEY, [id]);
    return row ? toAccessKey(row) : null;
  }

  async listAccessKeys(userId: number): Promise<Org.AccessKeyRow[]> {
    return (await this.db.all(sql.LIST_ACCESS_KEYS, [userId])).map(toAccessKey);
  }

  async findAccessKeyByHash(keyHash: string): Promise<Org.AccessKeyRow | null> {
    const row = await this.db.get(sql.FIND_ACCESS_KEY_BY_HASH, [keyHash]);
    return row ? toAccessKey(row) : null;
  }

  async findAccessKeyHolder(keyHash: string): Promise<Org.AccessKeyHolder | null> {
    const row = await this.db.get(sql.FIND_ACCESS_KEY_HOLDER, [keyHash]);
    return row ? toAccessKeyHolder(row) : null;
  }

  async getRoleAssignment(id: number): Promise<Org.RoleAssignmentRow | null> {
    const row = await this.db.get(sql.SELECT_ROLE_ASSIGNMENT, [id]);
    return row ? toRoleAssignment(row) : null;
  }

  async listRoleAssignments(filter: Org.RoleAssignmentFilter): Promise<Org.RoleAssignmentRow[]> {
    const subjectType = orNull(filter.subjectType);
    const subjectId = orNull(filter.subjectId);
    const scopeType = orNull(filter.scopeType);
    const scopeId = orNull(filter.scopeId);
    const within = orNull(filter.withinGroupId);
    const rows = await this.db.all(sql.LIST_ROLE_ASSIGNMENTS, [
      subjectType,
      subjectType,
      subjectId,
      subjectId,
      scopeType,
      scopeType,
      scopeId,
      scopeId,
      within,
      within,
      within,
    ]);
    return rows.map(toRoleAssignment);
  }

  async effectiveGrants(userId: number): Promise<Org.RoleGrant[]> {
    return (await this.db.all(sql.EFFECTIVE_GRANTS, [userId, userId])).map(toRoleGrant);
  }

  async countGroupOwners(groupIds: number[]): Promise<Org.GroupOwnerCount[]> {
    if (groupIds.length === 0) return [];
    return (await this.db.all(sql.COUNT_GROUP_OWNERS, [jsonIds(groupIds)])).map(toGroupOwnerCount);
  }

  async groupsOwnedBy(userId: number): Promise<Org.GroupRow[]> {
    return (await this.db.all(sql.GROUPS_OWNED_BY, [userId, userId])).map(toGroup);
  }

  async listAudit(filter: Org.AuditFilter): Promise<Org.AuditRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const key of Object.keys(sql.AUDIT_WHERE) as (keyof typeof sql.AUDIT_WHERE)[]) {
      const value = filter[key];
      if (value === undefined) continue;
      where.push(sql.AUDIT_WHERE[key]);
      params.push(value);
    }
    const statement = [sql.LIST_AUDIT_BASE, where.length ? `WHERE ${where.join(' AND ')}` : '', sql.LIST_AUDIT_TAIL].join(' ');
    return (await this.db.all(statement, [...params, filter.limit])).map(toAudit);
  }

  lastLogId(): Promise<number> {
    return LogEntries.lastLogId(this.db);
  }
}
