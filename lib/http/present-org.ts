/**
 * Response shapes of the organisation resources: rows in, JSON-ready objects
 * out, timestamps as ISO 8601 with milliseconds in UTC.
 * No hash ever leaves through here: key rows carry none, and the plaintext
 * secret is added only by the create response.
 */
import type { AuditRow, GroupRow, ProjectRow, RoleAssignmentRow, SecretKeyRow, TeamMemberRow, TeamRow } from '../storage/types-org.js';
import { isoOrNull, isoTimestamp } from '../core/timestamps.js';

export function presentGroup(row: GroupRow) {
  return { id: row.id, name: row.name, created_at: isoTimestamp(row.createdAt) };
}

export function presentTeam(row: TeamRow) {
  return { id: row.id, group_id: row.groupId, name: row.name, created_at: isoTimestamp(row.createdAt) };
}

export function presentTeamMember(row: TeamMemberRow) {
  return { user_id: row.userId, username: row.username };
}

/** A Project without usage counters (every endpoint but `GET /v1/projects/:id`). */
export function presentProject(row: ProjectRow) {
  return {
    id: row.id,
    group_id: row.groupId,
    name: row.name,
    retention_days: row.retentionDays,
    max_entries: row.maxEntries,
    max_bytes: row.maxBytes,
    is_blocked: row.isBlocked,
    created_at: isoTimestamp(row.createdAt),
  };
}

/** A Project with `entry_count` and `total_bytes` (`GET /v1/projects/:id` only). */
export function presentProjectWithUsage(row: ProjectRow) {
  return { ...presentProject(row), entry_count: row.entryCount, total_bytes: row.totalBytes };
}

/** Key metadata; `secret` is passed only by the create response, the one time it is shown. */
export function presentSecretKey(row: SecretKeyRow, secret?: string) {
  const key = {
    id: row.id,
    project_id: row.projectId,
    label: row.label,
    created_at: isoTimestamp(row.createdAt),
    revoked_at: isoOrNull(row.revokedAt),
  };
  return secret === undefined ? key : { ...key, secret };
}

export function presentRoleAssignment(row: RoleAssignmentRow) {
  return {
    id: row.id,
    subject_type: row.subjectType,
    subject_id: row.subjectId,
    role: row.role,
    scope_type: row.scopeType,
    scope_id: row.scopeId,
    created_at: isoTimestamp(row.createdAt),
  };
}

export function presentAuditEntry(row: AuditRow) {
  return {
    id: row.id,
    actor_user_id: row.actorUserId,
    action: row.action,
    target_type: row.targetType,
    target_id: row.targetId,
    metadata: row.metadata,
    created_at: isoTimestamp(row.createdAt),
  };
}
