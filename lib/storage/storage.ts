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
import type { StorageSignals } from './signals.js';

export type Role = 'admin' | 'owner' | 'user';
export type ScopeType = 'global' | 'group' | 'project';
export type SubjectType = 'user' | 'team';

export interface UserRow {
  id: number;
  username: string;
  displayName: string | null;
  email: string | null;
  emailVerifiedAt: number | null;
  passwordHash: string;
  mustChangePassword: boolean;
  isActive: boolean;
  deletedAt: number | null;
  isPrimaryAdmin: boolean;
  tokenVersion: number;
  createdAt: number;
}

export interface NewUser {
  username: string;
  passwordHash: string;
  displayName: string | null;
  email: string | null;
  mustChangePassword: boolean;
  /**
   * `true`: this user becomes the primary admin; the database's partial
   * unique index makes a second primary fail with StorageConflict('primary_admin').
   */
  isPrimaryAdmin: boolean;
  createdAt: number;
}

/** Fields `updateUser` may change; absent keys are left as they are. */
export interface UserChanges {
  displayName?: string | null;
  email?: string | null;
  emailVerifiedAt?: number | null;
  passwordHash?: string;
  mustChangePassword?: boolean;
  isActive?: boolean;
  deletedAt?: number;
}

export interface RefreshTokenRow {
  id: number;
  userId: number;
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

export interface GroupRow {
  id: number;
  name: string;
  createdAt: number;
}

export interface TeamRow {
  id: number;
  groupId: number;
  name: string;
  createdAt: number;
}

export interface TeamMemberRow {
  userId: number;
  username: string;
}

export interface ProjectRow {
  id: number;
  groupId: number;
  name: string;
  retentionDays: number;
  maxEntries: number | null;
  maxBytes: number | null;
  isBlocked: boolean;
  createdAt: number;
  /** Usage counters, kept exact by ingestion and purge. */
  entryCount: number;
  totalBytes: number;
}

export interface NewProject {
  groupId: number;
  name: string;
  retentionDays: number;
  maxEntries: number | null;
  maxBytes: number | null;
  createdAt: number;
}

export interface ProjectChanges {
  retentionDays?: number;
  maxEntries?: number | null;
  maxBytes?: number | null;
  isBlocked?: boolean;
}

export interface SecretKeyRow {
  id: number;
  projectId: number;
  label: string | null;
  createdAt: number;
  revokedAt: number | null;
}

export interface RoleAssignmentRow {
  id: number;
  subjectType: SubjectType;
  subjectId: number;
  role: Role;
  scopeType: ScopeType;
  /** null exactly when scopeType is 'global'. */
  scopeId: number | null;
  createdAt: number;
}

export type NewRoleAssignment = Omit<RoleAssignmentRow, 'id'>;

/** One effective grant, as carried in the access token's `roles` claim. */
export interface RoleGrant {
  role: Role;
  scope_type: ScopeType;
  scope_id: number | null;
}

export interface AuditRow {
  id: number;
  actorUserId: number | null;
  action: string;
  targetType: string;
  targetId: number | null;
  metadata: Record<string, unknown>;
  createdAt: number;
}

export type NewAudit = Omit<AuditRow, 'id'>;

export interface Page {
  /** Only rows with id < beforeId. */
  beforeId?: number;
  limit: number;
}

/**
 * What a caller may see in list queries (D18): everything, or the groups and
 * projects named (group ids reveal their projects; project ids only themselves).
 */
export type Visibility = { all: true } | { all: false; groupIds: number[]; projectIds: number[] };

export interface UserFilter extends Page {
  /** Case-insensitive substring of the username. */
  usernameContains?: string;
}

export interface GroupFilter extends Page {
  nameContains?: string;
  visibility: Visibility;
}

export interface ProjectFilter extends Page {
  groupId?: number;
  nameContains?: string;
  visibility: Visibility;
}

export interface RoleAssignmentFilter {
  subjectType?: SubjectType;
  subjectId?: number;
  scopeType?: ScopeType;
  scopeId?: number;
  /** Only assignments scoped to this group or to one of its projects. */
  withinGroupId?: number;
}

export interface AuditFilter extends Page {
  actorUserId?: number;
  action?: string;
  targetType?: string;
  targetId?: number;
  from?: number;
  to?: number;
}

/** A secret key found by its hash, with what ingestion needs to know. */
export interface SecretKeyLookup {
  keyId: number;
  projectId: number;
  revokedAt: number | null;
  projectBlocked: boolean;
}

/**
 * A log entry as stored: the submitted object's compact JSON text (key order
 * kept) plus the server-assigned fields.
 */
export interface LogRow {
  id: number;
  projectId: number;
  receivedAt: number;
  body: string;
}

/**
 * An entry ready to encode: validated, serialised, sized and indexed by
 * `logs/` (so both backends index identically).
 */
export interface PreparedEntry {
  /** Compact JSON text of the submitted object. */
  body: string;
  /** UTF-8 byte length of `body` (D23). */
  bytes: number;
  /** 0 debug … 4 critical. */
  level: number;
  /** The entry's `timestamp`, as epoch milliseconds. */
  timestamp: number;
  /**
   * Search terms computed by logkeep (`search/search-terms.ts`), joined by
   * single spaces: words of `q` (D25), lower-case runs of Unicode letters and
   * digits, and exact-match terms (D24, D26), `§` plus base-32 digits. No
   * term contains a space or an ASCII character other than a–z and 0–9, so
   * no backend tokenizer splits one further. (One string rather than an
   * array: a 10 MiB batch holds about a million terms.)
   */
  terms: string;
}

/**
 * One ingestion request's valid entries, all for one project (D23), encoded
 * once where the batch is prepared (storage/encoded-entries.ts), so a write
 * transaction mostly hands bytes to the database instead of serialising
 * entry by entry while the writer waits.
 */
export interface LogIngestRequest {
  projectId: number;
  /** Each entry's size in bytes (D23), in submitted order: what quotas need. */
  sizes: number[];
  /** The entries in order, in runs of at most CHUNK_ENTRIES. */
  chunks: EncodedChunk[];
}

/**
 * Consecutive entries of one request as UTF-8 JSON. Each chunk owns its
 * whole ArrayBuffers, so a worker can transfer them.
 */
export interface EncodedChunk {
  count: number;
  /** `[[project_id, received_at, ts, level, bytes, body], …]`, one row per entry (the only place the request's arrival time is kept). */
  rows: Uint8Array;
  /**
   * The chunk's search-index blocks (log-blocks.ts), `[[first, last, terms], …]`:
   * `first`/`last` are offsets of entries in the chunk, `terms` the
   * entries' terms and the block's level terms, space-separated (the
   * project term is added when the block is written).
   */
  blocks: Uint8Array;
}

/** What became of one entry: stored under `id`, or refused by a quota (D23). */
export type LogEntryOutcome = { id: number } | { quota: 'max_entries' | 'max_bytes' };

/** One exact-match filter: `category`, `logger`, a correlation id or `context.<path>` (D24, D26). */
export interface ExactFilter {
  /** Object keys from the top of the entry, at least one, none empty. */
  path: string[];
  /** Compared with a string value, or with a number's or boolean's JSON text. */
  value: string;
}

/**
 * The filters of a log query or stream (D20, D24–D26), all ANDed. Built by
 * `logs/log-query.ts`.
 */
export interface LogFilter {
  /** Lowest level number included, or null for all. */
  minLevel: number | null;
  /** Inclusive bounds on the entry's `timestamp` (epoch ms), or null. */
  from: number | null;
  to: number | null;
  /** `q`'s whole words (normalised, D25): each must be among the entry's words. */
  words: string[];
  /** `q`'s words written with `*`: each must start some word of the entry. */
  prefixes: string[];
  /** Each must hold (D26). */
  exact: ExactFilter[];
}

/** A log filter over a set of projects (one, or a group's unblocked ones). */
export interface LogSelection extends LogFilter {
  /** Non-empty. */
  projectIds: number[];
}

/**
 * A project holding log entries past its retention (D28) at the time asked,
 * and the cutoff that applies to it.
 */
export interface ExpiredLogScope {
  projectId: number;
  /** Entries with `received_at` strictly below this are past retention. */
  receivedBefore: number;
}

/** What one retention chunk removed from one project. */
export interface PurgedLogChunk {
  entries: number;
  /** Sum of the removed entries' sizes (D23), taken off `total_bytes`. */
  bytes: number;
}

/** One chunk of audit rows to delete: those of one retention class (D15) past its cutoff. */
export interface AuditPurgeChunk {
  /** Every action of the class, spelled out (served by the (action, created_at) index). */
  actions: readonly string[];
  /** Only rows with `created_at` strictly below this (the cutoff is strict). */
  createdBefore: number;
  limit: number;
}

/**
 * What a maintenance pass runs on: reads and transactions, bound on
 * PostgreSQL to the one connection that holds the maintenance lock.
 */
export type StorageSession = ReadOps & Pick<Storage, 'write'>;

/** The sole-owner guard's unit: a group and how many distinct owners it has. */
export interface GroupOwnerCount {
  groupId: number;
  name: string;
  owners: number;
}

export class StorageConflict extends Error {
  /** 'username' | 'email' | 'primary_admin' | … : which uniqueness was violated. */
  readonly constraint: string;
  constructor(constraint: string) {
    super(`unique constraint violated: ${constraint}`);
    this.name = 'StorageConflict';
    this.constraint = constraint;
  }
}

/** The database is newer than this build understands (exit 78 in the bin). */
export class SchemaTooNewError extends Error {
  readonly databaseVersion: number;
  readonly supportedVersion: number;
  constructor(databaseVersion: number, supportedVersion: number) {
    super(`database schema version ${databaseVersion} is newer than this logkeep supports (${supportedVersion})`);
    this.name = 'SchemaTooNewError';
    this.databaseVersion = databaseVersion;
    this.supportedVersion = supportedVersion;
  }
}

/** The database could not be opened or reached (exit 78 in the bin). */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

/** Verbs that only read. Available outside and inside a transaction. */
export interface ReadOps {
  countUsers(): Promise<number>;
  getUserById(id: number): Promise<UserRow | null>;
  getUserByUsername(username: string): Promise<UserRow | null>;
  listUsers(filter: UserFilter): Promise<UserRow[]>;
  /** Whether some user (ever) has is_primary_admin. */
  hasPrimaryAdmin(): Promise<boolean>;

  getRefreshToken(tokenHash: string): Promise<RefreshTokenRow | null>;

  getGroup(id: number): Promise<GroupRow | null>;
  listGroups(filter: GroupFilter): Promise<GroupRow[]>;
  getTeam(id: number): Promise<TeamRow | null>;
  listTeams(groupId: number): Promise<TeamRow[]>;
  /** Members ordered by user id. */
  listTeamMembers(teamId: number): Promise<TeamMemberRow[]>;
  isTeamMember(teamId: number, userId: number): Promise<boolean>;
  /** Team ids the user belongs to. */
  teamIdsOfUser(userId: number): Promise<number[]>;

  getProject(id: number): Promise<ProjectRow | null>;
  listProjects(filter: ProjectFilter): Promise<ProjectRow[]>;
  /** Projects of one group, e.g. for group log queries. */
  projectIdsOfGroup(groupId: number): Promise<{ id: number; isBlocked: boolean }[]>;

  getSecretKey(id: number): Promise<SecretKeyRow | null>;
  /** Keys of one project, newest first. */
  listSecretKeys(projectId: number): Promise<SecretKeyRow[]>;
  findSecretKeyByHash(keyHash: string): Promise<SecretKeyLookup | null>;

  getRoleAssignment(id: number): Promise<RoleAssignmentRow | null>;
  /** Unpaginated, newest first. */
  listRoleAssignments(filter: RoleAssignmentFilter): Promise<RoleAssignmentRow[]>;
  /** Direct grants of the user plus grants of the user's teams, deduplicated (D7). */
  effectiveGrants(userId: number): Promise<RoleGrant[]>;
  /**
   * Distinct owners of each group (D17): direct `owner` grants at group scope
   * held by users not deleted, plus members of teams holding such a grant.
   * Groups with no owner are returned with owners = 0.
   */
  countGroupOwners(groupIds: number[]): Promise<GroupOwnerCount[]>;
  /** Groups the user owns directly or through a team. */
  groupsOwnedBy(userId: number): Promise<GroupRow[]>;

  listAudit(filter: AuditFilter): Promise<AuditRow[]>;

  /**
   * Log entries matching the selection, newest first (largest id first),
   * strictly below `beforeId`, at most `limit`. Served from indexes: never
   * a scan of a whole project.
   */
  queryLogs(selection: LogSelection, page: Page): Promise<LogRow[]>;
  /**
   * Entries matching the selection with id > `afterId`, oldest first, at
   * most `limit` (stream catch-up, D29). On PostgreSQL, over several
   * projects, an entry with a smaller id may still commit later: only what
   * lies at or below a `lastLogId(projectIds)` answer is final.
   */
  logsAfter(selection: LogSelection, afterId: number, limit: number): Promise<LogRow[]>;
  /**
   * The largest log entry id stored so far, 0 when none. With
   * `settledProjects`, first waits until no ingestion into those projects is
   * in flight, so none of their entries can commit later at or below the
   * answer (live streams, D29). SQLite commits one transaction at a time, so
   * there the argument changes nothing.
   */
  lastLogId(settledProjects?: readonly number[]): Promise<number>;

  /**
   * Projects that hold entries received before `now` minus their
   * `retention_days` (D28), by id, with that cutoff. One index probe per
   * project on (project_id, received_at).
   */
  expiredLogScopes(now: number): Promise<ExpiredLogScope[]>;
}

/** Verbs that write. Only inside `Storage.write`. */
export interface WriteOps extends ReadOps {
  insertUser(user: NewUser): Promise<UserRow>;
  /**
   * The user row as committed now, held until the transaction ends, so a
   * change decided on it cannot overwrite a concurrent one: PostgreSQL
   * locks the row (`FOR UPDATE`, waiting for a writer holding it); SQLite
   * already runs one write transaction at a time.
   */
  getUserForUpdate(id: number): Promise<UserRow | null>;
  updateUser(id: number, changes: UserChanges): Promise<UserRow>;
  /** token_version += 1 for each user. */
  bumpTokenVersion(userIds: number[]): Promise<void>;

  insertRefreshToken(row: Omit<RefreshTokenRow, 'id' | 'revokedAt'>): Promise<void>;
  /**
   * Revokes a token that is live (unrevoked, unexpired at `now`); returns it,
   * or null when it was not live. Atomic: of two concurrent calls, one wins.
   */
  revokeRefreshToken(tokenHash: string, now: number): Promise<RefreshTokenRow | null>;
  /** Revokes every live refresh token of the user; returns how many. */
  revokeUserRefreshTokens(userId: number, now: number): Promise<number>;

  insertGroup(name: string, createdAt: number): Promise<GroupRow>;
  insertTeam(groupId: number, name: string, createdAt: number): Promise<TeamRow>;
  /** false when already a member (nothing changes). */
  addTeamMember(teamId: number, userId: number): Promise<boolean>;
  /** false when not a member. */
  removeTeamMember(teamId: number, userId: number): Promise<boolean>;
  /** Removes the user from every team. */
  removeUserFromAllTeams(userId: number): Promise<void>;

  insertProject(project: NewProject): Promise<ProjectRow>;
  updateProject(id: number, changes: ProjectChanges): Promise<ProjectRow>;

  insertSecretKey(row: { projectId: number; label: string | null; keyHash: string; createdAt: number }): Promise<SecretKeyRow>;
  /**
   * Sets revoked_at on a key that is not revoked and returns it; null when it
   * was already revoked (or does not exist). Of two concurrent calls, one wins.
   */
  revokeSecretKey(id: number, now: number): Promise<SecretKeyRow | null>;

  insertRoleAssignment(row: NewRoleAssignment): Promise<RoleAssignmentRow>;
  /** false when no such assignment existed (e.g. a concurrent revocation won). */
  deleteRoleAssignment(id: number): Promise<boolean>;
  /** Deletes the grants whose subject is this user. */
  deleteUserRoleAssignments(userId: number): Promise<void>;

  insertAudit(row: NewAudit): Promise<AuditRow>;

  /**
   * Serialises owner-reducing changes per group (D17) until the transaction
   * ends, so two concurrent revocations cannot each see the other's owner
   * and leave the group with none. PostgreSQL locks the group rows (in id
   * order, so callers never deadlock); SQLite already serialises write
   * transactions, so there it does nothing. Used by the sole-owner guard.
   */
  lockGroups(groupIds: number[]): Promise<void>;

  /**
   * Stores the entries of several ingestion requests in this transaction,
   * quotas checked entry by entry in order (D23: `max_entries` first, then
   * `max_bytes`; a refused entry consumes nothing), and adds the accepted
   * ones to the projects' `entry_count` and `total_bytes`. Exact under
   * concurrency: PostgreSQL locks the project rows (in id order) until the
   * transaction ends. Returns one outcome per entry, per request, in order.
   */
  ingestLogs(requests: LogIngestRequest[]): Promise<LogEntryOutcome[][]>;

  /**
   * Retention (D28): deletes up to `limit` of the project's entries received
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
   * Messages between processes sharing this database (D31; live streams):
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
  close(): Promise<void>;
}

/** The schema version this build creates and understands. */
export const SCHEMA_VERSION = 1;
