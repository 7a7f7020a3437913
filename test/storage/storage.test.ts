/**
 * The storage contract, once, against every backend: each verb of ReadOps,
 * WriteOps and Storage through `openStorage`, on a real SQLite file and a
 * real PostgreSQL database. Cases share one database per backend, so each
 * creates its own rows (unique names) and asserts only about those.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dirname, join } from 'node:path';
import { open as openSqliteFile } from 'sqlite';
import sqlite3 from 'sqlite3';
import pgPromise from 'pg-promise';
import type { DatabaseConfig } from '../../lib/core/config.js';
import { silentLogger } from '../../lib/core/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import { SCHEMA_VERSION, type Storage } from '../../lib/storage/storage.js';
import type { AuditFilter, GroupRow, NewUser, ProjectRow, UserRow, Visibility } from '../../lib/storage/types-org.js';
import { SchemaTooNewError, StorageConflict, StorageUnavailableError } from '../../lib/core/errors.js';
import { describeEachBackend, newTestDatabase, type BackendName, type TestDatabase } from '../support/backends.js';

/** A fixed "now" so timestamps are exact in assertions. */
const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const ALL: Visibility = { all: true };

let seq = 0;
/** A short string no other case (or run) uses: keeps shared-database cases apart. */
function tag(): string {
  seq += 1;
  return `${process.pid.toString(36)}x${seq.toString(36)}`;
}

function newUser(overrides: Partial<NewUser> = {}): NewUser {
  return {
    username: `u-${tag()}`,
    passwordHash: 'scrypt$hash',
    displayName: null,
    email: null,
    mustChangePassword: false,
    isPrimaryAdmin: false,
    createdAt: T0,
    ...overrides,
  };
}

function isConflict(constraint: string) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof StorageConflict, `expected StorageConflict(${constraint}), got ${String(err)}`);
    assert.equal(err.constraint, constraint);
    return true;
  };
}

const ids = (rows: readonly { id: number }[]): number[] => rows.map((r) => r.id);
const ascending = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

/** Sets the stored schema version with the backend's own client, behind logkeep's back. */
async function setStoredSchemaVersion(config: DatabaseConfig, version: number): Promise<void> {
  if (config.dbBackend === 'file') {
    const db = await openSqliteFile({ filename: config.dbPath ?? '', driver: sqlite3.Database });
    try {
      await db.run('UPDATE schema_version SET version = ?', [version]);
    } finally {
      await db.close();
    }
    return;
  }
  const db = rawPostgres()({
    host: config.dbServerHost ?? '127.0.0.1',
    port: config.dbServerPort,
    database: config.dbServerDatabase ?? '',
    user: config.dbServerUsername ?? '',
    password: config.dbServerPassword ?? '',
    max: 1,
  });
  try {
    await db.none('UPDATE schema_version SET version = $1', [version]);
  } finally {
    // Only this pool: pgp.end() would end every pg-promise pool in the process.
    await db.$pool.end();
  }
}

let pgp: ReturnType<typeof pgPromise> | null = null;
function rawPostgres(): ReturnType<typeof pgPromise> {
  pgp ??= pgPromise({ noWarnings: true });
  return pgp;
}

/** Databases that cannot be opened or reached, per backend. */
function unopenableConfigs(backend: BackendName, base: DatabaseConfig): { what: string; config: DatabaseConfig }[] {
  if (backend === 'file') {
    const dir = dirname(base.dbPath ?? '');
    return [
      { what: 'a directory', config: { ...base, dbPath: dir } },
      { what: 'a file under a missing directory', config: { ...base, dbPath: join(dir, 'missing', 'logkeep.db') } },
    ];
  }
  return [
    { what: 'a port nobody listens on', config: { ...base, dbServerPort: 1 } },
    { what: 'a database that does not exist', config: { ...base, dbServerDatabase: `logkeep_missing_${tag()}` } },
  ];
}

describeEachBackend('storage contract', (backend) => {
  let db: TestDatabase;
  let storage: Storage;
  /** Extra databases and storages opened by single cases; closed at the end. */
  const extraDatabases: TestDatabase[] = [];
  const extraStorages: Storage[] = [];

  const open = async (config: DatabaseConfig): Promise<Storage> => {
    const s = await openStorage(config, { logger: silentLogger });
    extraStorages.push(s);
    return s;
  };
  const freshDatabase = async (): Promise<TestDatabase> => {
    const d = await newTestDatabase(backend);
    extraDatabases.push(d);
    return d;
  };

  const addUser = (overrides: Partial<NewUser> = {}): Promise<UserRow> => storage.write((tx) => tx.insertUser(newUser(overrides)));
  const addGroup = (name = `g-${tag()}`): Promise<GroupRow> => storage.write((tx) => tx.insertGroup(name, T0));
  const addProject = (groupId: number, name = `p-${tag()}`): Promise<ProjectRow> =>
    storage.write((tx) => tx.insertProject({ groupId, name, retentionDays: 30, maxEntries: null, maxBytes: null, createdAt: T0 }));

  before(async () => {
    db = await newTestDatabase(backend);
    storage = await openStorage(db.config, { logger: silentLogger });
  });

  after(async () => {
    for (const s of extraStorages) await s.close();
    await storage?.close();
    for (const d of extraDatabases) await d.cleanup();
    await db?.cleanup();
  });

  it('names its backend', () => {
    assert.equal(storage.backend, backend);
  });

  describe('users', () => {
    it('insertUser returns the stored row with defaults, and the getters find it', async () => {
      const countBefore = await storage.countUsers();
      const input = newUser({ displayName: 'Ada L.', email: `${tag()}@example.test`, mustChangePassword: true });
      const user = await addUser(input);
      assert.ok(Number.isInteger(user.id) && user.id > 0);
      assert.deepEqual(user, {
        id: user.id,
        username: input.username,
        displayName: 'Ada L.',
        email: input.email,
        emailVerifiedAt: null,
        passwordHash: input.passwordHash,
        mustChangePassword: true,
        isActive: true,
        deletedAt: null,
        isPrimaryAdmin: false,
        tokenVersion: 0,
        createdAt: T0,
      });
      assert.deepEqual(await storage.getUserById(user.id), user);
      assert.deepEqual(await storage.getUserByUsername(input.username), user);
      assert.equal(await storage.countUsers(), countBefore + 1);
      assert.equal(await storage.getUserById(user.id + 1_000_000), null);
      assert.equal(await storage.getUserByUsername(`nobody-${tag()}`), null);
    });

    it('getUserByUsername matches the exact username only', async () => {
      const user = await addUser({ username: `Exact-${tag()}` });
      assert.equal(await storage.getUserByUsername(user.username.toLowerCase()), null);
      assert.equal((await storage.getUserByUsername(user.username))?.id, user.id);
    });

    it('a taken username or email is StorageConflict; null emails may repeat', async () => {
      const email = `${tag()}@example.test`;
      const first = await addUser({ email });
      await assert.rejects(addUser({ username: first.username }), isConflict('username'));
      await assert.rejects(addUser({ email }), isConflict('email'));
      await addUser({ email: null });
      await addUser({ email: null });
      // A deleted user keeps both taken.
      await storage.write((tx) => tx.updateUser(first.id, { deletedAt: T0, isActive: false }));
      await assert.rejects(addUser({ username: first.username }), isConflict('username'));
      await assert.rejects(addUser({ email }), isConflict('email'));
    });

    it('at most one user is ever primary admin', async () => {
      // Its own database: "nobody is primary yet" must hold at the start.
      const s = await open((await freshDatabase()).config);
      const insert = (isPrimaryAdmin: boolean) => s.write((tx) => tx.insertUser(newUser({ isPrimaryAdmin })));
      assert.equal(await s.hasPrimaryAdmin(), false);
      await insert(false);
      assert.equal(await s.hasPrimaryAdmin(), false);
      const primary = await insert(true);
      assert.equal(primary.isPrimaryAdmin, true);
      assert.equal(await s.hasPrimaryAdmin(), true);
      await assert.rejects(insert(true), isConflict('primary_admin'));
      await insert(false);
      // "Ever": deleting the primary does not free the slot.
      await s.write((tx) => tx.updateUser(primary.id, { deletedAt: T0, isActive: false }));
      assert.equal(await s.hasPrimaryAdmin(), true);
      await assert.rejects(insert(true), isConflict('primary_admin'));
    });

    it('updateUser changes only the given fields and returns the row', async () => {
      const user = await addUser({ displayName: 'Before', email: `${tag()}@example.test` });
      const newEmail = `${tag()}@example.test`;
      const updated = await storage.write((tx) =>
        tx.updateUser(user.id, { displayName: null, email: newEmail, emailVerifiedAt: T0 + 1, mustChangePassword: true }),
      );
      assert.deepEqual(updated, { ...user, displayName: null, email: newEmail, emailVerifiedAt: T0 + 1, mustChangePassword: true });
      assert.deepEqual(await storage.getUserById(user.id), updated);

      const deleted = await storage.write((tx) => tx.updateUser(user.id, { passwordHash: 'other$hash', isActive: false, deletedAt: T0 + 2, email: null }));
      assert.deepEqual(deleted, { ...updated, passwordHash: 'other$hash', isActive: false, deletedAt: T0 + 2, email: null });
    });

    it('updateUser with no changes returns the row unchanged', async () => {
      const user = await addUser({ displayName: 'Same' });
      assert.deepEqual(await storage.write((tx) => tx.updateUser(user.id, {})), user);
      assert.deepEqual(await storage.getUserById(user.id), user);
    });

    it("updateUser to another user's email is StorageConflict('email')", async () => {
      const email = `${tag()}@example.test`;
      await addUser({ email });
      const other = await addUser();
      await assert.rejects(
        storage.write((tx) => tx.updateUser(other.id, { email })),
        isConflict('email'),
      );
      assert.equal((await storage.getUserById(other.id))?.email, null);
    });

    it('bumpTokenVersion adds one to each listed user only', async () => {
      const [a, b, c] = [await addUser(), await addUser(), await addUser()];
      await storage.write((tx) => tx.bumpTokenVersion([a.id, b.id]));
      await storage.write((tx) => tx.bumpTokenVersion([a.id]));
      await storage.write((tx) => tx.bumpTokenVersion([]));
      assert.equal((await storage.getUserById(a.id))?.tokenVersion, 2);
      assert.equal((await storage.getUserById(b.id))?.tokenVersion, 1);
      assert.equal((await storage.getUserById(c.id))?.tokenVersion, 0);
    });

    it('listUsers pages newest first below beforeId', async () => {
      const prefix = `page-${tag()}-`;
      const made: UserRow[] = [];
      for (let i = 0; i < 5; i++) made.push(await addUser({ username: `${prefix}${i}` }));
      const newestFirst = ids(made).reverse();
      const page1 = await storage.listUsers({ usernameContains: prefix, limit: 2 });
      assert.deepEqual(ids(page1), newestFirst.slice(0, 2));
      const page2 = await storage.listUsers({ usernameContains: prefix, limit: 2, beforeId: page1[1]!.id });
      assert.deepEqual(ids(page2), newestFirst.slice(2, 4));
      const page3 = await storage.listUsers({ usernameContains: prefix, limit: 2, beforeId: page2[1]!.id });
      assert.deepEqual(ids(page3), newestFirst.slice(4));
      assert.deepEqual(page3[0], made[0]);
      assert.deepEqual(await storage.listUsers({ usernameContains: prefix, limit: 2, beforeId: made[0]!.id }), []);
    });

    it('listUsers without a filter lists every user, newest first', async () => {
      const latest = await addUser();
      const all = await storage.listUsers({ limit: 200 });
      assert.equal(all[0]?.id, latest.id);
      assert.equal(all.length, Math.min(200, await storage.countUsers()));
      const sorted = [...ids(all)].sort((a, b) => b - a);
      assert.deepEqual(ids(all), sorted);
    });

    it('listUsers filter is a case-insensitive substring where % and _ are literal', async () => {
      const t = tag();
      const percent = await addUser({ username: `${t}a%b` });
      const plain = await addUser({ username: `${t}axb` });
      const underscore = await addUser({ username: `${t}a_b` });
      const accented = await addUser({ username: `${t}ÉLODIE` });
      const find = async (needle: string) => ascending(ids(await storage.listUsers({ usernameContains: needle, limit: 50 })));

      assert.deepEqual(await find(`${t}a%`), [percent.id]);
      assert.deepEqual(await find(`${t}a_`), [underscore.id]);
      assert.deepEqual(await find(`${t}A`), ascending([percent.id, plain.id, underscore.id]));
      // Non-ASCII case folding: both sides folded by JavaScript's toLowerCase().
      assert.deepEqual(await find(`${t}élo`), [accented.id]);
      assert.deepEqual(await find(`${t.toUpperCase()}ÉLO`), [accented.id]);
      assert.ok((await find('élodie')).includes(accented.id));
      assert.ok((await find('ODIE')).includes(accented.id));
      assert.deepEqual(await find(`${t}zzz`), []);
    });
  });

  describe('refresh tokens', () => {
    const token = (userId: number, overrides: { expiresAt?: number } = {}) => ({
      userId,
      tokenHash: `rt-${tag()}`,
      createdAt: T0,
      expiresAt: overrides.expiresAt ?? T0 + HOUR,
    });

    it('insert then get; revoking a live token returns it once', async () => {
      const user = await addUser();
      const row = token(user.id);
      await storage.write((tx) => tx.insertRefreshToken(row));
      const stored = await storage.getRefreshToken(row.tokenHash);
      assert.ok(stored);
      assert.deepEqual(stored, { id: stored.id, ...row, revokedAt: null });

      const revoked = await storage.write((tx) => tx.revokeRefreshToken(row.tokenHash, T0 + 5));
      assert.deepEqual(revoked, { ...stored, revokedAt: T0 + 5 });
      assert.equal(await storage.write((tx) => tx.revokeRefreshToken(row.tokenHash, T0 + 6)), null);
      assert.deepEqual(await storage.getRefreshToken(row.tokenHash), { ...stored, revokedAt: T0 + 5 });
      assert.equal(await storage.getRefreshToken(`rt-unknown-${tag()}`), null);
      assert.equal(await storage.write((tx) => tx.revokeRefreshToken(`rt-unknown-${tag()}`, T0)), null);
    });

    it('an expired token (expires_at <= now) is not revoked', async () => {
      const user = await addUser();
      const expired = token(user.id, { expiresAt: T0 });
      await storage.write((tx) => tx.insertRefreshToken(expired));
      assert.equal(await storage.write((tx) => tx.revokeRefreshToken(expired.tokenHash, T0)), null);
      assert.equal(await storage.write((tx) => tx.revokeRefreshToken(expired.tokenHash, T0 + 1)), null);
      assert.equal((await storage.getRefreshToken(expired.tokenHash))?.revokedAt, null);
    });

    it('a duplicate token hash is StorageConflict(token_hash)', async () => {
      const user = await addUser();
      const row = token(user.id);
      await storage.write((tx) => tx.insertRefreshToken(row));
      await assert.rejects(
        storage.write((tx) => tx.insertRefreshToken(row)),
        isConflict('token_hash'),
      );
    });

    it('of two concurrent revocations of one token, exactly one gets the row', async () => {
      const user = await addUser();
      for (let round = 0; round < 3; round++) {
        const row = token(user.id);
        await storage.write((tx) => tx.insertRefreshToken(row));
        const results = await Promise.all([
          storage.write((tx) => tx.revokeRefreshToken(row.tokenHash, T0 + 1)),
          storage.write((tx) => tx.revokeRefreshToken(row.tokenHash, T0 + 2)),
        ]);
        assert.equal(results.filter((r) => r !== null).length, 1, `round ${round}: ${JSON.stringify(results)}`);
      }
    });

    it("revokeUserRefreshTokens revokes the user's live tokens only and counts them", async () => {
      const [alice, bob] = [await addUser(), await addUser()];
      const live = [token(alice.id), token(alice.id), token(alice.id)];
      const expired = token(alice.id, { expiresAt: T0 - 1 });
      const alreadyRevoked = token(alice.id);
      const bobs = token(bob.id);
      await storage.write(async (tx) => {
        for (const row of [...live, expired, alreadyRevoked, bobs]) await tx.insertRefreshToken(row);
        await tx.revokeRefreshToken(alreadyRevoked.tokenHash, T0 - 10);
      });
      assert.equal(await storage.write((tx) => tx.revokeUserRefreshTokens(alice.id, T0)), 3);
      for (const row of live) assert.equal((await storage.getRefreshToken(row.tokenHash))?.revokedAt, T0);
      assert.equal((await storage.getRefreshToken(expired.tokenHash))?.revokedAt, null);
      assert.equal((await storage.getRefreshToken(alreadyRevoked.tokenHash))?.revokedAt, T0 - 10);
      assert.equal((await storage.getRefreshToken(bobs.tokenHash))?.revokedAt, null);
      assert.equal(await storage.write((tx) => tx.revokeUserRefreshTokens(alice.id, T0 + 1)), 0);
    });
  });

  describe('groups and teams', () => {
    it('insertGroup / getGroup', async () => {
      const name = `Group ${tag()}`;
      const group = await storage.write((tx) => tx.insertGroup(name, T0 + 7));
      assert.deepEqual(group, { id: group.id, name, createdAt: T0 + 7 });
      assert.deepEqual(await storage.getGroup(group.id), group);
      assert.equal(await storage.getGroup(group.id + 1_000_000), null);
    });

    it('insertTeam / getTeam / listTeams (newest first, one group only)', async () => {
      const [g, other] = [await addGroup(), await addGroup()];
      const t1 = await storage.write((tx) => tx.insertTeam(g.id, 'first', T0));
      const t2 = await storage.write((tx) => tx.insertTeam(g.id, 'second', T0 + 1));
      await storage.write((tx) => tx.insertTeam(other.id, 'elsewhere', T0));
      assert.deepEqual(t1, { id: t1.id, groupId: g.id, name: 'first', createdAt: T0 });
      assert.deepEqual(await storage.getTeam(t2.id), t2);
      assert.equal(await storage.getTeam(t2.id + 1_000_000), null);
      assert.deepEqual(await storage.listTeams(g.id), [t2, t1]);
    });

    it('team members: add, add again (false), remove, remove again (false)', async () => {
      const g = await addGroup();
      const [team, team2] = [await storage.write((tx) => tx.insertTeam(g.id, 't', T0)), await storage.write((tx) => tx.insertTeam(g.id, 't2', T0))];
      const [a, b] = [await addUser(), await addUser()];

      assert.equal(await storage.write((tx) => tx.addTeamMember(team.id, b.id)), true);
      assert.equal(await storage.write((tx) => tx.addTeamMember(team.id, a.id)), true);
      assert.equal(await storage.write((tx) => tx.addTeamMember(team.id, a.id)), false);
      assert.equal(await storage.write((tx) => tx.addTeamMember(team2.id, a.id)), true);
      assert.deepEqual(await storage.listTeamMembers(team.id), [
        { userId: a.id, username: a.username },
        { userId: b.id, username: b.username },
      ]);
      assert.equal(await storage.isTeamMember(team.id, a.id), true);
      assert.deepEqual(ascending(await storage.teamIdsOfUser(a.id)), ascending([team.id, team2.id]));

      assert.equal(await storage.write((tx) => tx.removeTeamMember(team.id, a.id)), true);
      assert.equal(await storage.write((tx) => tx.removeTeamMember(team.id, a.id)), false);
      assert.equal(await storage.isTeamMember(team.id, a.id), false);
      assert.deepEqual(await storage.listTeamMembers(team.id), [{ userId: b.id, username: b.username }]);
      assert.deepEqual(await storage.teamIdsOfUser(a.id), [team2.id]);
    });

    it('removeUserFromAllTeams empties only that user', async () => {
      const g = await addGroup();
      const [t1, t2] = [await storage.write((tx) => tx.insertTeam(g.id, 'x', T0)), await storage.write((tx) => tx.insertTeam(g.id, 'y', T0))];
      const [a, b] = [await addUser(), await addUser()];
      await storage.write(async (tx) => {
        for (const t of [t1, t2]) for (const u of [a, b]) await tx.addTeamMember(t.id, u.id);
      });
      await storage.write((tx) => tx.removeUserFromAllTeams(a.id));
      assert.deepEqual(await storage.teamIdsOfUser(a.id), []);
      assert.deepEqual(ascending(await storage.teamIdsOfUser(b.id)), ascending([t1.id, t2.id]));
    });

    it('listGroups: visibility, name filter (case-insensitive, literal %), paging', async () => {
      const t = tag();
      const g1 = await addGroup(`${t} Alpha`);
      const g2 = await addGroup(`${t} beta%`);
      const g3 = await addGroup(`${t} GAMMA`);
      const list = (filter: { nameContains?: string; visibility: Visibility; beforeId?: number; limit?: number }) =>
        storage.listGroups({ limit: 50, ...filter });

      assert.deepEqual(await list({ nameContains: t, visibility: ALL }), [g3, g2, g1]);
      assert.deepEqual(await list({ nameContains: t, visibility: { all: false, groupIds: [g1.id, g3.id], projectIds: [] } }), [g3, g1]);
      assert.deepEqual(await list({ nameContains: t, visibility: { all: false, groupIds: [], projectIds: [] } }), []);
      // A project grant does not reveal its group.
      const p = await addProject(g2.id);
      assert.deepEqual(await list({ nameContains: t, visibility: { all: false, groupIds: [], projectIds: [p.id] } }), []);
      assert.deepEqual(await list({ nameContains: `${t} ALPHA`.toUpperCase(), visibility: ALL }), [g1]);
      assert.deepEqual(await list({ nameContains: `${t} gamma`, visibility: ALL }), [g3]);
      assert.deepEqual(await list({ nameContains: `${t} %`, visibility: ALL }), []);
      assert.deepEqual(await list({ nameContains: 'beta%', visibility: ALL }), [g2]);
      assert.deepEqual(await list({ nameContains: t, visibility: ALL, limit: 1 }), [g3]);
      assert.deepEqual(await list({ nameContains: t, visibility: ALL, beforeId: g3.id, limit: 1 }), [g2]);
      assert.deepEqual(await list({ nameContains: t, visibility: ALL, beforeId: g2.id }), [g1]);
    });
  });

  describe('projects', () => {
    it('insertProject returns the row with zero usage, not blocked; getProject finds it', async () => {
      const g = await addGroup();
      const name = `Project ${tag()}`;
      const p = await storage.write((tx) =>
        tx.insertProject({ groupId: g.id, name, retentionDays: 14, maxEntries: 1000, maxBytes: 5_000_000_000, createdAt: T0 }),
      );
      assert.deepEqual(p, {
        id: p.id,
        groupId: g.id,
        name,
        retentionDays: 14,
        maxEntries: 1000,
        maxBytes: 5_000_000_000,
        isBlocked: false,
        createdAt: T0,
        entryCount: 0,
        totalBytes: 0,
      });
      assert.deepEqual(await storage.getProject(p.id), p);
      assert.equal(await storage.getProject(p.id + 1_000_000), null);
    });

    it('updateProject changes only the given fields; no changes returns the row unchanged', async () => {
      const g = await addGroup();
      const p = await addProject(g.id);
      assert.deepEqual(await storage.write((tx) => tx.updateProject(p.id, {})), p);
      const quotas = await storage.write((tx) => tx.updateProject(p.id, { retentionDays: 7, maxEntries: 10, maxBytes: 2048 }));
      assert.deepEqual(quotas, { ...p, retentionDays: 7, maxEntries: 10, maxBytes: 2048 });
      const blocked = await storage.write((tx) => tx.updateProject(p.id, { isBlocked: true, maxEntries: null }));
      assert.deepEqual(blocked, { ...quotas, isBlocked: true, maxEntries: null });
      assert.deepEqual(await storage.getProject(p.id), blocked);
      const unblocked = await storage.write((tx) => tx.updateProject(p.id, { isBlocked: false }));
      assert.equal(unblocked.isBlocked, false);
      assert.equal(unblocked.maxBytes, 2048);
    });

    it('projectIdsOfGroup lists the projects of one group with their blocked flag', async () => {
      const [g, other] = [await addGroup(), await addGroup()];
      const [p1, p2] = [await addProject(g.id), await addProject(g.id)];
      await addProject(other.id);
      await storage.write((tx) => tx.updateProject(p2.id, { isBlocked: true }));
      const got = (await storage.projectIdsOfGroup(g.id)).sort((a, b) => a.id - b.id);
      assert.deepEqual(got, [
        { id: p1.id, isBlocked: false },
        { id: p2.id, isBlocked: true },
      ]);
      assert.deepEqual(await storage.projectIdsOfGroup(g.id + 1_000_000), []);
    });

    it('listProjects: group filter, name filter, visibility by group or project, paging', async () => {
      const t = tag();
      const [g1, g2, g3] = [await addGroup(), await addGroup(), await addGroup()];
      const a = await addProject(g1.id, `${t} api`);
      const b = await addProject(g1.id, `${t} Web_app`);
      const c = await addProject(g2.id, `${t} worker`);
      const d = await addProject(g3.id, `${t} batch`);
      const list = (filter: { groupId?: number; nameContains?: string; visibility?: Visibility; beforeId?: number; limit?: number }) =>
        storage.listProjects({ limit: 50, nameContains: t, visibility: ALL, ...filter });

      assert.deepEqual(await list({}), [d, c, b, a]);
      assert.deepEqual(await list({ groupId: g1.id }), [b, a]);
      assert.deepEqual(await list({ nameContains: `${t} WEB_` }), [b]);
      assert.deepEqual(await list({ nameContains: `${t} web%` }), []);
      // A visible group reveals its projects; a project id only itself.
      assert.deepEqual(await list({ visibility: { all: false, groupIds: [g1.id], projectIds: [d.id] } }), [d, b, a]);
      assert.deepEqual(await list({ visibility: { all: false, groupIds: [], projectIds: [c.id] } }), [c]);
      assert.deepEqual(await list({ visibility: { all: false, groupIds: [], projectIds: [] } }), []);
      assert.deepEqual(await list({ groupId: g1.id, visibility: { all: false, groupIds: [g2.id], projectIds: [a.id] } }), [a]);
      assert.deepEqual(await list({ limit: 2 }), [d, c]);
      assert.deepEqual(await list({ limit: 2, beforeId: c.id }), [b, a]);
    });

    it('visibility with 5,000 ids filters in one query', async () => {
      const t = tag();
      const [g1, g2] = [await addGroup(`${t} one`), await addGroup(`${t} two`)];
      const [p1, p2] = [await addProject(g1.id, `${t} p1`), await addProject(g2.id, `${t} p2`)];
      const unknown = Array.from({ length: 4_999 }, (_, i) => 900_000_000 + i);
      const visibility: Visibility = { all: false, groupIds: [...unknown, g1.id], projectIds: [...unknown, p2.id] };
      assert.deepEqual(await storage.listGroups({ nameContains: t, visibility, limit: 50 }), [g1]);
      assert.deepEqual(await storage.listProjects({ nameContains: t, visibility, limit: 50 }), [p2, p1]);
    });
  });

  describe('secret keys', () => {
    it('insert, get, list newest first; a duplicate hash is StorageConflict(key_hash)', async () => {
      const g = await addGroup();
      const [p, other] = [await addProject(g.id), await addProject(g.id)];
      const hash1 = `kh-${tag()}`;
      const k1 = await storage.write((tx) => tx.insertSecretKey({ projectId: p.id, label: 'ci', keyHash: hash1, createdAt: T0 }));
      const k2 = await storage.write((tx) => tx.insertSecretKey({ projectId: p.id, label: null, keyHash: `kh-${tag()}`, createdAt: T0 + 1 }));
      await storage.write((tx) => tx.insertSecretKey({ projectId: other.id, label: null, keyHash: `kh-${tag()}`, createdAt: T0 }));
      assert.deepEqual(k1, { id: k1.id, projectId: p.id, label: 'ci', createdAt: T0, revokedAt: null });
      assert.deepEqual(await storage.getSecretKey(k1.id), k1);
      assert.equal(await storage.getSecretKey(k2.id + 1_000_000), null);
      assert.deepEqual(await storage.listSecretKeys(p.id), [k2, k1]);
      await assert.rejects(
        storage.write((tx) => tx.insertSecretKey({ projectId: other.id, label: null, keyHash: hash1, createdAt: T0 })),
        isConflict('key_hash'),
      );
    });

    it('findSecretKeyByHash reports the project and whether it is blocked', async () => {
      const g = await addGroup();
      const p = await addProject(g.id);
      const keyHash = `kh-${tag()}`;
      const key = await storage.write((tx) => tx.insertSecretKey({ projectId: p.id, label: null, keyHash, createdAt: T0 }));
      assert.deepEqual(await storage.findSecretKeyByHash(keyHash), { keyId: key.id, projectId: p.id, revokedAt: null, projectBlocked: false });
      await storage.write((tx) => tx.updateProject(p.id, { isBlocked: true }));
      assert.deepEqual(await storage.findSecretKeyByHash(keyHash), { keyId: key.id, projectId: p.id, revokedAt: null, projectBlocked: true });
      await storage.write((tx) => tx.revokeSecretKey(key.id, T0 + 3));
      assert.deepEqual(await storage.findSecretKeyByHash(keyHash), { keyId: key.id, projectId: p.id, revokedAt: T0 + 3, projectBlocked: true });
      assert.equal(await storage.findSecretKeyByHash(`kh-unknown-${tag()}`), null);
    });

    it('revokeSecretKey sets revoked_at once, keeps the first time, and lets one of two concurrent calls win', async () => {
      const g = await addGroup();
      const p = await addProject(g.id);
      const key = await storage.write((tx) => tx.insertSecretKey({ projectId: p.id, label: 'l', keyHash: `kh-${tag()}`, createdAt: T0 }));
      assert.deepEqual(await storage.write((tx) => tx.revokeSecretKey(key.id, T0 + 10)), { ...key, revokedAt: T0 + 10 });
      assert.equal(await storage.write((tx) => tx.revokeSecretKey(key.id, T0 + 20)), null);
      const other = await storage.write((tx) => tx.insertSecretKey({ projectId: p.id, label: null, keyHash: `kh-${tag()}`, createdAt: T0 }));
      const results = await Promise.all([1, 2, 3].map((i) => storage.write((tx) => tx.revokeSecretKey(other.id, T0 + i))));
      assert.equal(results.filter((r) => r !== null).length, 1);
      assert.deepEqual(await storage.getSecretKey(key.id), { ...key, revokedAt: T0 + 10 });
    });
  });

  describe('role assignments', () => {
    it('insert, get, delete', async () => {
      const user = await addUser();
      const row = { subjectType: 'user', subjectId: user.id, role: 'admin', scopeType: 'global', scopeId: null, createdAt: T0 } as const;
      const ra = await storage.write((tx) => tx.insertRoleAssignment(row));
      assert.deepEqual(ra, { id: ra.id, ...row });
      assert.deepEqual(await storage.getRoleAssignment(ra.id), ra);
      assert.equal(await storage.write((tx) => tx.deleteRoleAssignment(ra.id)), true);
      assert.equal(await storage.getRoleAssignment(ra.id), null);
      assert.equal(await storage.write((tx) => tx.deleteRoleAssignment(ra.id)), false);
    });

    it('duplicate grants are allowed', async () => {
      const user = await addUser();
      const g = await addGroup();
      const row = { subjectType: 'user', subjectId: user.id, role: 'user', scopeType: 'group', scopeId: g.id, createdAt: T0 } as const;
      const a = await storage.write((tx) => tx.insertRoleAssignment(row));
      const b = await storage.write((tx) => tx.insertRoleAssignment(row));
      assert.notEqual(a.id, b.id);
      assert.deepEqual(await storage.listRoleAssignments({ subjectType: 'user', subjectId: user.id }), [b, a]);
    });

    it('listRoleAssignments filters (ANDed) and lists newest first', async () => {
      const [u1, u2] = [await addUser(), await addUser()];
      const [g, h] = [await addGroup(), await addGroup()];
      const [pg, ph] = [await addProject(g.id), await addProject(h.id)];
      const team = await storage.write((tx) => tx.insertTeam(g.id, 'team', T0));
      const grant = (
        subjectType: 'user' | 'team',
        subjectId: number,
        role: 'admin' | 'owner' | 'user',
        scopeType: 'global' | 'group' | 'project',
        scopeId: number | null,
      ) => storage.write((tx) => tx.insertRoleAssignment({ subjectType, subjectId, role, scopeType, scopeId, createdAt: T0 }));
      const onGroup = await grant('user', u1.id, 'owner', 'group', g.id);
      const onProject = await grant('user', u1.id, 'user', 'project', pg.id);
      const elsewhere = await grant('user', u1.id, 'user', 'project', ph.id);
      const global = await grant('user', u1.id, 'admin', 'global', null);
      const teamOnGroup = await grant('team', team.id, 'user', 'group', g.id);
      const u2OnH = await grant('user', u2.id, 'owner', 'group', h.id);

      assert.deepEqual(await storage.listRoleAssignments({ subjectType: 'user', subjectId: u1.id }), [global, elsewhere, onProject, onGroup]);
      assert.deepEqual(await storage.listRoleAssignments({ subjectType: 'team', subjectId: team.id }), [teamOnGroup]);
      assert.deepEqual(await storage.listRoleAssignments({ scopeType: 'group', scopeId: g.id }), [teamOnGroup, onGroup]);
      assert.deepEqual(await storage.listRoleAssignments({ scopeType: 'project', scopeId: ph.id }), [elsewhere]);
      assert.deepEqual(await storage.listRoleAssignments({ withinGroupId: g.id }), [teamOnGroup, onProject, onGroup]);
      assert.deepEqual(await storage.listRoleAssignments({ withinGroupId: h.id }), [u2OnH, elsewhere]);
      assert.deepEqual(await storage.listRoleAssignments({ withinGroupId: g.id, subjectType: 'user', subjectId: u1.id }), [onProject, onGroup]);
      assert.deepEqual(await storage.listRoleAssignments({ withinGroupId: h.id, subjectId: u2.id }), [u2OnH]);
      const globals = await storage.listRoleAssignments({ scopeType: 'global' });
      assert.ok(globals.some((r) => r.id === global.id));
      assert.ok(globals.every((r) => r.scopeType === 'global' && r.scopeId === null));
      const all = await storage.listRoleAssignments({});
      assert.ok(ids([onGroup, onProject, elsewhere, global, teamOnGroup, u2OnH]).every((id) => ids(all).includes(id)));
      assert.deepEqual(
        ids(all),
        [...ids(all)].sort((x, y) => y - x),
      );
    });

    it("deleteUserRoleAssignments deletes the user's own grants, not a team's with the same id", async () => {
      const user = await addUser();
      const g = await addGroup();
      const mine = await storage.write((tx) =>
        tx.insertRoleAssignment({ subjectType: 'user', subjectId: user.id, role: 'owner', scopeType: 'group', scopeId: g.id, createdAt: T0 }),
      );
      const teamWithSameId = await storage.write((tx) =>
        tx.insertRoleAssignment({ subjectType: 'team', subjectId: user.id, role: 'owner', scopeType: 'group', scopeId: g.id, createdAt: T0 }),
      );
      await storage.write((tx) => tx.deleteUserRoleAssignments(user.id));
      assert.equal(await storage.getRoleAssignment(mine.id), null);
      assert.deepEqual(await storage.getRoleAssignment(teamWithSameId.id), teamWithSameId);
      await storage.write((tx) => tx.deleteRoleAssignment(teamWithSameId.id));
    });

    it('effectiveGrants: direct plus team grants, deduplicated, ordered by role, scope type, scope id', async () => {
      const [u, outsider] = [await addUser(), await addUser()];
      const [g1, g2] = [await addGroup(), await addGroup()];
      const p = await addProject(g1.id);
      const [team, otherTeam] = [await storage.write((tx) => tx.insertTeam(g1.id, 'team', T0)), await storage.write((tx) => tx.insertTeam(g1.id, 'other', T0))];
      await storage.write(async (tx) => {
        await tx.addTeamMember(team.id, u.id);
        await tx.addTeamMember(otherTeam.id, outsider.id);
        const grant = (
          subjectType: 'user' | 'team',
          subjectId: number,
          role: 'admin' | 'owner' | 'user',
          scopeType: 'global' | 'group' | 'project',
          scopeId: number | null,
        ) => tx.insertRoleAssignment({ subjectType, subjectId, role, scopeType, scopeId, createdAt: T0 });
        await grant('user', u.id, 'user', 'project', p.id);
        await grant('user', u.id, 'owner', 'group', g2.id);
        await grant('team', team.id, 'owner', 'group', g2.id); // same as a direct one: once
        await grant('team', team.id, 'owner', 'group', g1.id);
        await grant('team', team.id, 'user', 'project', p.id); // same as a direct one: once
        await grant('user', u.id, 'admin', 'global', null);
        await grant('team', otherTeam.id, 'owner', 'global', null); // not u's team
        await grant('user', outsider.id, 'user', 'group', g1.id);
      });
      const [lo, hi] = g1.id < g2.id ? [g1.id, g2.id] : [g2.id, g1.id];
      assert.deepEqual(await storage.effectiveGrants(u.id), [
        { role: 'admin', scope_type: 'global', scope_id: null },
        { role: 'owner', scope_type: 'group', scope_id: lo },
        { role: 'owner', scope_type: 'group', scope_id: hi },
        { role: 'user', scope_type: 'project', scope_id: p.id },
      ]);
      const nobody = await addUser();
      assert.deepEqual(await storage.effectiveGrants(nobody.id), []);
    });

    it('countGroupOwners: direct and team owners, each person once, deleted users not counted, zero-owner groups listed', async () => {
      const [a, b, c, deleted, reader] = [await addUser(), await addUser(), await addUser(), await addUser(), await addUser()];
      const [owned, ownerless, teamOwned] = [await addGroup(), await addGroup(), await addGroup()];
      const project = await addProject(ownerless.id);
      const team = await storage.write((tx) => tx.insertTeam(owned.id, 'owners', T0));
      await storage.write(async (tx) => {
        const grant = (subjectType: 'user' | 'team', subjectId: number, role: 'owner' | 'user', scopeType: 'group' | 'project', scopeId: number) =>
          tx.insertRoleAssignment({ subjectType, subjectId, role, scopeType, scopeId, createdAt: T0 });
        await tx.addTeamMember(team.id, a.id);
        await tx.addTeamMember(team.id, b.id);
        await grant('user', a.id, 'owner', 'group', owned.id); // a: direct and via team → once
        await grant('team', team.id, 'owner', 'group', owned.id); // a, b
        await grant('user', deleted.id, 'owner', 'group', owned.id);
        await grant('user', reader.id, 'user', 'group', owned.id); // not an owner role
        await grant('user', c.id, 'owner', 'project', project.id); // project scope: not a group owner
        await grant('team', team.id, 'owner', 'group', teamOwned.id); // a, b
        await tx.updateUser(deleted.id, { deletedAt: T0, isActive: false });
      });
      const missing = teamOwned.id + 1_000_000;
      const counts = await storage.countGroupOwners([owned.id, ownerless.id, teamOwned.id, missing]);
      const byId = new Map(counts.map((row) => [row.groupId, row]));
      assert.equal(counts.length, 3);
      assert.deepEqual(byId.get(owned.id), { groupId: owned.id, name: owned.name, owners: 2 });
      assert.deepEqual(byId.get(ownerless.id), { groupId: ownerless.id, name: ownerless.name, owners: 0 });
      assert.deepEqual(byId.get(teamOwned.id), { groupId: teamOwned.id, name: teamOwned.name, owners: 2 });
      assert.deepEqual(await storage.countGroupOwners([]), []);

      // Inside a transaction the count sees the transaction's own changes (the sole-owner guard relies on it).
      const during = await storage.write(async (tx) => {
        await tx.removeTeamMember(team.id, b.id);
        await tx.deleteUserRoleAssignments(a.id);
        return tx.countGroupOwners([owned.id, teamOwned.id]);
      });
      assert.deepEqual(
        new Map(during.map((row) => [row.groupId, row.owners])),
        new Map([
          [owned.id, 1],
          [teamOwned.id, 1],
        ]),
      );
    });

    it('groupsOwnedBy: groups owned directly or through a team', async () => {
      const [u, other] = [await addUser(), await addUser()];
      const [direct, viaTeam, merelyUsed, notMine] = [await addGroup(), await addGroup(), await addGroup(), await addGroup()];
      const team = await storage.write((tx) => tx.insertTeam(viaTeam.id, 'team', T0));
      await storage.write(async (tx) => {
        await tx.addTeamMember(team.id, u.id);
        await tx.insertRoleAssignment({ subjectType: 'user', subjectId: u.id, role: 'owner', scopeType: 'group', scopeId: direct.id, createdAt: T0 });
        await tx.insertRoleAssignment({ subjectType: 'team', subjectId: team.id, role: 'owner', scopeType: 'group', scopeId: viaTeam.id, createdAt: T0 });
        await tx.insertRoleAssignment({ subjectType: 'team', subjectId: team.id, role: 'owner', scopeType: 'group', scopeId: direct.id, createdAt: T0 });
        await tx.insertRoleAssignment({ subjectType: 'user', subjectId: u.id, role: 'user', scopeType: 'group', scopeId: merelyUsed.id, createdAt: T0 });
        await tx.insertRoleAssignment({ subjectType: 'user', subjectId: other.id, role: 'owner', scopeType: 'group', scopeId: notMine.id, createdAt: T0 });
      });
      const owned = (await storage.groupsOwnedBy(u.id)).sort((x, y) => x.id - y.id);
      assert.deepEqual(
        owned,
        [direct, viaTeam].sort((x, y) => x.id - y.id),
      );
      assert.deepEqual(await storage.groupsOwnedBy((await addUser()).id), []);
    });
  });

  describe('audit', () => {
    it('insertAudit returns the row; metadata round-trips', async () => {
      const metadata = { changed_fields: ['email', 'display_name'], nested: { n: 1.5, ok: true, none: null }, text: 'é "quoted" ☃' };
      const row = { actorUserId: 42, action: `test.${tag()}`, targetType: 'user', targetId: 7, metadata, createdAt: T0 };
      const inserted = await storage.write((tx) => tx.insertAudit(row));
      assert.deepEqual(inserted, { id: inserted.id, ...row });
      assert.deepEqual(await storage.listAudit({ action: row.action, limit: 10 }), [inserted]);
      const empty = await storage.write((tx) => tx.insertAudit({ ...row, actorUserId: null, targetId: null, metadata: {} }));
      assert.deepEqual(empty.metadata, {});
      assert.equal(empty.actorUserId, null);
      assert.equal(empty.targetId, null);
    });

    it('listAudit: filters are ANDed, from/to inclusive, newest first, paging', async () => {
      const action = `test.${tag()}`;
      const other = `test.${tag()}`;
      const insert = (actorUserId: number | null, act: string, targetType: string, targetId: number | null, createdAt: number) =>
        storage.write((tx) => tx.insertAudit({ actorUserId, action: act, targetType, targetId, metadata: {}, createdAt }));
      const r0 = await insert(1, action, 'user', 10, T0);
      const r1 = await insert(2, action, 'user', 11, T0 + 1000);
      const r2 = await insert(1, action, 'group', 10, T0 + 2000);
      const r3 = await insert(1, other, 'user', 10, T0 + 3000);
      const r4 = await insert(null, action, 'auth', null, T0 + 4000);
      const list = (filter: Omit<AuditFilter, 'limit'> & { limit?: number }) => storage.listAudit({ limit: 50, ...filter });

      // Unfiltered: the newest rows of the whole log.
      assert.deepEqual(ids(await storage.listAudit({ limit: 5 })), ids([r4, r3, r2, r1, r0]));
      assert.deepEqual(await list({ action }), [r4, r2, r1, r0]);
      assert.deepEqual(await list({ action, actorUserId: 1 }), [r2, r0]);
      assert.deepEqual(await list({ action, targetType: 'user' }), [r1, r0]);
      assert.deepEqual(await list({ action, targetType: 'user', targetId: 10 }), [r0]);
      assert.deepEqual(await list({ targetType: 'user', targetId: 10, actorUserId: 1, from: T0 }), [r3, r0]);
      assert.deepEqual(await list({ action, from: T0 + 1000, to: T0 + 2000 }), [r2, r1]);
      assert.deepEqual(await list({ action, from: T0 + 1001, to: T0 + 3999 }), [r2]);
      assert.deepEqual(await list({ action, to: T0 }), [r0]);
      assert.deepEqual(await list({ action, from: T0 + 4000 }), [r4]);
      assert.deepEqual(await list({ action, limit: 2 }), [r4, r2]);
      assert.deepEqual(await list({ action, limit: 2, beforeId: r2.id }), [r1, r0]);
      assert.deepEqual(await list({ action, beforeId: r0.id }), []);
      assert.deepEqual(await list({ action: `test.none-${tag()}` }), []);
    });
  });

  describe('transactions', () => {
    it('write returns what fn returns', async () => {
      assert.equal(await storage.write(async () => 'value'), 'value');
    });

    it('a throw rolls back everything and reaches the caller unchanged', async () => {
      const username = `rollback-${tag()}`;
      const groupName = `rollback-${tag()}`;
      const action = `test.${tag()}`;
      const existing = await addUser();
      const boom = new Error('boom');
      await assert.rejects(
        storage.write(async (tx) => {
          const user = await tx.insertUser(newUser({ username }));
          await tx.insertGroup(groupName, T0);
          await tx.updateUser(existing.id, { displayName: 'changed' });
          await tx.bumpTokenVersion([existing.id]);
          await tx.insertAudit({ actorUserId: user.id, action, targetType: 'user', targetId: user.id, metadata: {}, createdAt: T0 });
          // Inside the transaction its own writes are visible.
          assert.equal((await tx.getUserByUsername(username))?.id, user.id);
          throw boom;
        }),
        (err) => err === boom,
      );
      assert.equal(await storage.getUserByUsername(username), null);
      assert.deepEqual(await storage.listGroups({ nameContains: groupName, visibility: ALL, limit: 10 }), []);
      assert.deepEqual(await storage.getUserById(existing.id), existing);
      assert.deepEqual(await storage.listAudit({ action, limit: 10 }), []);
    });

    it('a conflict inside a transaction rolls back its earlier writes', async () => {
      const taken = await addUser();
      const groupName = `conflict-${tag()}`;
      await assert.rejects(
        storage.write(async (tx) => {
          await tx.insertGroup(groupName, T0);
          await tx.insertUser(newUser({ username: taken.username }));
        }),
        isConflict('username'),
      );
      assert.deepEqual(await storage.listGroups({ nameContains: groupName, visibility: ALL, limit: 10 }), []);
    });

    for (const readPoolSize of [2, 0]) {
      it(`plain reads never observe an open transaction (read pool ${readPoolSize})`, async () => {
        const s = await open({ ...db.config, dbReadPoolSize: readPoolSize });
        const username = `uncommitted-${tag()}`;
        let inserted!: () => void;
        const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
        const rolledBack = s
          .write(async (tx) => {
            await tx.insertUser(newUser({ username }));
            inserted();
            await new Promise((resolve) => setTimeout(resolve, 100));
            throw new Error('roll back');
          })
          .catch((err: unknown) => err);
        await insertedSignal;
        assert.equal(await s.getUserByUsername(username), null);
        assert.ok((await rolledBack) instanceof Error);
        assert.equal(await s.getUserByUsername(username), null);
      });
    }

    it('writes run one after another or concurrently, and all commit', async () => {
      const prefix = `many-${tag()}-`;
      await Promise.all(Array.from({ length: 10 }, (_, i) => storage.write((tx) => tx.insertUser(newUser({ username: `${prefix}${i}` })))));
      assert.equal((await storage.listUsers({ usernameContains: prefix, limit: 50 })).length, 10);
    });
  });

  describe('schema and lifecycle', () => {
    it('a new database is at SCHEMA_VERSION; reopening keeps the version and the data; close is idempotent', async () => {
      const fresh = await freshDatabase();
      const first = await open(fresh.config);
      assert.equal(await first.schemaVersion(), SCHEMA_VERSION);
      const user = await first.write((tx) => tx.insertUser(newUser()));
      await first.close();
      await first.close();

      const again = await open(fresh.config);
      assert.equal(await again.schemaVersion(), SCHEMA_VERSION);
      assert.deepEqual(await again.getUserById(user.id), user);
      await again.close();
    });

    it('two processes opening one empty database at once both succeed', async () => {
      const fresh = await freshDatabase();
      const [a, b] = await Promise.all([open(fresh.config), open(fresh.config)]);
      assert.equal(await a.schemaVersion(), SCHEMA_VERSION);
      assert.equal(await b.schemaVersion(), SCHEMA_VERSION);
      await a.write((tx) => tx.insertGroup('from a', T0));
      assert.equal((await b.listGroups({ visibility: ALL, limit: 10 })).length, 1);
    });

    it('a newer schema is refused with SchemaTooNewError naming both versions', async () => {
      const fresh = await freshDatabase();
      await (await open(fresh.config)).close();
      await setStoredSchemaVersion(fresh.config, SCHEMA_VERSION + 1);
      await assert.rejects(openStorage(fresh.config, { logger: silentLogger }), (err: unknown) => {
        assert.ok(err instanceof SchemaTooNewError, String(err));
        assert.equal(err.databaseVersion, SCHEMA_VERSION + 1);
        assert.equal(err.supportedVersion, SCHEMA_VERSION);
        assert.match(err.message, new RegExp(`\\b${SCHEMA_VERSION + 1}\\b`));
        assert.match(err.message, new RegExp(`\\b${SCHEMA_VERSION}\\b`));
        return true;
      });
      // Refusing changed nothing: still refused, not half-migrated.
      await assert.rejects(openStorage(fresh.config, { logger: silentLogger }), SchemaTooNewError);
    });

    it('a database that cannot be opened or reached is StorageUnavailableError', async () => {
      for (const { what, config } of unopenableConfigs(backend, db.config)) {
        await assert.rejects(openStorage(config, { logger: silentLogger }), (err: unknown) => {
          assert.ok(err instanceof StorageUnavailableError, `${what}: ${String(err)}`);
          return true;
        });
      }
    });
  });
});
