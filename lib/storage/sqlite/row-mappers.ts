/**
 * SQLite rows (snake_case, booleans as 0/1, metadata as JSON text) to the
 * contract's row types.
 */
import type {
  AuditRow,
  GroupOwnerCount,
  GroupRow,
  ProjectRow,
  RefreshTokenRow,
  Role,
  RoleAssignmentRow,
  RoleGrant,
  ScopeType,
  SecretKeyLookup,
  SecretKeyRow,
  SubjectType,
  TeamMemberRow,
  TeamRow,
  UserRow,
} from '../types-org.js';

/** A row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

const num = (v: unknown): number => v as number;
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : (v as number));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : (v as string));
const bool = (v: unknown): boolean => v === 1 || v === true;

export function toUser(r: SqlRow): UserRow {
  return {
    id: num(r.id),
    username: r.username as string,
    displayName: strOrNull(r.display_name),
    email: strOrNull(r.email),
    emailVerifiedAt: numOrNull(r.email_verified_at),
    passwordHash: r.password_hash as string,
    mustChangePassword: bool(r.must_change_password),
    isActive: bool(r.is_active),
    deletedAt: numOrNull(r.deleted_at),
    isPrimaryAdmin: bool(r.is_primary_admin),
    tokenVersion: num(r.token_version),
    createdAt: num(r.created_at),
  };
}

export function toRefreshToken(r: SqlRow): RefreshTokenRow {
  return {
    id: num(r.id),
    userId: num(r.user_id),
    tokenHash: r.token_hash as string,
    createdAt: num(r.created_at),
    expiresAt: num(r.expires_at),
    revokedAt: numOrNull(r.revoked_at),
  };
}

export function toGroup(r: SqlRow): GroupRow {
  return { id: num(r.id), name: r.name as string, createdAt: num(r.created_at) };
}

export function toTeam(r: SqlRow): TeamRow {
  return { id: num(r.id), groupId: num(r.group_id), name: r.name as string, createdAt: num(r.created_at) };
}

export function toTeamMember(r: SqlRow): TeamMemberRow {
  return { userId: num(r.user_id), username: r.username as string };
}

export function toProject(r: SqlRow): ProjectRow {
  return {
    id: num(r.id),
    groupId: num(r.group_id),
    name: r.name as string,
    retentionDays: num(r.retention_days),
    maxEntries: numOrNull(r.max_entries),
    maxBytes: numOrNull(r.max_bytes),
    isBlocked: bool(r.is_blocked),
    createdAt: num(r.created_at),
    entryCount: num(r.entry_count),
    totalBytes: num(r.total_bytes),
  };
}

export function toSecretKey(r: SqlRow): SecretKeyRow {
  return {
    id: num(r.id),
    projectId: num(r.project_id),
    label: strOrNull(r.label),
    createdAt: num(r.created_at),
    revokedAt: numOrNull(r.revoked_at),
  };
}

export function toSecretKeyLookup(r: SqlRow): SecretKeyLookup {
  return {
    keyId: num(r.key_id),
    projectId: num(r.project_id),
    revokedAt: numOrNull(r.revoked_at),
    projectBlocked: bool(r.project_blocked),
  };
}

export function toRoleAssignment(r: SqlRow): RoleAssignmentRow {
  return {
    id: num(r.id),
    subjectType: r.subject_type as SubjectType,
    subjectId: num(r.subject_id),
    role: r.role as Role,
    scopeType: r.scope_type as ScopeType,
    scopeId: numOrNull(r.scope_id),
    createdAt: num(r.created_at),
  };
}

export function toRoleGrant(r: SqlRow): RoleGrant {
  return { role: r.role as Role, scope_type: r.scope_type as ScopeType, scope_id: numOrNull(r.scope_id) };
}

export function toGroupOwnerCount(r: SqlRow): GroupOwnerCount {
  return { groupId: num(r.group_id), name: r.name as string, owners: num(r.owners) };
}

export function toAudit(r: SqlRow): AuditRow {
  return {
    id: num(r.id),
    actorUserId: numOrNull(r.actor_user_id),
    action: r.action as string,
    targetType: r.target_type as string,
    targetId: numOrNull(r.target_id),
    metadata: JSON.parse(r.metadata as string) as Record<string, unknown>,
    createdAt: num(r.created_at),
  };
}

/** Maps a row a statement must have returned; a missing one is a bug, not a 404. */
export function one<T>(row: SqlRow | undefined, map: (r: SqlRow) => T, what: string): T {
  if (!row) throw new Error(`${what} not found`);
  return map(row);
}
