/**
 * The contract's verbs in SQLite: one statement each (from `sql.ts`), run
 * through an executor that decides the connection. `SqliteReadOps` serves
 * both the Storage's plain reads (reader pool) and reads inside a
 * transaction (the writer); `SqliteWriteOps` only ever runs on the writer,
 * inside `Storage.write`.
 */
import type {
  AuditFilter,
  AuditPurgeChunk,
  ExpiredLogScope,
  PurgedLogChunk,
  AuditRow,
  GroupFilter,
  GroupOwnerCount,
  GroupRow,
  LogEntryOutcome,
  LogIngestRequest,
  LogRow,
  LogSelection,
  NewAudit,
  NewProject,
  NewRoleAssignment,
  NewUser,
  Page,
  ProjectChanges,
  ProjectFilter,
  ProjectRow,
  ReadOps,
  RefreshTokenRow,
  RoleAssignmentFilter,
  RoleAssignmentRow,
  RoleGrant,
  SecretKeyLookup,
  SecretKeyRow,
  TeamMemberRow,
  TeamRow,
  UserChanges,
  UserFilter,
  UserRow,
  Visibility,
  WriteOps,
} from '../storage.js';
import type { SqlExecutor } from './connection.js';
import {
  toAudit,
  toGroup,
  toGroupOwnerCount,
  toProject,
  toRefreshToken,
  toRoleAssignment,
  toRoleGrant,
  toSecretKey,
  toSecretKeyLookup,
  toTeam,
  toTeamMember,
  toUser,
  type SqlRow,
} from './row-mappers.js';
import * as SQL from './sql.js';
import * as Logs from './logs.js';
import * as Retention from './retention.js';

/** Bound for `id < ?` when the caller gave no `beforeId`. */
const NO_UPPER_ID = Number.MAX_SAFE_INTEGER;

const flag = (b: boolean): number => (b ? 1 : 0);
const before = (beforeId: number | undefined): number => beforeId ?? NO_UPPER_ID;
/** The lower-cased needle; '' matches everything (instr(x, '') = 1). */
const needle = (s: string | undefined): string => (s ?? '').toLowerCase();
const jsonIds = (ids: readonly number[]): string => JSON.stringify(ids);
/** Binds a (present, value) pair for the CASE-based UPDATE statements. */
const change = (present: boolean, value: unknown): unknown[] => [flag(present), present ? value : null];
const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

function visibilityParams(v: Visibility): { all: number; groupIds: string; projectIds: string } {
  return v.all ? { all: 1, groupIds: '[]', projectIds: '[]' } : { all: 0, groupIds: jsonIds(v.groupIds), projectIds: jsonIds(v.projectIds) };
}

function one<T>(row: SqlRow | undefined, map: (r: SqlRow) => T, what: string): T {
  if (!row) throw new Error(`${what} not found`);
  return map(row);
}

export class SqliteReadOps implements ReadOps {
  constructor(protected readonly db: SqlExecutor) {}

  async countUsers(): Promise<number> {
    const row = await this.db.get(SQL.COUNT_USERS);
    return Number(row?.n ?? 0);
  }

  async getUserById(id: number): Promise<UserRow | null> {
    const row = await this.db.get(SQL.SELECT_USER_BY_ID, [id]);
    return row ? toUser(row) : null;
  }

  async getUserByUsername(username: string): Promise<UserRow | null> {
    const row = await this.db.get(SQL.SELECT_USER_BY_USERNAME, [username]);
    return row ? toUser(row) : null;
  }

  async listUsers(filter: UserFilter): Promise<UserRow[]> {
    const rows = await this.db.all(SQL.LIST_USERS, [needle(filter.usernameContains), before(filter.beforeId), filter.limit]);
    return rows.map(toUser);
  }

  async hasPrimaryAdmin(): Promise<boolean> {
    const row = await this.db.get(SQL.HAS_PRIMARY_ADMIN);
    return row?.present === 1;
  }

  async getRefreshToken(tokenHash: string): Promise<RefreshTokenRow | null> {
    const row = await this.db.get(SQL.SELECT_REFRESH_TOKEN, [tokenHash]);
    return row ? toRefreshToken(row) : null;
  }

  async getGroup(id: number): Promise<GroupRow | null> {
    const row = await this.db.get(SQL.SELECT_GROUP, [id]);
    return row ? toGroup(row) : null;
  }

  async listGroups(filter: GroupFilter): Promise<GroupRow[]> {
    const v = visibilityParams(filter.visibility);
    const rows = await this.db.all(SQL.LIST_GROUPS, [needle(filter.nameContains), v.all, v.groupIds, before(filter.beforeId), filter.limit]);
    return rows.map(toGroup);
  }

  async getTeam(id: number): Promise<TeamRow | null> {
    const row = await this.db.get(SQL.SELECT_TEAM, [id]);
    return row ? toTeam(row) : null;
  }

  async listTeams(groupId: number): Promise<TeamRow[]> {
    return (await this.db.all(SQL.LIST_TEAMS, [groupId])).map(toTeam);
  }

  async listTeamMembers(teamId: number): Promise<TeamMemberRow[]> {
    return (await this.db.all(SQL.LIST_TEAM_MEMBERS, [teamId])).map(toTeamMember);
  }

  async isTeamMember(teamId: number, userId: number): Promise<boolean> {
    const row = await this.db.get(SQL.IS_TEAM_MEMBER, [teamId, userId]);
    return row?.present === 1;
  }

  async teamIdsOfUser(userId: number): Promise<number[]> {
    return (await this.db.all(SQL.TEAM_IDS_OF_USER, [userId])).map((r) => r.team_id as number);
  }

  async getProject(id: number): Promise<ProjectRow | null> {
    const row = await this.db.get(SQL.SELECT_PROJECT, [id]);
    return row ? toProject(row) : null;
  }

  async listProjects(filter: ProjectFilter): Promise<ProjectRow[]> {
    const v = visibilityParams(filter.visibility);
    const groupId = orNull(filter.groupId);
    const rows = await this.db.all(SQL.LIST_PROJECTS, [
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
    const rows = await this.db.all(SQL.PROJECTS_OF_GROUP, [groupId]);
    return rows.map((r) => ({ id: r.id as number, isBlocked: r.is_blocked === 1 }));
  }

  async getSecretKey(id: number): Promise<SecretKeyRow | null> {
    const row = await this.db.get(SQL.SELECT_SECRET_KEY, [id]);
    return row ? toSecretKey(row) : null;
  }

  async listSecretKeys(projectId: number): Promise<SecretKeyRow[]> {
    return (await this.db.all(SQL.LIST_SECRET_KEYS, [projectId])).map(toSecretKey);
  }

  async findSecretKeyByHash(keyHash: string): Promise<SecretKeyLookup | null> {
    const row = await this.db.get(SQL.FIND_SECRET_KEY_BY_HASH, [keyHash]);
    return row ? toSecretKeyLookup(row) : null;
  }

  async getRoleAssignment(id: number): Promise<RoleAssignmentRow | null> {
    const row = await this.db.get(SQL.SELECT_ROLE_ASSIGNMENT, [id]);
    return row ? toRoleAssignment(row) : null;
  }

  async listRoleAssignments(filter: RoleAssignmentFilter): Promise<RoleAssignmentRow[]> {
    const subjectType = orNull(filter.subjectType);
    const subjectId = orNull(filter.subjectId);
    const scopeType = orNull(filter.scopeType);
    const scopeId = orNull(filter.scopeId);
    const within = orNull(filter.withinGroupId);
    const rows = await this.db.all(SQL.LIST_ROLE_ASSIGNMENTS, [
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

  async effectiveGrants(userId: number): Promise<RoleGrant[]> {
    return (await this.db.all(SQL.EFFECTIVE_GRANTS, [userId, userId])).map(toRoleGrant);
  }

  async countGroupOwners(groupIds: number[]): Promise<GroupOwnerCount[]> {
    if (groupIds.length === 0) return [];
    return (await this.db.all(SQL.COUNT_GROUP_OWNERS, [jsonIds(groupIds)])).map(toGroupOwnerCount);
  }

  async groupsOwnedBy(userId: number): Promise<GroupRow[]> {
    return (await this.db.all(SQL.GROUPS_OWNED_BY, [userId, userId])).map(toGroup);
  }

  async listAudit(filter: AuditFilter): Promise<AuditRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const key of Object.keys(SQL.AUDIT_WHERE) as (keyof typeof SQL.AUDIT_WHERE)[]) {
      const value = filter[key];
      if (value === undefined) continue;
      where.push(SQL.AUDIT_WHERE[key]);
      params.push(value);
    }
    const sql = [SQL.LIST_AUDIT_BASE, where.length ? `WHERE ${where.join(' AND ')}` : '', SQL.LIST_AUDIT_TAIL].join(' ');
    return (await this.db.all(sql, [...params, filter.limit])).map(toAudit);
  }

  queryLogs(selection: LogSelection, page: Page): Promise<LogRow[]> {
    return Logs.queryLogs(this.db, selection, page);
  }

  logsAfter(selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]> {
    return Logs.logsAfter(this.db, selection, afterId, limit);
  }

  lastLogId(): Promise<number> {
    return Logs.lastLogId(this.db);
  }

  expiredLogScopes(now: number): Promise<ExpiredLogScope[]> {
    return Retention.expiredLogScopes(this.db, now);
  }
}

export class SqliteWriteOps extends SqliteReadOps implements WriteOps {
  async insertUser(user: NewUser): Promise<UserRow> {
    const row = await this.db.get(SQL.INSERT_USER, [
      user.username,
      user.username.toLowerCase(),
      user.displayName,
      user.email,
      user.passwordHash,
      flag(user.mustChangePassword),
      flag(user.isPrimaryAdmin),
      user.createdAt,
    ]);
    return one(row, toUser, 'inserted user');
  }

  /** The writer transaction already excludes every other writer. */
  getUserForUpdate(id: number): Promise<UserRow | null> {
    return this.getUserById(id);
  }

  async updateUser(id: number, changes: UserChanges): Promise<UserRow> {
    const has = (k: keyof UserChanges) => changes[k] !== undefined;
    const row = await this.db.get(SQL.UPDATE_USER, [
      ...change(has('displayName'), changes.displayName),
      ...change(has('email'), changes.email),
      ...change(has('emailVerifiedAt'), changes.emailVerifiedAt),
      ...change(has('passwordHash'), changes.passwordHash),
      ...change(has('mustChangePassword'), changes.mustChangePassword === undefined ? null : flag(changes.mustChangePassword)),
      ...change(has('isActive'), changes.isActive === undefined ? null : flag(changes.isActive)),
      ...change(has('deletedAt'), changes.deletedAt),
      id,
    ]);
    return one(row, toUser, `user ${id}`);
  }

  async bumpTokenVersion(userIds: number[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.db.run(SQL.BUMP_TOKEN_VERSION, [jsonIds(userIds)]);
  }

  async insertRefreshToken(row: Omit<RefreshTokenRow, 'id' | 'revokedAt'>): Promise<void> {
    await this.db.run(SQL.INSERT_REFRESH_TOKEN, [row.userId, row.tokenHash, row.createdAt, row.expiresAt]);
  }

  async revokeRefreshToken(tokenHash: string, now: number): Promise<RefreshTokenRow | null> {
    const row = await this.db.get(SQL.REVOKE_REFRESH_TOKEN, [now, tokenHash, now]);
    return row ? toRefreshToken(row) : null;
  }

  async revokeUserRefreshTokens(userId: number, now: number): Promise<number> {
    return (await this.db.run(SQL.REVOKE_USER_REFRESH_TOKENS, [now, userId, now])).changes;
  }

  async insertGroup(name: string, createdAt: number): Promise<GroupRow> {
    return one(await this.db.get(SQL.INSERT_GROUP, [name, name.toLowerCase(), createdAt]), toGroup, 'inserted group');
  }

  async insertTeam(groupId: number, name: string, createdAt: number): Promise<TeamRow> {
    return one(await this.db.get(SQL.INSERT_TEAM, [groupId, name, createdAt]), toTeam, 'inserted team');
  }

  async addTeamMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.db.run(SQL.INSERT_TEAM_MEMBER, [teamId, userId])).changes === 1;
  }

  async removeTeamMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.db.run(SQL.DELETE_TEAM_MEMBER, [teamId, userId])).changes === 1;
  }

  async removeUserFromAllTeams(userId: number): Promise<void> {
    await this.db.run(SQL.DELETE_USER_TEAM_MEMBERSHIPS, [userId]);
  }

  async insertProject(project: NewProject): Promise<ProjectRow> {
    const row = await this.db.get(SQL.INSERT_PROJECT, [
      project.groupId,
      project.name,
      project.name.toLowerCase(),
      project.retentionDays,
      project.maxEntries,
      project.maxBytes,
      project.createdAt,
    ]);
    return one(row, toProject, 'inserted project');
  }

  async updateProject(id: number, changes: ProjectChanges): Promise<ProjectRow> {
    const has = (k: keyof ProjectChanges) => changes[k] !== undefined;
    const row = await this.db.get(SQL.UPDATE_PROJECT, [
      ...change(has('retentionDays'), changes.retentionDays),
      ...change(has('maxEntries'), changes.maxEntries),
      ...change(has('maxBytes'), changes.maxBytes),
      ...change(has('isBlocked'), changes.isBlocked === undefined ? null : flag(changes.isBlocked)),
      id,
    ]);
    return one(row, toProject, `project ${id}`);
  }

  async insertSecretKey(row: { projectId: number; label: string | null; keyHash: string; createdAt: number }): Promise<SecretKeyRow> {
    const inserted = await this.db.get(SQL.INSERT_SECRET_KEY, [row.projectId, row.label, row.keyHash, row.createdAt]);
    return one(inserted, toSecretKey, 'inserted secret key');
  }

  async revokeSecretKey(id: number, now: number): Promise<SecretKeyRow | null> {
    const row = await this.db.get(SQL.REVOKE_SECRET_KEY, [now, id]);
    return row ? toSecretKey(row) : null;
  }

  async insertRoleAssignment(row: NewRoleAssignment): Promise<RoleAssignmentRow> {
    const inserted = await this.db.get(SQL.INSERT_ROLE_ASSIGNMENT, [
      row.subjectType,
      row.subjectId,
      row.role,
      row.scopeType,
      row.scopeId,
      row.createdAt,
    ]);
    return one(inserted, toRoleAssignment, 'inserted role assignment');
  }

  async deleteRoleAssignment(id: number): Promise<boolean> {
    const result = await this.db.run(SQL.DELETE_ROLE_ASSIGNMENT, [id]);
    return (result.changes ?? 0) > 0;
  }

  async deleteUserRoleAssignments(userId: number): Promise<void> {
    await this.db.run(SQL.DELETE_USER_ROLE_ASSIGNMENTS, [userId]);
  }

  async insertAudit(row: NewAudit): Promise<AuditRow> {
    const inserted = await this.db.get(SQL.INSERT_AUDIT, [
      row.actorUserId,
      row.action,
      row.targetType,
      row.targetId,
      JSON.stringify(row.metadata),
      row.createdAt,
    ]);
    return one(inserted, toAudit, 'inserted audit row');
  }

  /** Write transactions are already serialised on the one writer connection. */
  async lockGroups(_groupIds: number[]): Promise<void> {}

  /** The writer lock held by the transaction makes the quota checks exact. */
  ingestLogs(requests: LogIngestRequest[]): Promise<LogEntryOutcome[][]> {
    return Logs.ingestLogs(this.db, requests);
  }

  purgeLogEntries(projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk> {
    return Retention.purgeLogEntries(this.db, projectId, receivedBefore, limit);
  }

  purgeAuditRows(chunk: AuditPurgeChunk): Promise<number> {
    return Retention.purgeAuditRows(this.db, chunk);
  }

  purgeExpiredRefreshTokens(now: number, limit: number): Promise<number> {
    return Retention.purgeExpiredRefreshTokens(this.db, now, limit);
  }

  reclaimFreePages(maxPages: number): Promise<number> {
    return Retention.reclaimFreePages(this.db, maxPages);
  }
}
