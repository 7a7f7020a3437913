/**
 * Single sign-on's rows in PostgreSQL: identities, one-time sign-in codes,
 * the group-to-team mapping and the break-glass accounts. `PostgresReads`
 * and `PostgresWrites` delegate their single sign-on verbs here.
 */
import type * as Sso from '../types-sso.js';
import type { SqlExecutor } from './connection.js';

const IDENTITY_COLUMNS = `id, user_id AS "userId", issuer, subject, created_at AS "createdAt", last_login_at AS "lastLoginAt",
  groups_json AS "groupsJson", admin_grant_id AS "adminGrantId"`;

export const SELECT_IDENTITY = `SELECT ${IDENTITY_COLUMNS} FROM user_identities WHERE issuer = $1 AND subject = $2`;
export const SELECT_IDENTITY_BY_ID = `SELECT ${IDENTITY_COLUMNS} FROM user_identities WHERE id = $1`;
export const LIST_USER_IDENTITIES = `SELECT ${IDENTITY_COLUMNS} FROM user_identities WHERE user_id = $1 ORDER BY id`;
export const INSERT_IDENTITY = `INSERT INTO user_identities (user_id, issuer, subject, created_at) VALUES ($1, $2, $3, $4) RETURNING ${IDENTITY_COLUMNS}`;
export const DELETE_IDENTITY = `DELETE FROM user_identities WHERE id = $1 RETURNING ${IDENTITY_COLUMNS}`;
export const UPDATE_IDENTITY_SEEN = `UPDATE user_identities SET last_login_at = $1, groups_json = $2, admin_grant_id = $3 WHERE id = $4`;
export const INSERT_LOGIN_CODE = `INSERT INTO sso_login_codes (code_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`;
export const CLAIM_LOGIN_CODE = `DELETE FROM sso_login_codes WHERE code_hash = $1 AND expires_at > $2 RETURNING user_id AS "userId"`;
export const DELETE_EXPIRED_LOGIN_CODES = `DELETE FROM sso_login_codes WHERE expires_at <= $1`;
export const LIST_GROUP_TEAMS = `SELECT provider_group AS "providerGroup", team_id AS "teamId" FROM sso_group_teams ORDER BY provider_group, team_id`;
export const DELETE_GROUP_TEAMS = `DELETE FROM sso_group_teams`;
export const INSERT_GROUP_TEAM = `INSERT INTO sso_group_teams (provider_group, team_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
export const LIST_SYNCED_TEAMS = `SELECT team_id AS "teamId" FROM sso_team_members WHERE user_id = $1 ORDER BY team_id`;
export const INSERT_SYNCED_MEMBER = `INSERT INTO sso_team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
export const DELETE_SYNCED_MEMBER = `DELETE FROM sso_team_members WHERE team_id = $1 AND user_id = $2`;
export const IS_BREAK_GLASS = `SELECT EXISTS (SELECT 1 FROM break_glass_accounts WHERE user_id = $1) AS present`;
export const INSERT_BREAK_GLASS = `INSERT INTO break_glass_accounts (user_id) VALUES ($1) ON CONFLICT DO NOTHING`;

interface StoredIdentity extends Omit<Sso.IdentityRow, 'groups'> {
  groupsJson: string | null;
}

function toIdentity(row: StoredIdentity): Sso.IdentityRow {
  const { groupsJson, ...rest } = row;
  return { ...rest, groups: groupsJson === null ? null : (JSON.parse(groupsJson) as string[]) };
}

export async function findIdentity(db: SqlExecutor, issuer: string, subject: string): Promise<Sso.IdentityRow | null> {
  const row = await db.oneOrNone<StoredIdentity>(SELECT_IDENTITY, [issuer, subject]);
  return row ? toIdentity(row) : null;
}

export async function getIdentity(db: SqlExecutor, id: number): Promise<Sso.IdentityRow | null> {
  const row = await db.oneOrNone<StoredIdentity>(SELECT_IDENTITY_BY_ID, [id]);
  return row ? toIdentity(row) : null;
}

export async function listIdentitiesOfUser(db: SqlExecutor, userId: number): Promise<Sso.IdentityRow[]> {
  return (await db.any<StoredIdentity>(LIST_USER_IDENTITIES, [userId])).map(toIdentity);
}

export function listGroupTeams(db: SqlExecutor): Promise<Sso.GroupTeamRow[]> {
  return db.any<Sso.GroupTeamRow>(LIST_GROUP_TEAMS);
}

export async function isBreakGlassAccount(db: SqlExecutor, userId: number): Promise<boolean> {
  return (await db.one<{ present: boolean }>(IS_BREAK_GLASS, [userId])).present;
}

export async function insertIdentity(db: SqlExecutor, row: Sso.NewIdentity): Promise<Sso.IdentityRow> {
  return toIdentity(await db.one<StoredIdentity>(INSERT_IDENTITY, [row.userId, row.issuer, row.subject, row.createdAt]));
}

export async function deleteIdentity(db: SqlExecutor, id: number): Promise<Sso.IdentityRow | null> {
  const row = await db.oneOrNone<StoredIdentity>(DELETE_IDENTITY, [id]);
  return row ? toIdentity(row) : null;
}

export async function updateIdentitySeen(db: SqlExecutor, id: number, seen: Sso.IdentitySeen): Promise<void> {
  await db.none(UPDATE_IDENTITY_SEEN, [seen.lastLoginAt, JSON.stringify(seen.groups), seen.adminGrantId, id]);
}

export async function insertLoginCode(db: SqlExecutor, row: { codeHash: string; userId: number; createdAt: number; expiresAt: number }): Promise<void> {
  await db.none(INSERT_LOGIN_CODE, [row.codeHash, row.userId, row.createdAt, row.expiresAt]);
}

export async function claimLoginCode(db: SqlExecutor, codeHash: string, now: number): Promise<number | null> {
  const row = await db.oneOrNone<{ userId: number }>(CLAIM_LOGIN_CODE, [codeHash, now]);
  await db.none(DELETE_EXPIRED_LOGIN_CODES, [now]);
  return row ? row.userId : null;
}

export async function replaceGroupTeams(db: SqlExecutor, rows: readonly Sso.GroupTeamRow[]): Promise<void> {
  await db.none(DELETE_GROUP_TEAMS);
  for (const row of rows) await db.none(INSERT_GROUP_TEAM, [row.providerGroup, row.teamId]);
}

export async function markBreakGlassAccount(db: SqlExecutor, userId: number): Promise<void> {
  await db.none(INSERT_BREAK_GLASS, [userId]);
}

export async function syncedTeamIdsOfUser(db: SqlExecutor, userId: number): Promise<number[]> {
  return (await db.any<{ teamId: number }>(LIST_SYNCED_TEAMS, [userId])).map((row) => row.teamId);
}

export async function setSyncedMembership(db: SqlExecutor, teamId: number, userId: number, synced: boolean): Promise<void> {
  await db.none(synced ? INSERT_SYNCED_MEMBER : DELETE_SYNCED_MEMBER, [teamId, userId]);
}
