/**
 * The column lists of the org tables as both backends select them: each
 * column is aliased to its row type's camelCase name, so rows arrive in the
 * shape `types-org.ts` declares. The SQL is the same in SQLite and
 * PostgreSQL (a double-quoted alias keeps its case in both).
 */

export const USER = `id, username, display_name AS "displayName", email, email_verified_at AS "emailVerifiedAt",
  password_hash AS "passwordHash", must_change_password AS "mustChangePassword", is_active AS "isActive",
  deleted_at AS "deletedAt", is_primary_admin AS "isPrimaryAdmin", token_version AS "tokenVersion",
  created_at AS "createdAt"`;
export const REFRESH_TOKEN = `id, user_id AS "userId", token_hash AS "tokenHash", created_at AS "createdAt",
  expires_at AS "expiresAt", revoked_at AS "revokedAt"`;
export const GROUP = `id, name, created_at AS "createdAt"`;
export const TEAM = `id, group_id AS "groupId", name, created_at AS "createdAt"`;
export const PROJECT = `id, group_id AS "groupId", name, retention_days AS "retentionDays", max_entries AS "maxEntries",
  max_bytes AS "maxBytes", is_blocked AS "isBlocked", created_at AS "createdAt", entry_count AS "entryCount",
  total_bytes AS "totalBytes"`;
export const SECRET_KEY = `id, project_id AS "projectId", label, created_at AS "createdAt", revoked_at AS "revokedAt"`;
export const ROLE_ASSIGNMENT = `id, subject_type AS "subjectType", subject_id AS "subjectId", role, scope_type AS "scopeType",
  scope_id AS "scopeId", created_at AS "createdAt"`;
/** metadata stays JSON text here; each backend's ops parse it. */
export const AUDIT = `id, actor_user_id AS "actorUserId", action, target_type AS "targetType", target_id AS "targetId",
  metadata, created_at AS "createdAt"`;
export const SAVED_SEARCH = `id, name, project_id AS "projectId", group_id AS "groupId", owner_group_id AS "ownerGroupId", query,
  author_user_id AS "authorUserId", created_at AS "createdAt", updated_at AS "updatedAt"`;
