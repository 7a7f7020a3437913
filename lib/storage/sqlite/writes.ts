/**
 * The contract's writing verbs in SQLite, one statement each (from `sql.ts`).
 * They only ever run on the writer connection, inside `Storage.write`, which
 * serialises write transactions.
 */
import * as SsoRows from './sso.js';
import type * as Org from '../types-org.js';
import type { LogEntryOutcome, LogIngestRequest } from '../types-logs.js';
import type { WriteOps } from '../storage.js';
import { one, toAudit, toGroup, toProject, toAccessKey, toRefreshToken, toRoleAssignment, toSecretKey, toTeam, toUser } from './row-mappers.js';
import { change, flag, jsonIds } from './params.js';
import * as sql from './sql.js';
import * as LogEntries from './log-entries.js';
import * as Retention from './retention.js';
import * as SavedSearches from './saved-searches.js';
import * as AlertRules from './alert-rules.js';
import { type RowWriteVerbs, rowWriteVerbs } from '../row-verbs.js';
import type { SqlExecutor } from './connection.js';
import type { DictionaryCache } from '../log-index/sealed-reads.js';
import { SqliteReads } from './reads.js';

// The verbs that are one row function each are bound to this connection, bound in the constructor (row-verbs.ts).
export interface SqliteWrites extends RowWriteVerbs {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every verb RowWriteVerbs names, typed by rowWriteVerbs.
export class SqliteWrites extends SqliteReads implements WriteOps {
  constructor(db: SqlExecutor, dictionaries?: DictionaryCache) {
    super(db, dictionaries);
    // The writer transaction already excludes every other writer, so "locking" a rule is reading it.
    Object.assign(this, rowWriteVerbs(db, { ...SavedSearches, ...AlertRules, ...SsoRows, ...Retention, lockAlertRule: AlertRules.getAlertRule }));
  }

  async insertUser(user: Org.NewUser): Promise<Org.UserRow> {
    const row = await this.db.get(sql.INSERT_USER, [
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
  getUserForUpdate(id: number): Promise<Org.UserRow | null> {
    return this.getUserById(id);
  }

  async updateUser(id: number, changes: Org.UserChanges): Promise<Org.UserRow> {
    const has = (k: keyof Org.UserChanges) => changes[k] !== undefined;
    const row = await this.db.get(sql.UPDATE_USER, [
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
    await this.db.run(sql.BUMP_TOKEN_VERSION, [jsonIds(userIds)]);
  }

  async insertRefreshToken(row: Omit<Org.RefreshTokenRow, 'id' | 'revokedAt'>): Promise<void> {
    await this.db.run(sql.INSERT_REFRESH_TOKEN, [row.userId, row.tokenHash, row.createdAt, row.expiresAt]);
  }

  async revokeRefreshToken(tokenHash: string, now: number): Promise<Org.RefreshTokenRow | null> {
    const row = await this.db.get(sql.REVOKE_REFRESH_TOKEN, [now, tokenHash, now]);
    return row ? toRefreshToken(row) : null;
  }

  async revokeUserRefreshTokens(userId: number, now: number): Promise<number> {
    return (await this.db.run(sql.REVOKE_USER_REFRESH_TOKENS, [now, userId, now])).changes;
  }

  async insertGroup(name: string, createdAt: number): Promise<Org.GroupRow> {
    return one(await this.db.get(sql.INSERT_GROUP, [name, name.toLowerCase(), createdAt]), toGroup, 'inserted group');
  }

  async insertTeam(groupId: number, name: string, createdAt: number): Promise<Org.TeamRow> {
    return one(await this.db.get(sql.INSERT_TEAM, [groupId, name, createdAt]), toTeam, 'inserted team');
  }

  async addTeamMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.db.run(sql.INSERT_TEAM_MEMBER, [teamId, userId])).changes === 1;
  }

  async removeTeamMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.db.run(sql.DELETE_TEAM_MEMBER, [teamId, userId])).changes === 1;
  }

  async removeUserFromAllTeams(userId: number): Promise<void> {
    await this.db.run(sql.DELETE_USER_TEAM_MEMBERSHIPS, [userId]);
  }

  async insertProject(project: Org.NewProject): Promise<Org.ProjectRow> {
    const row = await this.db.get(sql.INSERT_PROJECT, [
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

  async updateProject(id: number, changes: Org.ProjectChanges): Promise<Org.ProjectRow> {
    const has = (k: keyof Org.ProjectChanges) => changes[k] !== undefined;
    const row = await this.db.get(sql.UPDATE_PROJECT, [
      ...change(has('retentionDays'), changes.retentionDays),
      ...change(has('maxEntries'), changes.maxEntries),
      ...change(has('maxBytes'), changes.maxBytes),
      ...change(has('isBlocked'), changes.isBlocked === undefined ? null : flag(changes.isBlocked)),
      id,
    ]);
    return one(row, toProject, `project ${id}`);
  }

  async insertSecretKey(row: { projectId: number; label: string | null; keyHash: string; createdAt: number }): Promise<Org.SecretKeyRow> {
    const inserted = await this.db.get(sql.INSERT_SECRET_KEY, [row.projectId, row.label, row.keyHash, row.createdAt]);
    return one(inserted, toSecretKey, 'inserted secret key');
  }

  async revokeSecretKey(id: number, now: number): Promise<Org.SecretKeyRow | null> {
    const row = await this.db.get(sql.REVOKE_SECRET_KEY, [now, id]);
    return row ? toSecretKey(row) : null;
  }

  async insertAccessKey(row: Org.NewAccessKey): Promise<Org.AccessKeyRow> {
    const inserted = await this.db.get(sql.INSERT_ACCESS_KEY, [row.userId, row.label, row.keyHash, row.scope, row.createdBy, row.createdAt, row.expiresAt]);
    return one(inserted, toAccessKey, 'inserted access key');
  }

  async revokeAccessKey(id: number, now: number): Promise<Org.AccessKeyRow | null> {
    const row = await this.db.get(sql.REVOKE_ACCESS_KEY, [now, id]);
    return row ? toAccessKey(row) : null;
  }

  async touchAccessKey(id: number, now: number): Promise<void> {
    await this.db.run(sql.TOUCH_ACCESS_KEY, [now, id, now]);
  }

  async insertRoleAssignment(row: Org.NewRoleAssignment): Promise<Org.RoleAssignmentRow> {
    const inserted = await this.db.get(sql.INSERT_ROLE_ASSIGNMENT, [row.subjectType, row.subjectId, row.role, row.scopeType, row.scopeId, row.createdAt]);
    return one(inserted, toRoleAssignment, 'inserted role assignment');
  }

  async deleteRoleAssignment(id: number): Promise<boolean> {
    const result = await this.db.run(sql.DELETE_ROLE_ASSIGNMENT, [id]);
    return (result.changes ?? 0) > 0;
  }

  async deleteUserRoleAssignments(userId: number): Promise<void> {
    await this.db.run(sql.DELETE_USER_ROLE_ASSIGNMENTS, [userId]);
  }

  async insertAudit(row: Org.NewAudit): Promise<Org.AuditRow> {
    const inserted = await this.db.get(sql.INSERT_AUDIT, [
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
  /** Set once this transaction ingested entries (the storage then wakes its sealer). */
  ingested = false;

  ingestLogs(requests: LogIngestRequest[]): Promise<LogEntryOutcome[][]> {
    this.ingested = true;
    return LogEntries.ingestLogs(this.db, requests);
  }

  reclaimFreePages(maxPages: number): Promise<number> {
    return Retention.reclaimFreePages(this.db, maxPages);
  }
}
