/**
 * Single sign-on's rows in SQLite: identities, one-time sign-in codes, the
 * group-to-team mapping and the break-glass accounts. `SqliteReads` and
 * `SqliteWrites` delegate their single sign-on verbs here.
 */
import type * as Sso from '../types-sso.js';
import type { SqlExecutor } from './connection.js';
import type { SqlRow } from './row-mappers.js';

const IDENTITY_COLUMNS = `id, user_id AS "userId", issuer, subject, created_at AS "createdAt", last_login_at AS "lastLoginAt",
  groups_json AS "groupsJson", admin_grant_id AS "adminGrantId"`;

export const SELECT_IDENTITY = `SELECT ${IDENTITY_COLUMNS} FROM user_identities WHERE issuer = ? AND subject = ?`;
export const SELECT_IDENTITY_BY_ID = `SELECT ${IDENTITY_COLUMNS} FROM user_identities WHERE id = ?`;
export const LIST_USER_IDENTITIES = `SELECT ${IDENTITY_COLUMNS} FROM user_identities WHERE user_id = ? ORDER BY id`;
export const INSERT_IDENTITY = `INSERT INTO user_identities (user_id, issuer, subject, created_at) VALUES (?, ?, ?, ?) RETURNING ${IDENTITY_COLUMNS}`;
export const DELETE_IDENTITY = `DELETE FROM user_identities WHERE id = ? RETURNING ${IDENTITY_COLUMNS}`;
export const UPDATE_IDENTITY_SEEN = `UPDATE user_identities SET last_login_at = ?, groups_json = ?, admin_grant_id = ? WHERE id = ?`;
export const INSERT_LOGIN_CODE = `INSERT INTO sso_login_codes (code_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)`;
export const CLAIM_LOGIN_CODE = `DELETE FROM sso_login_codes WHERE code_hash = ? AND expires_at > ? RETURNING user_id AS "userId"`;
export const DELETE_EXPIRED_LOGIN_CODES = `DELETE FROM sso_login_codes WHERE expires_at <= ?`;
export const LIST_GROUP_TEAMS = `SELECT provider_group AS "providerGroup", team_id AS "teamId" FROM sso_group_teams ORDER BY provider_group, team_id`;
export const DELETE_GROUP_TEAMS = `DELETE FROM sso_group_teams`;
export const INSERT_GROUP_TEAM = `INSERT OR IGNORE INTO sso_group_teams (provider_group, team_id) VALUES (?, ?)`;
export const LIST_SYNCED_TEAMS = `SELECT team_id AS "teamId" FROM sso_team_members WHERE user_id = ? ORDER BY team_id`;
export const INSERT_SYNCED_MEMBER = `INSERT OR IGNORE INTO sso_team_members (team_id, user_id) VALUES (?, ?)`;
export const DELETE_SYNCED_MEMBER = `DELETE FROM sso_team_members WHERE team_id = ? AND user_id = ?`;
export const IS_BREAK_GLASS = `SELECT EXISTS (SELECT 1 FROM break_glass_accounts WHERE user_id = ?) AS present`;
export const INSERT_BREAK_GLASS = `INSERT OR IGNORE INTO break_glass_accounts (user_id) VALUES (?)`;

function toIdentity(row: SqlRow): Sso.IdentityRow {
  const groupsJson = row.groupsJson as string | null;
  return {
    id: Number(row.id),
    userId: Number(row.userId),
    issuer: String(row.issuer),
    subject: String(row.subject),
    createdAt: Number(row.createdAt),
    lastLoginAt: row.lastLoginAt === null ? null : Number(row.lastLoginAt),
    groups: groupsJson === null ? null : (JSON.parse(groupsJson) as string[]),
    adminGrantId: row.adminGrantId === null ? null : Number(row.adminGrantId),
  };
}

export async function findIdentity(db: SqlExecutor, issuer: string, subject: string): Promise<Sso.IdentityRow | null> {
  const row = await db.get(SELECT_IDENTITY, [issuer, subject]);
  return row ? toIdentity(row) : null;
}

export async function getIdentity(db: SqlExecutor, id: number): Promise<Sso.IdentityRow | null> {
  const row = await db.get(SELECT_IDENTITY_BY_ID, [id]);
  return row ? toIdentity(row) : null;
}

export async function listIdentitiesOfUser(db: SqlExecutor, userId: number): Promise<Sso.IdentityRow[]> {
  return (await db.all(LIST_USER_IDENTITIES, [userId])).map(toIdentity);
}

export async function listGroupTeams(db: SqlExecutor): Promise<Sso.GroupTeamRow[]> {
  return (await db.all(LIST_GROUP_TEAMS)).map((row) => ({ providerGroup: String(row.providerGroup), teamId: Number(row.teamId) }));
}

export async function isBreakGlassAccount(db: SqlExecutor, userId: number): Promise<boolean> {
  return Number((await db.get(IS_BREAK_GLASS, [userId]))?.present ?? 0) === 1;
}

export async function insertIdentity(db: SqlExecutor, row: Sso.NewIdentity): Promise<Sso.IdentityRow> {
  const stored = await db.get(INSERT_IDENTITY, [row.userId, row.issuer, row.subject, row.createdAt]);
  if (!stored) throw new Error('the inserted identity was not returned');
  return toIdentity(stored);
}

export async function deleteIdentity(db: SqlExecutor, id: number): Promise<Sso.IdentityRow | null> {
  const row = await db.get(DELETE_IDENTITY, [id]);
  return row ? toIdentity(row) : null;
}

export async function updateIdentitySeen(db: SqlExecutor, id: number, seen: Sso.IdentitySeen): Promise<void> {
  await db.run(UPDATE_IDENTITY_SEEN, [seen.lastLoginAt, JSON.stringify(seen.groups), seen.adminGrantId, id]);
}

export async function insertLoginCode(db: SqlExecutor, row: { codeHash: string; userId: number; createdAt: number; expiresAt: number }): Promise<void> {
  await db.run(INSERT_LOGIN_CODE, [row.codeHash, row.userId, row.createdAt, row.expiresAt]);
}

export async function claimLoginCode(db: SqlExecutor, codeHash: string, now: number): Promise<number | null> {
  const row = await db.get(CLAIM_LOGIN_CODE, [codeHash, now]);
  await db.run(DELETE_EXPIRED_LOGIN_CODES, [now]);
  return row ? Number(row.userId) : null;
}

export async function replaceGroupTeams(db: SqlExecutor, rows: readonly Sso.GroupTeamRow[]): Promise<void> {
  await db.run(DELETE_GROUP_TEAMS);
  for (const row of rows) await db.run(INSERT_GROUP_TEAM, [row.providerGroup, row.teamId]);
}

export async function markBreakGlassAccount(db: SqlExecutor, userId: number): Promise<void> {
  await db.run(INSERT_BREAK_GLASS, [userId]);
}

export async function syncedTeamIdsOfUser(db: SqlExecutor, userId: number): Promise<number[]> {
  return (await db.all(LIST_SYNCED_TEAMS, [userId])).map((row) => Number(row.teamId));
}

export async function setSyncedMembership(db: SqlExecutor, teamId: number, userId: number, synced: boolean): Promise<void> {
  await db.run(synced ? INSERT_SYNCED_MEMBER : DELETE_SYNCED_MEMBER, [teamId, userId]);
}
