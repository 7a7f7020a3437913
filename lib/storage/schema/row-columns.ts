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
export const ACCESS_KEY = `id, user_id AS "userId", label, scope, created_by AS "createdBy", created_at AS "createdAt",
  expires_at AS "expiresAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;
export const ROLE_ASSIGNMENT = `id, subject_type AS "subjectType", subject_id AS "subjectId", role, scope_type AS "scopeType",
  scope_id AS "scopeId", created_at AS "createdAt"`;
/** metadata stays JSON text here; each backend's ops parse it. */
export const AUDIT = `id, actor_user_id AS "actorUserId", action, target_type AS "targetType", target_id AS "targetId",
  metadata, created_at AS "createdAt"`;
export const SAVED_SEARCH = `id, name, project_id AS "projectId", group_id AS "groupId", owner_group_id AS "ownerGroupId", query,
  author_user_id AS "authorUserId", created_at AS "createdAt", updated_at AS "updatedAt"`;
/** A rule joined with its saved search (`r`, `s`). */
export const ALERT_RULE = `r.id, r.saved_search_id AS "savedSearchId", r.name, r.kind, r.quiet_seconds AS "quietSeconds",
  r.window_seconds AS "windowSeconds", r.threshold, r.enabled, r.author_user_id AS "authorUserId",
  r.created_at AS "createdAt", r.updated_at AS "updatedAt", r.state, r.state_since AS "stateSince",
  r.quiet_until AS "quietUntil", r.pending_count AS "pendingCount", r.pending_first_id AS "pendingFirstId",
  r.paused_reason AS "pausedReason", s.project_id AS "projectId", s.group_id AS "groupId",
  s.owner_group_id AS "ownerGroupId", s.query, r.destination_type AS "destinationType",
  r.destination_label AS "destinationLabel", r.destination_sealed AS "destinationSealed"`;
/** The join `ALERT_RULE` selects from. */
export const ALERT_RULE_FROM = `FROM alert_rules r JOIN saved_searches s ON s.id = r.saved_search_id`;
export const ALERT_NOTIFICATION = `id, rule_id AS "ruleId", kind, window_start AS "windowStart", window_end AS "windowEnd",
  match_count AS "matchCount", entries, created_at AS "createdAt", delivery_state AS "deliveryState", attempts,
  next_attempt_at AS "nextAttemptAt", last_error AS "lastError", delivered_at AS "deliveredAt"`;
