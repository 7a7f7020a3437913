/**
 * SQLite rows to the contract's row types. The statements already alias
 * every column to its row type's name (`row-columns.ts`) and NULL arrives as
 * null, so what is left is what SQLite cannot store: booleans (kept as 0/1)
 * and the audit metadata (kept as JSON text).
 */
import type {
  AccessKeyHolder,
  AccessKeyRow,
  AuditRow,
  GroupOwnerCount,
  GroupRow,
  ProjectRow,
  RefreshTokenRow,
  RoleAssignmentRow,
  RoleGrant,
  SecretKeyLookup,
  SecretKeyRow,
  TeamMemberRow,
  TeamRow,
  UserRow,
} from '../types-org.js';

/** A row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

/** A mapper to `T` that turns the named 0/1 columns back into booleans and keeps the rest as selected. */
export function withBooleans<T>(booleanColumns: readonly (keyof T & string)[] = []): (row: SqlRow) => T {
  return (row) => {
    const mapped: SqlRow = { ...row };
    for (const column of booleanColumns) mapped[column] = row[column] === 1 || row[column] === true;
    return mapped as T;
  };
}

export const toUser = withBooleans<UserRow>(['mustChangePassword', 'isActive', 'isPrimaryAdmin']);
export const toProject = withBooleans<ProjectRow>(['isBlocked']);
export const toProjectBlocked = withBooleans<{ id: number; isBlocked: boolean }>(['isBlocked']);
export const toSecretKeyLookup = withBooleans<SecretKeyLookup>(['projectBlocked']);
// Rows without booleans arrive as they are.
export const toRefreshToken = withBooleans<RefreshTokenRow>();
export const toGroup = withBooleans<GroupRow>();
export const toTeam = withBooleans<TeamRow>();
export const toTeamMember = withBooleans<TeamMemberRow>();
export const toSecretKey = withBooleans<SecretKeyRow>();
export const toAccessKey = withBooleans<AccessKeyRow>();
export const toRoleAssignment = withBooleans<RoleAssignmentRow>();
export const toRoleGrant = withBooleans<RoleGrant>();
export const toGroupOwnerCount = withBooleans<GroupOwnerCount>();

/** A key's row with its person's columns and their grants (JSON text). */
export function toAccessKeyHolder(row: SqlRow): AccessKeyHolder {
  const { keyId, keyLabel, keyScope, keyCreatedBy, keyCreatedAt, keyExpiresAt, keyLastUsedAt, keyRevokedAt, grants, ...user } = row;
  return {
    key: {
      id: keyId as number,
      userId: user.id as number,
      label: keyLabel as string,
      scope: keyScope as string,
      createdBy: keyCreatedBy as number,
      createdAt: keyCreatedAt as number,
      expiresAt: keyExpiresAt as number,
      lastUsedAt: keyLastUsedAt as number | null,
      revokedAt: keyRevokedAt as number | null,
    },
    user: toUser(user),
    grants: JSON.parse(grants as string) as RoleGrant[],
  };
}

export function toAudit(row: SqlRow): AuditRow {
  return { ...(row as Omit<AuditRow, 'metadata'>), metadata: JSON.parse(row.metadata as string) as Record<string, unknown> };
}

/** Maps a row a statement must have returned; a missing one is a bug, not a 404. */
export function one<T>(row: SqlRow | undefined, map: (r: SqlRow) => T, what: string): T {
  if (!row) throw new Error(`${what} not found`);
  return map(row);
}
