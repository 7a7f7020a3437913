/**
 * Every statement of the PostgreSQL backend, as named constants. Values are
 * bound through pg-promise's formatter (`$1`, `$(name)`): it escapes each
 * value for its type, and inlining the values lets the planner fold the
 * "filter not given" branches (`$(x) IS NULL OR …`) away. No identifier is
 * ever built from input.
 *
 * The org tables' columns (`row-columns.ts`) are aliased to the row types'
 * camelCase names; int8 is parsed to number by the pool's type overrides and
 * booleans are native, so rows need no mapping but the audit metadata.
 */

import * as Columns from '../schema/row-columns.js';

/** The connectivity check on open. */
export const PING = `SELECT 1 AS ok`;
export const SELECT_SCHEMA_VERSION = `SELECT version FROM schema_version`;

// Users
export const COUNT_USERS = `SELECT count(*) AS n FROM users`;
export const SELECT_USER_BY_ID = `SELECT ${Columns.USER} FROM users WHERE id = $1`;
export const SELECT_USER_BY_ID_FOR_UPDATE = `${SELECT_USER_BY_ID} FOR UPDATE`;
export const SELECT_USER_BY_USERNAME = `SELECT ${Columns.USER} FROM users WHERE username = $1`;
export const LIST_USERS = `SELECT ${Columns.USER} FROM users
  WHERE ($(beforeId)::bigint IS NULL OR id < $(beforeId))
    AND ($(needle)::text IS NULL OR strpos(username_lower, $(needle)) > 0)
  ORDER BY id DESC LIMIT $(limit)`;
export const HAS_PRIMARY_ADMIN = `SELECT EXISTS (SELECT 1 FROM users WHERE is_primary_admin) AS present`;
/**
 * The SET list of an update whose columns each change only when asked:
 * `column = CASE WHEN $(setParam) THEN $(param)::type ELSE column END`.
 */
function setWhenFlagged(columns: [column: string, param: string, type: string][]): string {
  return columns
    .map(([column, param, type]) => `${column} = CASE WHEN $(set${param[0]!.toUpperCase()}${param.slice(1)}) THEN $(${param})::${type} ELSE ${column} END`)
    .join(',\n    ');
}

export const INSERT_USER = `INSERT INTO users
  (username, username_lower, display_name, email, password_hash, must_change_password, is_primary_admin, created_at)
  VALUES ($(username), $(usernameLower), $(displayName), $(email), $(passwordHash), $(mustChangePassword),
    $(isPrimaryAdmin), $(createdAt))
  RETURNING ${Columns.USER}`;
/**
 * One statement for every change set: each `set*` flag says whether its
 * column takes the new value, so no SET list is assembled at run time.
 */
export const UPDATE_USER = `UPDATE users SET
    ${setWhenFlagged([
      ['display_name', 'displayName', 'text'],
      ['email', 'email', 'text'],
      ['email_verified_at', 'emailVerifiedAt', 'bigint'],
      ['password_hash', 'passwordHash', 'text'],
      ['must_change_password', 'mustChangePassword', 'boolean'],
      ['is_active', 'isActive', 'boolean'],
      ['deleted_at', 'deletedAt', 'bigint'],
    ])}
  WHERE id = $(id)
  RETURNING ${Columns.USER}`;
export const BUMP_TOKEN_VERSION = `UPDATE users SET token_version = token_version + 1 WHERE id = ANY($1::bigint[])`;

// Refresh tokens
export const SELECT_REFRESH_TOKEN = `SELECT ${Columns.REFRESH_TOKEN} FROM refresh_tokens WHERE token_hash = $1`;
export const INSERT_REFRESH_TOKEN = `INSERT INTO refresh_tokens (user_id, token_hash, created_at, expires_at)
  VALUES ($(userId), $(tokenHash), $(createdAt), $(expiresAt))`;
/** Atomic: of two concurrent revocations of one token, exactly one gets the row. */
export const REVOKE_REFRESH_TOKEN = `UPDATE refresh_tokens SET revoked_at = $2
  WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > $2
  RETURNING ${Columns.REFRESH_TOKEN}`;
export const REVOKE_USER_REFRESH_TOKENS = `UPDATE refresh_tokens SET revoked_at = $2
  WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2`;

// Groups and teams
export const SELECT_GROUP = `SELECT ${Columns.GROUP} FROM org_groups WHERE id = $1`;
/** Visibility inside the query: a global grant sees all, otherwise the listed group ids. */
export const LIST_GROUPS = `SELECT ${Columns.GROUP} FROM org_groups
  WHERE ($(all) OR id = ANY($(groupIds)::bigint[]))
    AND ($(beforeId)::bigint IS NULL OR id < $(beforeId))
    AND ($(needle)::text IS NULL OR strpos(name_lower, $(needle)) > 0)
  ORDER BY id DESC LIMIT $(limit)`;
export const INSERT_GROUP = `INSERT INTO org_groups (name, name_lower, created_at) VALUES ($1, $2, $3)
  RETURNING ${Columns.GROUP}`;
export const SELECT_TEAM = `SELECT ${Columns.TEAM} FROM teams WHERE id = $1`;
export const LIST_TEAMS = `SELECT ${Columns.TEAM} FROM teams WHERE group_id = $1 ORDER BY id DESC`;
export const INSERT_TEAM = `INSERT INTO teams (group_id, name, created_at) VALUES ($1, $2, $3) RETURNING ${Columns.TEAM}`;
export const LIST_TEAM_MEMBERS = `SELECT u.id AS "userId", u.username FROM team_members m
  JOIN users u ON u.id = m.user_id
  WHERE m.team_id = $1 ORDER BY u.id`;
export const IS_TEAM_MEMBER = `SELECT EXISTS (SELECT 1 FROM team_members WHERE team_id = $1 AND user_id = $2) AS present`;
export const TEAM_IDS_OF_USER = `SELECT team_id AS id FROM team_members WHERE user_id = $1 ORDER BY team_id`;
/** Already a member: nothing happens and no row is returned. */
export const INSERT_TEAM_MEMBER = `INSERT INTO team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
export const DELETE_TEAM_MEMBER = `DELETE FROM team_members WHERE team_id = $1 AND user_id = $2`;
export const DELETE_USER_TEAM_MEMBERSHIPS = `DELETE FROM team_members WHERE user_id = $1`;

// Projects
export const SELECT_PROJECT = `SELECT ${Columns.PROJECT} FROM projects WHERE id = $1`;
/** Visibility: projects of the listed groups plus the listed projects. */
export const LIST_PROJECTS = `SELECT ${Columns.PROJECT} FROM projects
  WHERE ($(all) OR group_id = ANY($(groupIds)::bigint[]) OR id = ANY($(projectIds)::bigint[]))
    AND ($(groupId)::bigint IS NULL OR group_id = $(groupId))
    AND ($(beforeId)::bigint IS NULL OR id < $(beforeId))
    AND ($(needle)::text IS NULL OR strpos(name_lower, $(needle)) > 0)
  ORDER BY id DESC LIMIT $(limit)`;
export const PROJECTS_OF_GROUP = `SELECT id, is_blocked AS "isBlocked" FROM projects WHERE group_id = $1 ORDER BY id`;
export const INSERT_PROJECT = `INSERT INTO projects (group_id, name, name_lower, retention_days, max_entries, max_bytes, created_at)
  VALUES ($(groupId), $(name), $(nameLower), $(retentionDays), $(maxEntries), $(maxBytes), $(createdAt))
  RETURNING ${Columns.PROJECT}`;
/** Same shape as UPDATE_USER: one statement, a flag per column. */
export const UPDATE_PROJECT = `UPDATE projects SET
    ${setWhenFlagged([
      ['retention_days', 'retentionDays', 'integer'],
      ['max_entries', 'maxEntries', 'bigint'],
      ['max_bytes', 'maxBytes', 'bigint'],
      ['is_blocked', 'isBlocked', 'boolean'],
    ])}
  WHERE id = $(id)
  RETURNING ${Columns.PROJECT}`;

// Secret keys
export const SELECT_SECRET_KEY = `SELECT ${Columns.SECRET_KEY} FROM secret_keys WHERE id = $1`;
export const LIST_SECRET_KEYS = `SELECT ${Columns.SECRET_KEY} FROM secret_keys WHERE project_id = $1 ORDER BY id DESC`;
export const FIND_SECRET_KEY_BY_HASH = `SELECT k.id AS "keyId", k.project_id AS "projectId", k.revoked_at AS "revokedAt",
    p.is_blocked AS "projectBlocked"
  FROM secret_keys k JOIN projects p ON p.id = k.project_id
  WHERE k.key_hash = $1`;
export const INSERT_SECRET_KEY = `INSERT INTO secret_keys (project_id, label, key_hash, created_at)
  VALUES ($(projectId), $(label), $(keyHash), $(createdAt))
  RETURNING ${Columns.SECRET_KEY}`;
/** Keeps the first revocation time. */
export const REVOKE_SECRET_KEY = `UPDATE secret_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL
  RETURNING ${Columns.SECRET_KEY}`;

// Access keys
export const SELECT_ACCESS_KEY = `SELECT ${Columns.ACCESS_KEY} FROM access_keys WHERE id = $1`;
export const LIST_ACCESS_KEYS = `SELECT ${Columns.ACCESS_KEY} FROM access_keys WHERE user_id = $1 ORDER BY id DESC`;
export const FIND_ACCESS_KEY_BY_HASH = `SELECT ${Columns.ACCESS_KEY} FROM access_keys WHERE key_hash = $1`;
/** The key, its person (user columns as `row-columns.ts` names them) and their grants as JSON. */
export const FIND_ACCESS_KEY_HOLDER = `SELECT u.*, k.id AS "keyId", k.label AS "keyLabel", k.scope AS "keyScope", k.created_by AS "keyCreatedBy", k.created_at AS "keyCreatedAt",
    k.expires_at AS "keyExpiresAt", k.last_used_at AS "keyLastUsedAt", k.revoked_at AS "keyRevokedAt",
    (SELECT coalesce(json_agg(g), '[]'::json) FROM (${effectiveGrantsOf('k.user_id')}) g) AS "grants"
  FROM access_keys k JOIN (SELECT ${Columns.USER} FROM users) u ON u.id = k.user_id
  WHERE k.key_hash = $1`;
export const INSERT_ACCESS_KEY = `INSERT INTO access_keys (user_id, label, key_hash, scope, created_by, created_at, expires_at)
  VALUES ($(userId), $(label), $(keyHash), $(scope), $(createdBy), $(createdAt), $(expiresAt))
  RETURNING ${Columns.ACCESS_KEY}`;
/** Keeps the first revocation time. */
export const REVOKE_ACCESS_KEY = `UPDATE access_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL
  RETURNING ${Columns.ACCESS_KEY}`;
/** Only ever forward: of two processes touching a key, the later time stays. */
export const TOUCH_ACCESS_KEY = `UPDATE access_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`;

// Role assignments
export const SELECT_ROLE_ASSIGNMENT = `SELECT ${Columns.ROLE_ASSIGNMENT} FROM role_assignments WHERE id = $1`;
export const LIST_ROLE_ASSIGNMENTS = `SELECT ${Columns.ROLE_ASSIGNMENT} FROM role_assignments
  WHERE ($(subjectType)::text IS NULL OR subject_type = $(subjectType))
    AND ($(subjectId)::bigint IS NULL OR subject_id = $(subjectId))
    AND ($(scopeType)::text IS NULL OR scope_type = $(scopeType))
    AND ($(scopeId)::bigint IS NULL OR scope_id = $(scopeId))
    AND ($(withinGroupId)::bigint IS NULL
      OR (scope_type = 'group' AND scope_id = $(withinGroupId))
      OR (scope_type = 'project' AND scope_id IN (SELECT id FROM projects WHERE group_id = $(withinGroupId))))
  ORDER BY id DESC`;
/**
 * Direct grants plus the grants of the user's teams, once each. COLLATE "C"
 * orders by code point, as SQLite's BINARY collation does, whatever the
 * database's locale.
 */
/** The effective grants of the user whose id `user` names (a parameter or a column). */
function effectiveGrantsOf(user: string): string {
  return `SELECT role, scope_type, scope_id FROM (
    SELECT DISTINCT role, scope_type, scope_id FROM role_assignments
    WHERE (subject_type = 'user' AND subject_id = ${user})
       OR (subject_type = 'team' AND subject_id IN (SELECT team_id FROM team_members WHERE user_id = ${user}))
  ) grants
  ORDER BY role COLLATE "C", scope_type COLLATE "C", scope_id NULLS FIRST`;
}
export const EFFECTIVE_GRANTS = effectiveGrantsOf('$1');
/** Owners of each group as (group, user) pairs, a person once: direct grants plus team members. */
const GROUP_OWNERS = `SELECT ra.scope_id AS group_id, ra.subject_id AS user_id FROM role_assignments ra
    WHERE ra.role = 'owner' AND ra.scope_type = 'group' AND ra.subject_type = 'user'
  UNION
  SELECT ra.scope_id, m.user_id FROM role_assignments ra JOIN team_members m ON m.team_id = ra.subject_id
    WHERE ra.role = 'owner' AND ra.scope_type = 'group' AND ra.subject_type = 'team'`;
/** Every requested group that exists, with 0 when it has no live owner. */
export const COUNT_GROUP_OWNERS = `SELECT g.id AS "groupId", g.name,
    (SELECT count(*) FROM (${GROUP_OWNERS}) o JOIN users u ON u.id = o.user_id
      WHERE o.group_id = g.id AND u.deleted_at IS NULL)::integer AS owners
  FROM org_groups g
  WHERE g.id = ANY($1::bigint[])
  ORDER BY g.id`;
export const GROUPS_OWNED_BY = `SELECT ${Columns.GROUP} FROM org_groups
  WHERE id IN (SELECT o.group_id FROM (${GROUP_OWNERS}) o WHERE o.user_id = $1)
  ORDER BY id DESC`;
export const INSERT_ROLE_ASSIGNMENT = `INSERT INTO role_assignments (subject_type, subject_id, role, scope_type, scope_id, created_at)
  VALUES ($(subjectType), $(subjectId), $(role), $(scopeType), $(scopeId), $(createdAt))
  RETURNING ${Columns.ROLE_ASSIGNMENT}`;
export const DELETE_ROLE_ASSIGNMENT = `DELETE FROM role_assignments WHERE id = $1`;
export const DELETE_USER_ROLE_ASSIGNMENTS = `DELETE FROM role_assignments WHERE subject_type = 'user' AND subject_id = $1`;

// Audit
export const LIST_AUDIT = `SELECT ${Columns.AUDIT} FROM audit_log
  WHERE ($(beforeId)::bigint IS NULL OR id < $(beforeId))
    AND ($(actorUserId)::bigint IS NULL OR actor_user_id = $(actorUserId))
    AND ($(action)::text IS NULL OR action = $(action))
    AND ($(targetType)::text IS NULL OR target_type = $(targetType))
    AND ($(targetId)::bigint IS NULL OR target_id = $(targetId))
    AND ($(from)::bigint IS NULL OR created_at >= $(from))
    AND ($(to)::bigint IS NULL OR created_at <= $(to))
  ORDER BY id DESC LIMIT $(limit)`;
export const INSERT_AUDIT = `INSERT INTO audit_log (actor_user_id, action, target_type, target_id, metadata, created_at)
  VALUES ($(actorUserId), $(action), $(targetType), $(targetId), $(metadata), $(createdAt))
  RETURNING ${Columns.AUDIT}`;

// Sole-owner guard: row locks on the groups whose owners a transaction may reduce (id order: no deadlock).
export const LOCK_GROUPS = `SELECT id FROM org_groups WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`;
