/**
 * The storage contract: domain verbs over rows, implemented once per backend
 * (`sqlite/`, `postgres/`). Business rules (guards, audit, token_version
 * bumps) live above this line in `auth/`, `admin/` and `logs/`; a backend
 * only runs SQL. This module imports no driver.
 *
 * Conventions shared by both backends, so nothing observable differs:
 * - every timestamp is an integer count of milliseconds since the epoch
 *   (the HTTP layer formats it as ISO 8601 with three fraction digits);
 * - ids are JavaScript numbers (PostgreSQL `bigint` is parsed to number);
 * - list verbs return rows newest first (largest id first), strictly below
 *   `beforeId` when given, at most `limit` rows;
 * - case-insensitive substring filters compare against a `*_lower` column
 *   filled with JavaScript's `toLowerCase()`, so both backends fold case
 *   identically;
 * - unique violations surface as `StorageConflict` with a domain name.
 */
import type { StorageSignals } from './storage-signals.js';
import type * as Org from './types-org.js';
import type * as Sso from './types-sso.js';
import type * as Saved from './types-alerts.js';
import type { HistogramCounts, HistogramGrid, LogEntryOutcome, LogIngestRequest, LogRow, LogSelection } from './types-logs.js';
import type { AuditPurgeChunk, ExpiredLogScope, PurgedLogChunk } from './types-retention.js';
import type { SealDictionary } from './log-index/sealed-block.js';

/**
 * What a maintenance pass runs on: reads and transactions, bound on
 * PostgreSQL to the one connection that holds the maintenance lock.
 */
export type StorageSession = ReadOps & Pick<Storage, 'write'>;

/** Verbs that only read. Available outside and inside a transaction. */
export interface ReadOps {
  countUsers(): Promise<number>;
  getUserById(id: number): Promise<Org.UserRow | null>;
  getUserByUsername(username: string): Promise<Org.UserRow | null>;
  listUsers(filter: Org.UserFilter): Promise<Org.UserRow[]>;
  /** Whether some user (ever) has is_primary_admin. */
  hasPrimaryAdmin(): Promise<boolean>;

  getRefreshToken(tokenHash: string): Promise<Org.RefreshTokenRow | null>;

  getGroup(id: number): Promise<Org.GroupRow | null>;
  listGroups(filter: Org.GroupFilter): Promise<Org.GroupRow[]>;
  getTeam(id: number): Promise<Org.TeamRow | null>;
  listTeams(groupId: number): Promise<Org.TeamRow[]>;
  /** Members ordered by user id. */
  listTeamMembers(teamId: number): Promise<Org.TeamMemberRow[]>;
  isTeamMember(teamId: number, userId: number): Promise<boolean>;
  /** Team ids the user belongs to. */
  teamIdsOfUser(userId: number): Promise<number[]>;

  getProject(id: number): Promise<Org.ProjectRow | null>;
  listProjects(filter: Org.ProjectFilter): Promise<Org.ProjectRow[]>;
  /** Projects of one group, e.g. for group log queries. */
  projectIdsOfGroup(groupId: number): Promise<{ id: number; isBlocked: boolean }[]>;

  getSecretKey(id: number): Promise<Org.SecretKeyRow | null>;
  /** Keys of one project, newest first. */
  listSecretKeys(projectId: number): Promise<Org.SecretKeyRow[]>;
  findSecretKeyByHash(keyHash: string): Promise<Org.SecretKeyLookup | null>;

  getAccessKey(id: number): Promise<Org.AccessKeyRow | null>;
  /** The user's access keys, newest first, revoked and expired ones included. */
  listAccessKeys(userId: number): Promise<Org.AccessKeyRow[]>;
  findAccessKeyByHash(keyHash: string): Promise<Org.AccessKeyRow | null>;
  /** The key with its person and their effective grants, in one statement (every request made with a key reads this). */
  findAccessKeyHolder(keyHash: string): Promise<Org.AccessKeyHolder | null>;

  getRoleAssignment(id: number): Promise<Org.RoleAssignmentRow | null>;
  /** Unpaginated, newest first. */
  listRoleAssignments(filter: Org.RoleAssignmentFilter): Promise<Org.RoleAssignmentRow[]>;
  /** Direct grants of the user plus grants of the user's teams, deduplicated. */
  effectiveGrants(userId: number): Promise<Org.RoleGrant[]>;
  /**
   * Distinct owners of each group: direct `owner` grants at group scope
   * held by users not deleted, plus members of teams holding such a grant.
   * Groups with no owner are returned with owners = 0.
   */
  countGroupOwners(groupIds: number[]): Promise<Org.GroupOwnerCount[]>;
  /** Groups the user owns directly or through a team. */
  groupsOwnedBy(userId: number): Promise<Org.GroupRow[]>;

  listAudit(filter: Org.AuditFilter): Promise<Org.AuditRow[]>;

  /** The identity of this issuer's subject, or null. */
  findIdentity(issuer: string, subject: string): Promise<Sso.IdentityRow | null>;
  getIdentity(id: number): Promise<Sso.IdentityRow | null>;
  /** The user's identities, oldest first. */
  listIdentitiesOfUser(userId: number): Promise<Sso.IdentityRow[]>;
  /** The group-to-team mapping administrators set, by group then team. */
  listGroupTeams(): Promise<Sso.GroupTeamRow[]>;
  /** Teams whose membership of the user single sign-on made (and has not taken back). */
  syncedTeamIdsOfUser(userId: number): Promise<number[]>;
  /** Whether the account was made outside the API (first administrator, `create-admin`): it may use its password when password sign-in is off. */
  isBreakGlassAccount(userId: number): Promise<boolean>;
  getSavedSearch(id: number): Promise<Saved.SavedSearchRow | null>;
  /** Saved searches whose scope the visibility covers, newest first. */
  listSavedSearches(filter: Saved.SavedSearchFilter): Promise<Saved.SavedSearchRow[]>;
  /** A rule with its saved search's scope and query. */
  getAlertRule(id: number): Promise<Saved.AlertRuleRow | null>;
  /** Rules of saved searches whose scope the visibility covers, newest first. */
  listAlertRules(filter: Saved.AlertRuleFilter): Promise<Saved.AlertRuleRow[]>;
  /** Every enabled rule, by id (what the evaluation loads). */
  listEnabledAlertRules(): Promise<Saved.AlertRuleRow[]>;
  /** A threshold rule's matches per second from `fromSecond` on, oldest first. */
  alertCounts(ruleId: number, fromSecond: number): Promise<Saved.AlertCountBucket[]>;
  /** A rule's notifications, newest first. */
  listAlertNotifications(ruleId: number, page: Org.Page): Promise<Saved.AlertNotificationRow[]>;
  /** Ids of notifications waiting to be sent whose time has come and that nobody holds, oldest due first. */
  dueDeliveries(now: number, limit: number): Promise<number[]>;

  /**
   * Log entries matching the selection, newest first (largest id first),
   * strictly below `beforeId`, at most `limit`. Served from indexes: never
   * a scan of a whole project.
   */
  queryLogs(selection: LogSelection, page: Org.Page): Promise<LogRow[]>;
  /**
   * Entries matching the selection with id > `afterId`, oldest first, at
   * most `limit` (stream catch-up). On PostgreSQL, over several
   * projects, an entry with a smaller id may still commit later: only what
   * lies at or below a `lastLogId(projectIds)` answer is final.
   */
  logsAfter(selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]>;
  /**
   * Entries matching the selection (whose from/to are set) per bucket of
   * the grid and level, exactly (log-index/histogram-plan.ts); null when the
   * selection has text conditions and more entries than
   * HISTOGRAM_MAX_CHECKED would have to be checked one by one.
   */
  logHistogram(selection: LogSelection & { from: number; to: number }, grid: HistogramGrid): Promise<HistogramCounts | null>;
  /**
   * The largest log entry id stored so far, 0 when none. With
   * `settledProjects`, a position at or below which none of their entries
   * can commit any more (live streams): without `above`, the largest id
   * once the ingestion into those projects in flight has ended; with it,
   * the largest position settled now if that passes `above`, else one
   * reached by waiting only for the ingestion holding it at or below
   * `above`. SQLite commits one transaction at a time, so there the
   * arguments change nothing.
   */
  lastLogId(settledProjects?: readonly number[], above?: number): Promise<number>;
  /**
   * The largest id among the stored entries of these projects, 0 when none;
   * it does not wait for anything. Ids of one project commit in order on
   * both backends (on SQLite all ids do), so no entry of a single project
   * can commit at or below the answer later; over several projects on
   * PostgreSQL one with a smaller id still may (settle with `lastLogId`).
   */
  lastLogIdOf(projectIds: readonly number[]): Promise<number>;

  /**
   * Projects that hold entries received before `now` minus their
   * `retention_days`, by id, with that cutoff. One index probe per
   * project on (project_id, received_at).
   */
  expiredLogScopes(now: number): Promise<ExpiredLogScope[]>;
}

/** Verbs that write. Only inside `Storage.write`. */
/** What `ingestLogs` may tell its caller besides the outcomes. */
export interface IngestReport {
  /**
   * Per project of the requests, the largest id it held before this
   * transaction (0: none), read after the project's row was locked, so no
   * entry of the project can commit between that id and this
   * transaction's. Filled where ids may commit out of order (PostgreSQL);
   * on SQLite every id below the transaction's first has committed.
   */
  lastIdsBefore?: Map<number, number>;
}

export interface WriteOps extends ReadOps {
  insertUser(user: Org.NewUser): Promise<Org.UserRow>;
  /**
   * The user row as committed now, held until the transaction ends, so a
   * change decided on it cannot overwrite a concurrent one: PostgreSQL
   * locks the row (`FOR UPDATE`, waiting for a writer holding it); SQLite
   * already runs one write transaction at a time.
   */
  getUserForUpdate(id: number): Promise<Org.UserRow | null>;
  updateUser(id: number, changes: Org.UserChanges): Promise<Org.UserRow>;
  /** token_version += 1 for each user. */
  bumpTokenVersion(userIds: number[]): Promise<void>;

  insertRefreshToken(row: Omit<Org.RefreshTokenRow, 'id' | 'revokedAt'>): Promise<void>;
  /**
   * Revokes a token that is live (unrevoked, unexpired at `now`); returns it,
   * or null when it was not live. Atomic: of two concurrent calls, one wins.
   */
  revokeRefreshToken(tokenHash: string, now: number): Promise<Org.RefreshTokenRow | null>;
  /** Revokes every live refresh token of the user; returns how many. */
  revokeUserRefreshTokens(userId: number, now: number): Promise<number>;

  insertGroup(name: string, createdAt: number): Promise<Org.GroupRow>;
  insertTeam(groupId: number, name: string, createdAt: number): Promise<Org.TeamRow>;
  /** false when already a member (nothing changes). */
  addTeamMember(teamId: number, userId: number): Promise<boolean>;
  /** false when not a member. */
  removeTeamMember(teamId: number, userId: number): Promise<boolean>;
  /** Removes the user from every team. */
  removeUserFromAllTeams(userId: number): Promise<void>;

  insertProject(project: Org.NewProject): Promise<Org.ProjectRow>;
  updateProject(id: number, changes: Org.ProjectChanges): Promise<Org.ProjectRow>;

  insertSecretKey(row: { projectId: number; label: string | null; keyHash: string; createdAt: number }): Promise<Org.SecretKeyRow>;
  /**
   * Sets revoked_at on a key that is not revoked and returns it; null when it
   * was already revoked (or does not exist). Of two concurrent calls, one wins.
   */
  revokeSecretKey(id: number, now: number): Promise<Org.SecretKeyRow | null>;

  insertAccessKey(row: Org.NewAccessKey): Promise<Org.AccessKeyRow>;
  /** Sets revoked_at on a key not yet revoked and returns it; null when it already was (or does not exist). */
  revokeAccessKey(id: number, now: number): Promise<Org.AccessKeyRow | null>;
  /** Sets last_used_at (only ever forward). */
  touchAccessKey(id: number, now: number): Promise<void>;

  insertRoleAssignment(row: Org.NewRoleAssignment): Promise<Org.RoleAssignmentRow>;
  /** false when no such assignment existed (e.g. a concurrent revocation won). */
  deleteRoleAssignment(id: number): Promise<boolean>;
  /** Deletes the grants whose subject is this user. */
  deleteUserRoleAssignments(userId: number): Promise<void>;

  insertAudit(row: Org.NewAudit): Promise<Org.AuditRow>;

  /** StorageConflict('identity') when the issuer's subject is linked already. */
  insertIdentity(row: Sso.NewIdentity): Promise<Sso.IdentityRow>;
  /** Returns the deleted row, or null when there was none. */
  deleteIdentity(id: number): Promise<Sso.IdentityRow | null>;
  updateIdentitySeen(id: number, seen: Sso.IdentitySeen): Promise<void>;
  /** Stores a one-time sign-in code by its hash. */
  insertLoginCode(row: { codeHash: string; userId: number; createdAt: number; expiresAt: number }): Promise<void>;
  /**
   * Deletes the code and returns its user when it was live at `now` (single
   * use: of two concurrent claims one wins); also drops expired codes.
   */
  claimLoginCode(codeHash: string, now: number): Promise<number | null>;
  /** Replaces the whole group-to-team mapping administrators set. */
  replaceGroupTeams(rows: readonly Sso.GroupTeamRow[]): Promise<void>;
  markBreakGlassAccount(userId: number): Promise<void>;
  /** Records (true) or forgets (false) that single sign-on made this membership. */
  setSyncedMembership(teamId: number, userId: number, synced: boolean): Promise<void>;
  /** The owning group is filled in from the scope. */
  insertSavedSearch(search: Saved.NewSavedSearch): Promise<Saved.SavedSearchRow>;
  updateSavedSearch(id: number, changes: Saved.SavedSearchChanges): Promise<Saved.SavedSearchRow>;
  /** false when it did not exist (a concurrent delete won). */
  deleteSavedSearch(id: number): Promise<boolean>;

  insertAlertRule(rule: Saved.NewAlertRule): Promise<Saved.AlertRuleRow>;
  updateAlertRule(id: number, changes: Saved.AlertRuleChanges): Promise<Saved.AlertRuleRow>;
  /** false when it did not exist. Its counts and notifications go with it. */
  deleteAlertRule(id: number): Promise<boolean>;
  /**
   * The rule as committed now, held until the transaction ends, so one
   * evaluation at a time, in any process, decides its next notification:
   * PostgreSQL locks the row (`FOR UPDATE`); SQLite already runs one write
   * transaction at a time.
   */
  lockAlertRule(id: number): Promise<Saved.AlertRuleRow | null>;
  setAlertRuleStatus(id: number, status: Saved.AlertRuleStatus): Promise<void>;
  /** Adds matches to a threshold rule's per-second counts. */
  addAlertCounts(ruleId: number, buckets: readonly Saved.AlertCountBucket[]): Promise<void>;
  /** Drops a rule's counts before `beforeSecond` (all of them with null). */
  pruneAlertCounts(ruleId: number, beforeSecond: number | null): Promise<void>;
  /** Inserts the notification unless the rule already has one of its kind for that window start (then null). */
  insertAlertNotification(row: Saved.NewAlertNotification): Promise<Saved.AlertNotificationRow | null>;
  /**
   * Holds a pending notification whose time has come for one sender until
   * `leaseUntil`, and returns it with its rule; null when it is not
   * pending, not due, or held. Atomic: of two claims, in any process, one wins.
   */
  claimDelivery(id: number, now: number, leaseUntil: number): Promise<Saved.ClaimedDelivery | null>;
  /** Records an attempt's outcome and lets go of the notification. */
  finishDelivery(id: number, status: Saved.DeliveryStatus): Promise<void>;

  /**
   * Serialises owner-reducing changes per group until the transaction
   * ends, so two concurrent revocations cannot each see the other's owner
   * and leave the group with none. PostgreSQL locks the group rows (in id
   * order, so callers never deadlock); SQLite already serialises write
   * transactions, so there it does nothing. Used by the sole-owner guard.
   */
  lockGroups(groupIds: number[]): Promise<void>;

  /**
   * Stores the entries of several ingestion requests in this transaction,
   * quotas checked entry by entry in order (`max_entries` first, then
   * `max_bytes`; a refused entry consumes nothing), and adds the accepted
   * ones to the projects' `entry_count` and `total_bytes`. Exact under
   * concurrency: PostgreSQL locks the project rows (in id order) until the
   * transaction ends. Returns one outcome per entry, per request, in order.
   * A backend may also fill in `report`.
   */
  ingestLogs(requests: LogIngestRequest[], report?: IngestReport): Promise<LogEntryOutcome[][]>;

  /**
   * Retention: deletes up to `limit` of the project's entries received
   * before `receivedBefore`, oldest first, with their search terms, and
   * subtracts them from the project's `entry_count` and `total_bytes` in this
   * same transaction, so the counters always equal the stored rows.
   */
  purgeLogEntries(projectId: number, receivedBefore: number, limit: number): Promise<PurgedLogChunk>;
  /** Deletes up to `chunk.limit` audit rows of one retention class past its cutoff; returns how many. */
  purgeAuditRows(chunk: AuditPurgeChunk): Promise<number>;
  /** Deletes up to `limit` refresh tokens expired at `now` (revoked or not); returns how many. */
  purgeExpiredRefreshTokens(now: number, limit: number): Promise<number>;
  /**
   * Gives free space back to the operating system, at most `maxPages` pages
   * per call: SQLite runs `PRAGMA incremental_vacuum` (the file is created
   * with auto_vacuum = INCREMENTAL) and returns the free pages left;
   * PostgreSQL leaves it to autovacuum and returns 0.
   */
  reclaimFreePages(maxPages: number): Promise<number>;
}

export interface Storage extends ReadOps {
  readonly backend: 'file' | 'server';
  /**
   * Seals every entry waiting in the tail now, part-filled runs included,
   * and resolves once none is left (docs/storage-format.md). For tests and
   * tools: a backend that seals does so on its own in the background.
   * Absent on a backend that does not seal.
   */
  sealNow?(): Promise<void>;
  /**
   * Resolves once the project's tail has room for more entries: ingestion
   * waits here while sealing catches up (log-index/tail-room.ts). Absent,
   * or resolved at once, on a backend that does not seal in the background.
   */
  tailRoom?(projectId: number): Promise<void>;
  /**
   * The project's newest dictionary (cached), which the preparation thread
   * seals a large request with (log-index/presealed.ts); null when it has
   * none yet or its tail is not empty (sealer.ts `presealDictionary`).
   * Absent: nothing is sealed at ingestion.
   */
  ingestDictionary?(projectId: number): Promise<SealDictionary | null>;
  /**
   * A request large enough to be sealed at ingestion went to the tail:
   * the backend may empty the project's tail so the next one does not
   * (sealer.ts `presealMissed`). Never waits.
   */
  presealMissed?(projectId: number): void;
  /**
   * Messages between processes sharing this database (live streams):
   * PostgreSQL LISTEN/NOTIFY. Absent on the file backend (one process per file).
   */
  readonly signals?: StorageSignals;
  /**
   * Runs `fn` in one transaction and commits when it resolves, rolls back
   * when it throws. On SQLite write transactions are serialised on the one
   * writer connection; on PostgreSQL they run concurrently (row locks).
   */
  write<T>(fn: (tx: WriteOps) => Promise<T>): Promise<T>;
  /** The schema version this database is at. */
  schemaVersion(): Promise<number>;
  /**
   * Runs `fn` unless another process already runs a maintenance pass on
   * this database: PostgreSQL takes a session advisory lock
   * (`pg_try_advisory_lock`) on a connection of its own for the whole of
   * `fn` and hands `fn` a session bound to it; SQLite hands `fn` the
   * storage itself. `{ran: false}` when the lock is taken.
   */
  withMaintenanceLock<T>(fn: (session: StorageSession) => Promise<T>): Promise<{ ran: true; result: T } | { ran: false }>;
  /** The connections' state right now (for metrics): cheap, no I/O. */
  connectionStats(): ConnectionStats;
  close(): Promise<void>;
}

/**
 * How busy the database connections are. PostgreSQL: the pool's
 * connections open, those lent out, and queries waiting for one. SQLite:
 * the writer and readers, those running a statement or transaction, and
 * work queued behind a busy one (the writer's lock, a reader's queue).
 */
export interface ConnectionStats {
  open: number;
  inUse: number;
  waiting: number;
}

/** The schema version this build creates and understands. */
export const SCHEMA_VERSION = 8;
