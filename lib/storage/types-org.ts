/**
 * Rows and filters of the organisation: users, refresh tokens, groups, teams,
 * projects, secret keys, role assignments and the audit log, as the storage
 * contract (`storage.ts`) reads and writes them.
 */

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

/**
 * A person's access key as stored: never the key, only its hash (which
 * stays in storage: `findAccessKeyByHash` looks it up, no row carries it).
 * `scope` is JSON text that auth/access-keys.ts writes and reads.
 */
export interface AccessKeyRow {
  id: number;
  userId: number;
  label: string;
  scope: string;
  createdBy: number;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** An access key found by its hash with its person and the person's effective grants, read in one statement. */
export interface AccessKeyHolder {
  key: AccessKeyRow;
  user: UserRow;
  grants: RoleGrant[];
}

export type NewAccessKey = Omit<AccessKeyRow, 'id' | 'lastUsedAt' | 'revokedAt'> & { keyHash: string };

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
 * What a caller may see in list queries: everything, or the groups and
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

/** The sole-owner guard's unit: a group and how many distinct owners it has. */
export interface GroupOwnerCount {
  groupId: number;
  name: string;
  owners: number;
}
