/**
 * The write verbs of the PostgreSQL backend, always bound to the transaction
 * `Storage.write` opened.
 *
 * Statements that may hit a unique constraint run inside a savepoint: in
 * PostgreSQL a failed statement poisons the whole transaction (every later
 * statement fails with 25P02), whereas in SQLite only that statement is
 * undone. With the savepoint a caught StorageConflict leaves the transaction
 * usable on both backends alike.
 */
import * as SsoRows from './sso.js';
import type * as Org from '../types-org.js';
import type { LogEntryOutcome, LogIngestRequest } from '../types-logs.js';
import type { IngestReport, WriteOps } from '../storage.js';
import { toStorageError } from './pg-errors.js';
import type { SqlExecutor } from './connection.js';
import { PostgresReads, toAudit, type StoredAuditRow } from './reads.js';
import * as sql from './sql.js';
import * as LogEntries from './log-entries.js';
import * as Retention from './retention.js';
import * as SavedSearches from './saved-searches.js';
import * as AlertRules from './alert-rules.js';
import { type RowWriteVerbs, rowWriteVerbs } from '../row-verbs.js';
import type { DictionaryCache } from '../log-index/sealed-reads.js';

/** Whether a change set carries a key (undefined counts as absent), and its value. */
function change<C extends object, K extends keyof C>(changes: C, key: K): [boolean, Exclude<C[K], undefined> | null] {
  const value = changes[key];
  return value === undefined ? [false, null] : [true, value as Exclude<C[K], undefined>];
}

/** Runs `statement` in a savepoint of `db`'s transaction, mapping unique violations to StorageConflict. */
async function mayConflict<T>(db: SqlExecutor, statement: (q: SqlExecutor) => Promise<T>): Promise<T> {
  try {
    return await db.tx((savepoint) => statement(savepoint));
  } catch (err) {
    throw toStorageError(err);
  }
}

// The verbs that are one row function each are bound to this connection, bound in the constructor (row-verbs.ts).
export interface PostgresWrites extends RowWriteVerbs {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every verb RowWriteVerbs names, typed by rowWriteVerbs.
export class PostgresWrites extends PostgresReads implements WriteOps {
  constructor(
    db: SqlExecutor,
    /** Told the backend pid once this transaction has marked its ingestion (see `lastLogId` in log-entries.ts). */
    private readonly marked?: (pid: number) => void,
    dictionaries?: DictionaryCache,
  ) {
    super(db, undefined, dictionaries);
    Object.assign(
      this,
      rowWriteVerbs(db, {
        ...SavedSearches,
        ...AlertRules,
        ...SsoRows,
        ...Retention,
        // A second identity for one subject is a StorageConflict, and leaves the transaction usable.
        insertIdentity: (q, row) => mayConflict(q, (savepoint) => SsoRows.insertIdentity(savepoint, row)),
      }),
    );
  }

  insertUser(user: Org.NewUser): Promise<Org.UserRow> {
    return mayConflict(this.db, (q) =>
      q.one<Org.UserRow>(sql.INSERT_USER, {
        username: user.username,
        usernameLower: user.username.toLowerCase(),
        displayName: user.displayName,
        email: user.email,
        passwordHash: user.passwordHash,
        mustChangePassword: user.mustChangePassword,
        isPrimaryAdmin: user.isPrimaryAdmin,
        createdAt: user.createdAt,
      }),
    );
  }

  getUserForUpdate(id: number): Promise<Org.UserRow | null> {
    return this.db.oneOrNone<Org.UserRow>(sql.SELECT_USER_BY_ID_FOR_UPDATE, [id]);
  }

  async updateUser(id: number, changes: Org.UserChanges): Promise<Org.UserRow> {
    const [setDisplayName, displayName] = change(changes, 'displayName');
    const [setEmail, email] = change(changes, 'email');
    const [setEmailVerifiedAt, emailVerifiedAt] = change(changes, 'emailVerifiedAt');
    const [setPasswordHash, passwordHash] = change(changes, 'passwordHash');
    const [setMustChangePassword, mustChangePassword] = change(changes, 'mustChangePassword');
    const [setIsActive, isActive] = change(changes, 'isActive');
    const [setDeletedAt, deletedAt] = change(changes, 'deletedAt');
    const anything = setDisplayName || setEmail || setEmailVerifiedAt || setPasswordHash || setMustChangePassword || setIsActive || setDeletedAt;
    const row = anything
      ? await mayConflict(this.db, (q) =>
          q.oneOrNone<Org.UserRow>(sql.UPDATE_USER, {
            id,
            setDisplayName,
            displayName,
            setEmail,
            email,
            setEmailVerifiedAt,
            emailVerifiedAt,
            setPasswordHash,
            passwordHash,
            setMustChangePassword,
            mustChangePassword,
            setIsActive,
            isActive,
            setDeletedAt,
            deletedAt,
          }),
        )
      : await this.getUserById(id);
    if (!row) throw new Error(`updateUser: no user ${id}`);
    return row;
  }

  async bumpTokenVersion(userIds: number[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.db.none(sql.BUMP_TOKEN_VERSION, [userIds]);
  }

  async insertRefreshToken(row: Omit<Org.RefreshTokenRow, 'id' | 'revokedAt'>): Promise<void> {
    await mayConflict(this.db, (q) => q.none(sql.INSERT_REFRESH_TOKEN, row));
  }

  revokeRefreshToken(tokenHash: string, now: number): Promise<Org.RefreshTokenRow | null> {
    return this.db.oneOrNone<Org.RefreshTokenRow>(sql.REVOKE_REFRESH_TOKEN, [tokenHash, now]);
  }

  revokeUserRefreshTokens(userId: number, now: number): Promise<number> {
    return this.db.result(sql.REVOKE_USER_REFRESH_TOKENS, [userId, now], (r) => r.rowCount);
  }

  insertGroup(name: string, createdAt: number): Promise<Org.GroupRow> {
    return this.db.one<Org.GroupRow>(sql.INSERT_GROUP, [name, name.toLowerCase(), createdAt]);
  }

  insertTeam(groupId: number, name: string, createdAt: number): Promise<Org.TeamRow> {
    return this.db.one<Org.TeamRow>(sql.INSERT_TEAM, [groupId, name, createdAt]);
  }

  async addTeamMember(teamId: number, userId: number): Promise<boolean> {
    // ON CONFLICT DO NOTHING: an existing membership is not an error here.
    return (await this.db.result(sql.INSERT_TEAM_MEMBER, [teamId, userId], (r) => r.rowCount)) === 1;
  }

  async removeTeamMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.db.result(sql.DELETE_TEAM_MEMBER, [teamId, userId], (r) => r.rowCount)) > 0;
  }

  async removeUserFromAllTeams(userId: number): Promise<void> {
    await this.db.none(sql.DELETE_USER_TEAM_MEMBERSHIPS, [userId]);
  }

  insertProject(project: Org.NewProject): Promise<Org.ProjectRow> {
    return this.db.one<Org.ProjectRow>(sql.INSERT_PROJECT, {
      groupId: project.groupId,
      name: project.name,
      nameLower: project.name.toLowerCase(),
      retentionDays: project.retentionDays,
      maxEntries: project.maxEntries,
      maxBytes: project.maxBytes,
      createdAt: project.createdAt,
    });
  }

  async updateProject(id: number, changes: Org.ProjectChanges): Promise<Org.ProjectRow> {
    const [setRetentionDays, retentionDays] = change(changes, 'retentionDays');
    const [setMaxEntries, maxEntries] = change(changes, 'maxEntries');
    const [setMaxBytes, maxBytes] = change(changes, 'maxBytes');
    const [setIsBlocked, isBlocked] = change(changes, 'isBlocked');
    const row =
      setRetentionDays || setMaxEntries || setMaxBytes || setIsBlocked
        ? await this.db.oneOrNone<Org.ProjectRow>(sql.UPDATE_PROJECT, {
            id,
            setRetentionDays,
            retentionDays,
            setMaxEntries,
            maxEntries,
            setMaxBytes,
            maxBytes,
            setIsBlocked,
            isBlocked,
          })
        : await this.getProject(id);
    if (!row) throw new Error(`updateProject: no project ${id}`);
    return row;
  }

  insertSecretKey(row: { projectId: number; label: string | null; keyHash: string; createdAt: number }): Promise<Org.SecretKeyRow> {
    return mayConflict(this.db, (q) => q.one<Org.SecretKeyRow>(sql.INSERT_SECRET_KEY, row));
  }

  revokeSecretKey(id: number, now: number): Promise<Org.SecretKeyRow | null> {
    return this.db.oneOrNone<Org.SecretKeyRow>(sql.REVOKE_SECRET_KEY, [id, now]);
  }

  insertAccessKey(row: Org.NewAccessKey): Promise<Org.AccessKeyRow> {
    return mayConflict(this.db, (q) => q.one<Org.AccessKeyRow>(sql.INSERT_ACCESS_KEY, row));
  }

  revokeAccessKey(id: number, now: number): Promise<Org.AccessKeyRow | null> {
    return this.db.oneOrNone<Org.AccessKeyRow>(sql.REVOKE_ACCESS_KEY, [id, now]);
  }

  async touchAccessKey(id: number, now: number): Promise<void> {
    await this.db.none(sql.TOUCH_ACCESS_KEY, [id, now]);
  }

  insertRoleAssignment(row: Org.NewRoleAssignment): Promise<Org.RoleAssignmentRow> {
    return this.db.one<Org.RoleAssignmentRow>(sql.INSERT_ROLE_ASSIGNMENT, row);
  }

  async deleteRoleAssignment(id: number): Promise<boolean> {
    const result = await this.db.result(sql.DELETE_ROLE_ASSIGNMENT, [id]);
    return result.rowCount > 0;
  }

  async deleteUserRoleAssignments(userId: number): Promise<void> {
    await this.db.none(sql.DELETE_USER_ROLE_ASSIGNMENTS, [userId]);
  }

  async insertAudit(row: Org.NewAudit): Promise<Org.AuditRow> {
    const stored = await this.db.one<StoredAuditRow>(sql.INSERT_AUDIT, {
      actorUserId: row.actorUserId,
      action: row.action,
      targetType: row.targetType,
      targetId: row.targetId,
      // Compact JSON text, so both backends store the same bytes.
      metadata: JSON.stringify(row.metadata),
      createdAt: row.createdAt,
    });
    return toAudit(stored);
  }

  async lockGroups(groupIds: number[]): Promise<void> {
    if (groupIds.length > 0) await this.db.any(sql.LOCK_GROUPS, [groupIds]);
  }

  /** Whether this transaction left a project's tail holding a full run to seal (the sealer is told once it commits). */
  tailFull = false;

  /** Locks the projects' rows (id order) for the rest of the transaction: quotas stay exact across processes. */
  /** The tail rows this transaction wrote, by project, with what each tail then held (the sealer is told once it commits). */
  readonly tailWrites: LogEntries.TailWrite[] = [];

  ingestLogs(requests: LogIngestRequest[], report?: IngestReport): Promise<LogEntryOutcome[][]> {
    return LogEntries.ingestLogs(this.db, requests, this.marked, report, {
      tailFull: () => (this.tailFull = true),
      tailWritten: (write) => this.tailWrites.push(write),
    });
  }

  /** Autovacuum reuses and returns the space of deleted rows; nothing to do per pass. */
  async reclaimFreePages(_maxPages: number): Promise<number> {
    return 0;
  }
}
