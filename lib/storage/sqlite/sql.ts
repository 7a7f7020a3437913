/**
 * Every statement of the SQLite backend, as named constants with bound
 * parameters only. Optional filters are written so the text never changes:
 * `beforeId` binds a sentinel above every id when absent, a missing
 * substring binds '' (instr(x, '') is 1), and `? IS NULL OR …` guards the
 * rest. Id sets arrive as one JSON array parameter read with json_each, so
 * 5,000 ids are still one statement with two bound values.
 */

import * as Columns from '../schema/row-columns.js';

// ---- users -----------------------------------------------------------------

export const COUNT_USERS = `SELECT COUNT(*) AS n FROM users`;
export const SELECT_USER_BY_ID = `SELECT ${Columns.USER} FROM users WHERE id = ?`;
export const SELECT_USER_BY_USERNAME = `SELECT ${Columns.USER} FROM users WHERE username = ?`;
/** Params: needle (lower-cased, '' for none), beforeId (sentinel for none), limit. */
export const LIST_USERS = `SELECT ${Columns.USER} FROM users
  WHERE instr(username_lower, ?) > 0 AND id < ?
  ORDER BY id DESC LIMIT ?`;
export const HAS_PRIMARY_ADMIN = `SELECT EXISTS (SELECT 1 FROM users WHERE is_primary_admin = 1) AS present`;
/** The SET list of an update taking a (present, value) parameter pair per column, in the order given. */
function setWhenPresent(columns: string[]): string {
  return columns.map((column) => `${column} = CASE WHEN ? THEN ? ELSE ${column} END`).join(',\n  ');
}

export const INSERT_USER = `INSERT INTO users
  (username, username_lower, display_name, email, password_hash, must_change_password, is_primary_admin, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  RETURNING ${Columns.USER}`;
/**
 * One statement for every change set: each column takes a (present, value)
 * pair, so absent keys keep their value and the text never varies.
 */
export const UPDATE_USER = `UPDATE users SET
  ${setWhenPresent(['display_name', 'email', 'email_verified_at', 'password_hash', 'must_change_password', 'is_active', 'deleted_at'])}
  WHERE id = ?
  RETURNING ${Columns.USER}`;
/** Params: JSON array of user ids. */
export const BUMP_TOKEN_VERSION = `UPDATE users SET token_version = token_version + 1
  WHERE id IN (SELECT value FROM json_each(?))`;

// ---- refresh tokens ----------------------------------------------------------

export const SELECT_REFRESH_TOKEN = `SELECT ${Columns.REFRESH_TOKEN} FROM refresh_tokens WHERE token_hash = ?`;
export const INSERT_REFRESH_TOKEN = `INSERT INTO refresh_tokens (user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)`;
/** Params: now, token hash, now. Atomic: only a live token is revoked and returned. */
export const REVOKE_REFRESH_TOKEN = `UPDATE refresh_tokens SET revoked_at = ?
  WHERE token_hash = ? AND revoked_at IS NULL AND expires_at > ?
  RETURNING ${Columns.REFRESH_TOKEN}`;
/** Params: now, user id, now. */
export const REVOKE_USER_REFRESH_TOKENS = `UPDATE refresh_tokens SET revoked_at = ?
  WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?`;

// ---- groups and teams --------------------------------------------------------

export const SELECT_GROUP = `SELECT ${Columns.GROUP} FROM org_groups WHERE id = ?`;
/** Params: needle, all (1/0), JSON group ids, beforeId, limit. */
export const LIST_GROUPS = `SELECT ${Columns.GROUP} FROM org_groups
  WHERE instr(name_lower, ?) > 0
    AND (? = 1 OR id IN (SELECT value FROM json_each(?)))
    AND id < ?
  ORDER BY id DESC LIMIT ?`;
export const INSERT_GROUP = `INSERT INTO org_groups (name, name_lower, created_at) VALUES (?, ?, ?) RETURNING ${Columns.GROUP}`;

export const SELECT_TEAM = `SELECT ${Columns.TEAM} FROM teams WHERE id = ?`;
export const LIST_TEAMS = `SELECT ${Columns.TEAM} FROM teams WHERE group_id = ? ORDER BY id DESC`;
export const INSERT_TEAM = `INSERT INTO teams (group_id, name, created_at) VALUES (?, ?, ?) RETURNING ${Columns.TEAM}`;
export const LIST_TEAM_MEMBERS = `SELECT m.user_id AS "userId", u.username FROM team_members m JOIN users u ON u.id = m.user_id
  WHERE m.team_id = ? ORDER BY m.user_id`;
export const IS_TEAM_MEMBER = `SELECT EXISTS (SELECT 1 FROM team_members WHERE team_id = ? AND user_id = ?) AS present`;
export const TEAM_IDS_OF_USER = `SELECT team_id FROM team_members WHERE user_id = ? ORDER BY team_id`;
/** Adding an existing member changes nothing: `changes` tells which. */
export const INSERT_TEAM_MEMBER = `INSERT INTO team_members (team_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING`;
export const DELETE_TEAM_MEMBER = `DELETE FROM team_members WHERE team_id = ? AND user_id = ?`;
export const DELETE_USER_TEAM_MEMBERSHIPS = `DELETE FROM team_members WHERE user_id = ?`;

// ---- projects ----------------------------------------------------------------

export const SELECT_PROJECT = `SELECT ${Columns.PROJECT} FROM projects WHERE id = ?`;
/**
 * Params: group id (null for any) twice, needle, all (1/0), JSON group ids,
 * JSON project ids, beforeId, limit. A visible group reveals its projects;
 * a project id reveals only itself.
 */
export const LIST_PROJECTS = `SELECT ${Columns.PROJECT} FROM projects
  WHERE (? IS NULL OR group_id = ?)
    AND instr(name_lower, ?) > 0
    AND (? = 1
         OR group_id IN (SELECT value FROM json_each(?))
         OR id IN (SELECT value FROM json_each(?)))
    AND id < ?
  ORDER BY id DESC LIMIT ?`;
export const PROJECTS_OF_GROUP = `SELECT id, is_blocked AS "isBlocked" FROM projects WHERE group_id = ? ORDER BY id`;
export const INSERT_PROJECT = `INSERT INTO projects (group_id, name, name_lower, retention_days, max_entries, max_bytes, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?)
  RETURNING ${Columns.PROJECT}`;
/** (present, value) pairs as in UPDATE_USER. */
export const UPDATE_PROJECT = `UPDATE projects SET
  ${setWhenPresent(['retention_days', 'max_entries', 'max_bytes', 'is_blocked'])}
  WHERE id = ?
  RETURNING ${Columns.PROJECT}`;

// ---- secret keys ---------------------------------------------------------------

export const SELECT_SECRET_KEY = `SELECT ${Columns.SECRET_KEY} FROM secret_keys WHERE id = ?`;
export const LIST_SECRET_KEYS = `SELECT ${Columns.SECRET_KEY} FROM secret_keys WHERE project_id = ? ORDER BY id DESC`;
export const FIND_SECRET_KEY_BY_HASH = `SELECT k.id AS "keyId", k.project_id AS "projectId", k.revoked_at AS "revokedAt",
    p.is_blocked AS "projectBlocked"
  FROM secret_keys k JOIN projects p ON p.id = k.project_id
  WHERE k.key_hash = ?`;
export const INSERT_SECRET_KEY = `INSERT INTO secret_keys (project_id, label, key_hash, created_at) VALUES (?, ?, ?, ?)
  RETURNING ${Columns.SECRET_KEY}`;
/** Params: now, id. The first revocation time is kept. */
export const REVOKE_SECRET_KEY = `UPDATE secret_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL
  RETURNING ${Columns.SECRET_KEY}`;

// ---- access keys -----------------------------------------------------------------

export const SELECT_ACCESS_KEY = `SELECT ${Columns.ACCESS_KEY} FROM access_keys WHERE id = ?`;
export const LIST_ACCESS_KEYS = `SELECT ${Columns.ACCESS_KEY} FROM access_keys WHERE user_id = ? ORDER BY id DESC`;
export const FIND_ACCESS_KEY_BY_HASH = `SELECT ${Columns.ACCESS_KEY} FROM access_keys WHERE key_hash = ?`;
/** Params: hash. The key, its person (user columns as `row-columns.ts` names them) and their grants as JSON text. */
export const FIND_ACCESS_KEY_HOLDER = `SELECT u.*, k.id AS "keyId", k.label AS "keyLabel", k.scope AS "keyScope", k.created_by AS "keyCreatedBy", k.created_at AS "keyCreatedAt",
    k.expires_at AS "keyExpiresAt", k.last_used_at AS "keyLastUsedAt", k.revoked_at AS "keyRevokedAt",
    (SELECT json_group_array(json_object('role', role, 'scope_type', scope_type, 'scope_id', scope_id)) FROM (${effectiveGrantsOf('k.user_id')})) AS "grants"
  FROM access_keys k JOIN (SELECT ${Columns.USER} FROM users) u ON u.id = k.user_id
  WHERE k.key_hash = ?`;
export const INSERT_ACCESS_KEY = `INSERT INTO access_keys (user_id, label, key_hash, scope, created_by, created_at, expires_at)
  VALUES (?, ?, ?, ?, ?, ?, ?)
  RETURNING ${Columns.ACCESS_KEY}`;
/** Params: now, id. The first revocation time is kept. */
export const REVOKE_ACCESS_KEY = `UPDATE access_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL
  RETURNING ${Columns.ACCESS_KEY}`;
/** Params: now, id, now. */
export const TOUCH_ACCESS_KEY = `UPDATE access_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`;

// ---- role assignments ------------------------------------------------------------

export const SELECT_ROLE_ASSIGNMENT = `SELECT ${Columns.ROLE_ASSIGNMENT} FROM role_assignments WHERE id = ?`;
/**
 * Params, each given twice (null = no filter): subject type, subject id,
 * scope type, scope id, within-group id (group scope = it, or project scope
 * = one of its projects).
 */
export const LIST_ROLE_ASSIGNMENTS = `SELECT ${Columns.ROLE_ASSIGNMENT} FROM role_assignments
  WHERE (? IS NULL OR subject_type = ?)
    AND (? IS NULL OR subject_id = ?)
    AND (? IS NULL OR scope_type = ?)
    AND (? IS NULL OR scope_id = ?)
    AND (? IS NULL
         OR (scope_type = 'group' AND scope_id = ?)
         OR (scope_type = 'project' AND scope_id IN (SELECT id FROM projects WHERE group_id = ?)))
  ORDER BY id DESC`;
/** Params: user id twice. Direct grants plus those of the user's teams. */
/** The effective grants of the user whose id `user` names (a parameter or a column). */
function effectiveGrantsOf(user: string): string {
  return `SELECT DISTINCT role, scope_type, scope_id FROM role_assignments
  WHERE (subject_type = 'user' AND subject_id = ${user})
     OR (subject_type = 'team' AND subject_id IN (SELECT team_id FROM team_members WHERE user_id = ${user}))
  ORDER BY role, scope_type, scope_id`;
}
export const EFFECTIVE_GRANTS = effectiveGrantsOf('?');
/**
 * Params: JSON group ids. UNION deduplicates (group, user) pairs, so a
 * person who owns directly and through a team counts once; deleted
 * users drop out in the LEFT JOIN; groups without owners count 0.
 */
export const COUNT_GROUP_OWNERS = `WITH wanted (id) AS (SELECT value FROM json_each(?)),
owners (group_id, user_id) AS (
  SELECT scope_id, subject_id FROM role_assignments
    WHERE subject_type = 'user' AND role = 'owner' AND scope_type = 'group' AND scope_id IN (SELECT id FROM wanted)
  UNION
  SELECT r.scope_id, m.user_id FROM role_assignments r JOIN team_members m ON m.team_id = r.subject_id
    WHERE r.subject_type = 'team' AND r.role = 'owner' AND r.scope_type = 'group' AND r.scope_id IN (SELECT id FROM wanted)
)
SELECT g.id AS "groupId", g.name, COUNT(u.id) AS owners
  FROM org_groups g
  LEFT JOIN owners o ON o.group_id = g.id
  LEFT JOIN users u ON u.id = o.user_id AND u.deleted_at IS NULL
  WHERE g.id IN (SELECT id FROM wanted)
  GROUP BY g.id, g.name
  ORDER BY g.id`;
/** Params: user id twice. */
export const GROUPS_OWNED_BY = `SELECT ${Columns.GROUP} FROM org_groups WHERE id IN (
  SELECT scope_id FROM role_assignments
    WHERE role = 'owner' AND scope_type = 'group'
      AND ((subject_type = 'user' AND subject_id = ?)
        OR (subject_type = 'team' AND subject_id IN (SELECT team_id FROM team_members WHERE user_id = ?))))
  ORDER BY id DESC`;
export const INSERT_ROLE_ASSIGNMENT = `INSERT INTO role_assignments (subject_type, subject_id, role, scope_type, scope_id, created_at)
  VALUES (?, ?, ?, ?, ?, ?)
  RETURNING ${Columns.ROLE_ASSIGNMENT}`;
export const DELETE_ROLE_ASSIGNMENT = `DELETE FROM role_assignments WHERE id = ?`;
export const DELETE_USER_ROLE_ASSIGNMENTS = `DELETE FROM role_assignments WHERE subject_type = 'user' AND subject_id = ?`;

// ---- audit -----------------------------------------------------------------------

export const INSERT_AUDIT = `INSERT INTO audit_log (actor_user_id, action, target_type, target_id, metadata, created_at)
  VALUES (?, ?, ?, ?, ?, ?)
  RETURNING ${Columns.AUDIT}`;
/**
 * The audit log grows without bound, so its list is assembled from these
 * fixed fragments (ANDed) to let SQLite pick the matching index instead of
 * scanning past `? IS NULL OR …` guards.
 */
export const LIST_AUDIT_BASE = `SELECT ${Columns.AUDIT} FROM audit_log`;
export const AUDIT_WHERE = {
  actorUserId: 'actor_user_id = ?',
  action: 'action = ?',
  targetType: 'target_type = ?',
  targetId: 'target_id = ?',
  from: 'created_at >= ?',
  to: 'created_at <= ?',
  beforeId: 'id < ?',
} as const;
export const LIST_AUDIT_TAIL = `ORDER BY id DESC LIMIT ?`;

// ---- schema ------------------------------------------------------------------------

export const SELECT_SCHEMA_VERSION = `SELECT version FROM schema_version`;
