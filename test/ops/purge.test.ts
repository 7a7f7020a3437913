/**
 * The retention pass against each backend: log entries by project and
 * `received_at`, the two audit classes and
 * their `audit.purged` rows, chunking, counters, expired refresh tokens, the
 * maintenance lock (PostgreSQL) and space given back (SQLite). Each case
 * gets a fresh database, since a pass covers the whole database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { statSync } from 'node:fs';
import { open as openSqliteFile } from 'sqlite';
import sqlite3 from 'sqlite3';
import { silentLogger } from '../../lib/core/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { AuditRow, ProjectRow } from '../../lib/storage/types-org.js';
import type { LogSelection } from '../../lib/storage/types-logs.js';
import type { Storage } from '../../lib/storage/storage.js';
import { AUDIT_CLASS_ACTIONS, LOG_PURGE_CHUNK, runPurgePass, type PurgeSettings } from '../../lib/ops/purge.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { rawRows } from '../support/raw-sql.js';
import { describeEachBackend, newTestDatabase, type BackendName, type TestDatabase } from '../support/backends.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { decodeSealedBlock, readSealedHeader } from '../../lib/storage/log-index/sealed-block.js';

const DAY = 86_400_000;
const NOW = 1_750_000_000_000;
const NO_AUDIT_RETENTION: PurgeSettings = { auditRetentionDays: null, authEventRetentionDays: null, auditPurgeBatchSize: 500 };

interface Fixture {
  storage: Storage;
  database: TestDatabase;
}

async function openFixture(backend: BackendName): Promise<Fixture> {
  const database = await newTestDatabase(backend);
  const storage = await openStorage(database.config, { logger: silentLogger });
  return { storage, database };
}

async function closeFixture(f: Fixture): Promise<void> {
  await f.storage.close();
  await f.database.cleanup();
}

async function newProject(storage: Storage, retentionDays: number): Promise<ProjectRow> {
  return storage.write(async (tx) => {
    const group = await tx.insertGroup(`g-${Math.random().toString(36).slice(2)}`, NOW);
    return tx.insertProject({ groupId: group.id, name: 'p', retentionDays, maxEntries: null, maxBytes: null, createdAt: NOW });
  });
}

/** Stores `count` entries received at `receivedAt`, each with the word `word` (and a size that varies). */
async function ingest(storage: Storage, projectId: number, receivedAt: number, count: number, word = 'purgeword'): Promise<number[]> {
  const values = Array.from({ length: count }, (_, i) => ({
    level: 'info',
    event: `${word} number ${i}`,
    timestamp: new Date(receivedAt).toISOString(),
    padding: 'x'.repeat(i % 7),
  }));
  const { entries } = entriesFromValues(values);
  const ids: number[] = [];
  // Batches of 1000 keep the single JSON parameter modest.
  for (let at = 0; at < entries.length; at += 1000) {
    const [outcomes] = await storage.write((tx) => tx.ingestLogs([encodeRequest(projectId, receivedAt, entries.slice(at, at + 1000))]));
    for (const outcome of outcomes ?? []) {
      assert.ok('id' in outcome, 'no quota is set, so every entry is stored');
      ids.push(outcome.id);
    }
  }
  return ids;
}

function everything(projectId: number): LogSelection {
  return { projectIds: [projectId], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };
}

/** The stored entries of a project, and whether its counters equal them. */
async function storedEntries(
  storage: Storage,
  projectId: number,
): Promise<{ ids: number[]; counters: { entries: number; bytes: number }; rows: { entries: number; bytes: number } }> {
  const rows = await storage.queryLogs(everything(projectId), { limit: 100_000 });
  const project = await storage.getProject(projectId);
  assert.ok(project);
  return {
    ids: rows.map((r) => r.id).sort((a, b) => a - b),
    counters: { entries: project.entryCount, bytes: project.totalBytes },
    rows: { entries: rows.length, bytes: rows.reduce((sum, r) => sum + Buffer.byteLength(r.body, 'utf8'), 0) },
  };
}

async function auditRows(storage: Storage, action?: string): Promise<AuditRow[]> {
  return storage.listAudit({ limit: 100_000, ...(action === undefined ? {} : { action }) });
}

async function insertAudit(storage: Storage, action: string, createdAt: number, count = 1): Promise<void> {
  await storage.write(async (tx) => {
    for (let i = 0; i < count; i++) {
      await tx.insertAudit({ actorUserId: null, action, targetType: 'test', targetId: null, metadata: { i }, createdAt });
    }
  });
}

/**
 * SQLite: sealed storage matches the stored entries after a purge. Every
 * entry is in exactly one place, the tail or one sealed block of its
 * project; no block is left without entries, and every filter shard names a
 * block that exists; no entry, in the tail or in a block, holds `goneWord`
 * (a word only purged entries had).
 */
async function assertIndexMatchesEntries(path: string, goneWord?: string): Promise<void> {
  const raw = await openSqliteFile({ filename: path, driver: sqlite3.Database, mode: sqlite3.OPEN_READONLY });
  try {
    await raw.exec('PRAGMA busy_timeout = 5000');
    const tail = await raw.all<{ id: number; project_id: number; body: string }[]>('SELECT id, project_id, body FROM log_entries ORDER BY id');
    const blocks = await raw.all<{ project_id: number; last_id: number; entries: number; block: Buffer }[]>(
      'SELECT project_id, last_id, entries, block FROM log_sealed ORDER BY last_id',
    );
    const dictionaries = await raw.all<{ project_id: number; id: number; bytes: Buffer }[]>('SELECT project_id, id, bytes FROM log_dictionaries');
    const place = new Map<number, string>();
    for (const e of tail) {
      assert.ok(!place.has(e.id), `entry ${e.id} is in one place`);
      place.set(e.id, `tail of ${e.project_id}`);
      if (goneWord !== undefined) assert.ok(!e.body.includes(goneWord), `no tail entry holds ${goneWord}`);
    }
    for (const b of blocks) {
      const header = readSealedHeader(b.block);
      const dictionary = dictionaries.find((d) => d.project_id === b.project_id && d.id === header.dictionaryId);
      const entries = decodeSealedBlock(b.block, dictionary ? { id: dictionary.id, bytes: dictionary.bytes } : null);
      assert.ok(entries.length > 0 && entries.length === b.entries, `block ${b.last_id} holds its ${b.entries} entries`);
      assert.equal(entries[entries.length - 1]!.id, b.last_id);
      for (const e of entries) {
        assert.ok(!place.has(e.id), `entry ${e.id} is in one place`);
        place.set(e.id, `block ${b.last_id}`);
        if (goneWord !== undefined) assert.ok(!e.body.includes(goneWord), `no sealed entry holds ${goneWord}`);
      }
    }
    const orphans = await raw.all('SELECT block_last_id FROM log_filter_shards WHERE block_last_id NOT IN (SELECT last_id FROM log_sealed)');
    assert.deepEqual(orphans, [], 'every filter shard names a block');
  } finally {
    await raw.close();
  }
}

/** The project's sealed blocks, read straight from either backend once its tail is sealed. */
async function blockSpans(database: TestDatabase, storage: Storage, projectId: number): Promise<{ first: number; last: number }[]> {
  await storage.sealNow?.();
  return (await rawRows(database, 'SELECT first_id AS first, last_id AS last FROM log_sealed WHERE project_id = $1 ORDER BY last_id', [projectId])) as {
    first: number;
    last: number;
  }[];
}

/**
 * The rollup equals the stored entries counted per (project, minute,
 * level) and per (project, hour, level) here, with no row left for a
 * minute or hour emptied by the purge.
 */
async function assertRollupMatchesEntries(database: TestDatabase): Promise<void> {
  const expected = new Map<string, number>();
  for (const e of await rawRows(database, 'SELECT project_id AS p, ts, level FROM log_entries')) {
    for (const span of [60_000, 3_600_000]) {
      const key = `${e.p} ${span} ${Math.floor(e.ts! / span) * span} ${e.level}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
  }
  const rollup = await rawRows(database, 'SELECT project_id AS p, span, start, level AS l, n FROM log_rollup');
  assert.deepEqual(new Map(rollup.map((r) => [`${r.p} ${r.span} ${r.start} ${r.l}`, r.n])), expected);
}

describeEachBackend('retention purge', (backend) => {
  describe('log entries', () => {
    let f: Fixture;
    before(async () => {
      f = await openFixture(backend);
    });
    after(() => closeFixture(f));

    it("deletes by each project's own retention, by received_at with a strict cutoff, keeping counters exact", async () => {
      const short = await newProject(f.storage, 1);
      const long = await newProject(f.storage, 10);
      // Only the entries past retention carry 'oldword'.
      const shortOld = await ingest(f.storage, short.id, NOW - 2 * DAY, 3, 'purgeword oldword');
      const shortAtCutoff = await ingest(f.storage, short.id, NOW - DAY, 2);
      const shortJustPast = await ingest(f.storage, short.id, NOW - DAY - 1, 1, 'purgeword oldword');
      const shortNew = await ingest(f.storage, short.id, NOW - DAY / 2, 4);
      const longKept = await ingest(f.storage, long.id, NOW - 2 * DAY, 5);
      const longOld = await ingest(f.storage, long.id, NOW - 11 * DAY, 6, 'purgeword oldword');
      const path = f.database.config.dbPath as string;
      const oldFound = await f.storage.queryLogs({ ...everything(short.id), projectIds: [short.id, long.id], words: ['oldword'] }, { limit: 1000 });
      assert.deepEqual(
        oldFound.map((r) => r.id).sort((a, b) => a - b),
        [...shortOld, ...shortJustPast, ...longOld].sort((a, b) => a - b),
      );

      const report = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
      assert.equal(report.ran, true);
      assert.equal(report.logEntries, 3 + 1 + 6);

      const s = await storedEntries(f.storage, short.id);
      assert.deepEqual(
        s.ids,
        [...shortAtCutoff, ...shortNew].sort((a, b) => a - b),
      );
      assert.deepEqual(s.counters, s.rows);
      const l = await storedEntries(f.storage, long.id);
      assert.deepEqual(l.ids, longKept);
      assert.deepEqual(l.counters, l.rows);
      assert.ok(shortOld.length + shortJustPast.length + longOld.length === 10);

      // The search index lost the deleted entries too.
      const found = await f.storage.queryLogs({ ...everything(short.id), words: ['purgeword'] }, { limit: 1000 });
      assert.deepEqual(
        found.map((r) => r.id).sort((a, b) => a - b),
        s.ids,
      );
      for (const projectIds of [[short.id], [long.id], [short.id, long.id]]) {
        assert.deepEqual(await f.storage.queryLogs({ ...everything(short.id), projectIds, words: ['oldword'] }, { limit: 1000 }), []);
        assert.deepEqual(await f.storage.queryLogs({ ...everything(short.id), projectIds, prefixes: ['oldw'] }, { limit: 1000 }), []);
      }
      if (backend === 'file') await assertIndexMatchesEntries(path, 'oldword');
      await assertRollupMatchesEntries(f.database);

      const again = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
      assert.equal(again.logEntries, 0, 'a second pass finds nothing more');
    });

    it(`deletes more entries than one chunk (${LOG_PURGE_CHUNK}) in several transactions`, async () => {
      const project = await newProject(f.storage, 3);
      const count = LOG_PURGE_CHUNK * 2 + 317;
      await ingest(f.storage, project.id, NOW - 4 * DAY, count);
      const kept = await ingest(f.storage, project.id, NOW, 5);
      const report = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
      assert.equal(report.logEntries, count);
      assert.ok(report.logBytes > 0);
      const s = await storedEntries(f.storage, project.id);
      assert.deepEqual(s.ids, kept);
      assert.deepEqual(s.counters, s.rows);
      assert.deepEqual(s.counters.entries, 5);
      // Chunks cut through blocks: those emptied by a later chunk go too.
      if (backend === 'file') await assertIndexMatchesEntries(f.database.config.dbPath as string);
      await assertRollupMatchesEntries(f.database);
      const found = await f.storage.queryLogs({ ...everything(project.id), words: ['purgeword'] }, { limit: 1000 });
      assert.deepEqual(
        found.map((r) => r.id).sort((a, b) => a - b),
        kept,
      );
    });

    it('drops a block emptied from its start after its end went first (received_at falling within one transaction)', async () => {
      const f = await openFixture(backend);
      try {
        const project = await newProject(f.storage, 3);
        const values = (word: string) =>
          entriesFromValues([0, 1].map((i) => ({ level: 'info', event: `${word} ${i}`, timestamp: new Date(NOW).toISOString() }))).entries;
        // One transaction, one block: the later ids were received earlier.
        await f.storage.write((tx) =>
          tx.ingestLogs([encodeRequest(project.id, NOW - 2 * DAY, values('first')), encodeRequest(project.id, NOW - 5 * DAY, values('second'))]),
        );
        assert.equal((await blockSpans(f.database, f.storage, project.id)).length, 1);
        assert.equal((await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW })).logEntries, 2);
        assert.equal((await blockSpans(f.database, f.storage, project.id)).length, 1, 'half of the block is left');
        assert.equal((await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW + 2 * DAY })).logEntries, 2);
        assert.deepEqual(await blockSpans(f.database, f.storage, project.id), [], 'the emptied block is gone');
        assert.deepEqual(await f.storage.queryLogs({ ...everything(project.id), words: ['first'] }, { limit: 10 }), []);
      } finally {
        await closeFixture(f);
      }
    });

    it('answers from the surviving entries of a block only partly purged, and drops the block once emptied', async () => {
      // A database of its own: the second pass below is a day later.
      const f = await openFixture(backend);
      try {
        const project = await newProject(f.storage, 1);
        const values = (word: string, count: number) =>
          entriesFromValues(
            Array.from({ length: count }, (_, i) => ({ level: 'info', event: `purgeword ${word} ${i}`, timestamp: new Date(NOW).toISOString() })),
          ).entries;
        // One transaction, so one block: entries past retention, then fresh ones.
        const [expired, fresh] = await f.storage.write((tx) =>
          tx.ingestLogs([encodeRequest(project.id, NOW - 2 * DAY, values('partword', 3)), encodeRequest(project.id, NOW - DAY / 2, values('freshword', 2))]),
        );
        const expiredIds = expired!.map((o) => (o as { id: number }).id);
        const freshIds = fresh!.map((o) => (o as { id: number }).id);
        const path = f.database.config.dbPath as string;
        assert.equal((await blockSpans(f.database, f.storage, project.id)).length, 1, 'both requests are sealed into one block');

        const report = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
        assert.equal(report.logEntries, 3);
        const words = async (w: string[], prefixes: string[] = []) =>
          (await f.storage.queryLogs({ ...everything(project.id), words: w, prefixes }, { limit: 100 })).map((r) => r.id).sort((a, b) => a - b);
        assert.deepEqual(await words(['partword']), []);
        assert.deepEqual(await words([], ['partw']), []);
        assert.deepEqual(await words(['purgeword']), freshIds);
        assert.deepEqual(await words(['freshword']), freshIds);
        assert.deepEqual(await words(['purgeword', '0']), [freshIds[0]!]);
        assert.ok(
          expiredIds.every((id) => id < freshIds[0]!),
          'request order kept within the project',
        );
        // The block at the cutoff is rewritten with its surviving entries.
        assert.deepEqual(await blockSpans(f.database, f.storage, project.id), [{ first: freshIds[0]!, last: freshIds[1]! }]);
        if (backend === 'file') await assertIndexMatchesEntries(path, 'partword');

        const later = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW + DAY });
        assert.equal(later.logEntries, 2);
        assert.deepEqual(await words(['freshword']), []);
        assert.deepEqual(await blockSpans(f.database, f.storage, project.id), [], 'the emptied block is gone');
        if (backend === 'file') await assertIndexMatchesEntries(path, 'partword');
      } finally {
        await closeFixture(f);
      }
    });
  });

  describe('audit classes', () => {
    const settings: PurgeSettings = { auditRetentionDays: 30, authEventRetentionDays: 7, auditPurgeBatchSize: 3 };

    it('purges each class by its own retention, in chunks, and writes one audit.purged row per class', async () => {
      const f = await openFixture(backend);
      try {
        const authCutoff = NOW - 7 * DAY;
        const adminCutoff = NOW - 30 * DAY;
        await insertAudit(f.storage, 'auth.login_succeeded', authCutoff - 1, 4);
        await insertAudit(f.storage, 'auth.throttled', authCutoff - DAY, 3);
        await insertAudit(f.storage, 'auth.login_failed', authCutoff, 1); // exactly at the cutoff: kept
        await insertAudit(f.storage, 'user.created', authCutoff - DAY, 2); // admin class, within 30 days: kept
        await insertAudit(f.storage, 'project.created', adminCutoff - 1, 5);
        await insertAudit(f.storage, 'audit.purged', adminCutoff - DAY, 1); // admin class too
        await insertAudit(f.storage, 'group.created', adminCutoff, 1); // at the cutoff: kept

        const report = await runPurgePass(f.storage, settings, { now: NOW });
        assert.deepEqual(report.audit, { auth: 7, admin: 6 });

        const purged = await auditRows(f.storage, 'audit.purged');
        assert.equal(purged.length, 2, 'one row per class, none per chunk');
        const byScope = new Map(purged.map((row) => [row.metadata.scope, row]));
        assert.deepEqual(byScope.get('auth')?.metadata, { scope: 'auth', deleted_count: 7, older_than: new Date(authCutoff).toISOString() });
        assert.deepEqual(byScope.get('admin')?.metadata, { scope: 'admin', deleted_count: 6, older_than: new Date(adminCutoff).toISOString() });
        for (const row of purged) {
          assert.equal(row.actorUserId, null);
          assert.equal(row.targetType, 'audit');
          assert.equal(row.targetId, null);
          assert.equal(row.createdAt, NOW);
        }
        const left = (await auditRows(f.storage)).filter((row) => row.action !== 'audit.purged');
        assert.deepEqual(left.map((row) => row.action).sort(), ['auth.login_failed', 'group.created', 'user.created', 'user.created']);

        const again = await runPurgePass(f.storage, settings, { now: NOW });
        assert.deepEqual(again.audit, { auth: 0, admin: 0 });
        assert.equal((await auditRows(f.storage, 'audit.purged')).length, 2, 'no audit.purged row when nothing was removed');
      } finally {
        await closeFixture(f);
      }
    });

    it('keeps an unset class forever and writes nothing for it', async () => {
      const f = await openFixture(backend);
      try {
        await insertAudit(f.storage, 'auth.logged_out', NOW - 1000 * DAY, 2);
        await insertAudit(f.storage, 'team.created', NOW - 1000 * DAY, 2);
        const onlyAuth = await runPurgePass(f.storage, { ...settings, auditRetentionDays: null }, { now: NOW });
        assert.deepEqual(onlyAuth.audit, { auth: 2, admin: 0 });
        const rows = await auditRows(f.storage);
        assert.deepEqual(rows.map((r) => r.action).sort(), ['audit.purged', 'team.created', 'team.created']);
        assert.equal(rows.find((r) => r.action === 'audit.purged')?.metadata.scope, 'auth');

        const nothing = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW + 5000 * DAY });
        assert.deepEqual(nothing.audit, { auth: 0, admin: 0 });
        assert.equal((await auditRows(f.storage)).length, 3);
      } finally {
        await closeFixture(f);
      }
    });

    it('sorts every action of the closed set into exactly one class', () => {
      const all = [...AUDIT_CLASS_ACTIONS.auth, ...AUDIT_CLASS_ACTIONS.admin];
      assert.equal(new Set(all).size, all.length);
      assert.deepEqual([...AUDIT_CLASS_ACTIONS.auth].sort(), ['auth.logged_out', 'auth.login_failed', 'auth.login_succeeded', 'auth.throttled']);
      assert.ok(AUDIT_CLASS_ACTIONS.admin.includes('audit.purged'));
    });
  });

  it('removes expired refresh tokens, revoked or not, and keeps live ones', async () => {
    const f = await openFixture(backend);
    try {
      const user = await f.storage.write((tx) =>
        tx.insertUser({ username: 'tok', passwordHash: 'x', displayName: null, email: null, mustChangePassword: false, isPrimaryAdmin: false, createdAt: NOW }),
      );
      await f.storage.write(async (tx) => {
        await tx.insertRefreshToken({ userId: user.id, tokenHash: 'expired', createdAt: NOW - 40 * DAY, expiresAt: NOW - DAY });
        await tx.insertRefreshToken({ userId: user.id, tokenHash: 'expires-now', createdAt: NOW - 30 * DAY, expiresAt: NOW });
        await tx.insertRefreshToken({ userId: user.id, tokenHash: 'live', createdAt: NOW, expiresAt: NOW + DAY });
        await tx.insertRefreshToken({ userId: user.id, tokenHash: 'revoked-live', createdAt: NOW, expiresAt: NOW + DAY });
        await tx.revokeRefreshToken('revoked-live', NOW);
        await tx.insertRefreshToken({ userId: user.id, tokenHash: 'revoked-expired', createdAt: NOW - 40 * DAY, expiresAt: NOW - DAY });
        await tx.revokeRefreshToken('revoked-expired', NOW - 2 * DAY);
      });
      const report = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
      assert.equal(report.refreshTokens, 3);
      for (const gone of ['expired', 'expires-now', 'revoked-expired']) assert.equal(await f.storage.getRefreshToken(gone), null, gone);
      // A revoked token is kept until it expires: presenting it again must still look like reuse.
      for (const kept of ['live', 'revoked-live']) assert.ok(await f.storage.getRefreshToken(kept), kept);
    } finally {
      await closeFixture(f);
    }
  });

  if (backend === 'server') {
    it('runs one pass at a time across processes: a pass finding the lock taken does nothing', async () => {
      const f = await openFixture(backend);
      const other = await openStorage(f.database.config, { logger: silentLogger });
      try {
        const project = await newProject(f.storage, 1);
        await ingest(f.storage, project.id, NOW - 3 * DAY, 4);
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let entered!: () => void;
        const inside = new Promise<void>((resolve) => (entered = resolve));
        const holder = other.withMaintenanceLock(async () => {
          entered();
          await held;
          return 'held';
        });
        await inside;
        const skipped = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
        assert.equal(skipped.ran, false);
        assert.equal((await storedEntries(f.storage, project.id)).ids.length, 4, 'nothing deleted while another process holds the lock');
        release();
        assert.deepEqual(await holder, { ran: true, result: 'held' });
        const done = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
        assert.equal(done.ran, true);
        assert.equal(done.logEntries, 4);
      } finally {
        await other.close();
        await closeFixture(f);
      }
    });

    it('holds the lock on a connection outside the pool, so a pool of one still serves requests during a pass', async () => {
      const database = await newTestDatabase(backend);
      const storage = await openStorage({ ...database.config, dbServerPoolSize: 1 }, { logger: silentLogger });
      try {
        const outcome = await storage.withMaintenanceLock(async (session) => {
          // Both the session and the pool answer while the lock is held.
          const [viaPool, viaSession] = await Promise.all([storage.countUsers(), session.countUsers()]);
          return viaPool + viaSession;
        });
        assert.deepEqual(outcome, { ran: true, result: 0 });
      } finally {
        await storage.close();
        await database.cleanup();
      }
    });
  }

  if (backend === 'file') {
    it('creates the file with incremental auto-vacuum and gives freed pages back', async () => {
      const f = await openFixture(backend);
      const path = f.database.config.dbPath as string;
      const raw = await openSqliteFile({ filename: path, driver: sqlite3.Database, mode: sqlite3.OPEN_READONLY });
      try {
        assert.equal((await raw.get<{ auto_vacuum: number }>('PRAGMA auto_vacuum'))?.auto_vacuum, 2, 'INCREMENTAL');
        const project = await newProject(f.storage, 1);
        const values = Array.from({ length: 3000 }, (_, i) => ({
          level: 'info',
          event: `bulky ${i}`,
          timestamp: new Date(NOW).toISOString(),
          blob: 'y'.repeat(2000),
        }));
        const { entries } = entriesFromValues(values);
        for (let at = 0; at < entries.length; at += 500) {
          await f.storage.write((tx) => tx.ingestLogs([encodeRequest(project.id, NOW - 2 * DAY, entries.slice(at, at + 500))]));
        }
        const pagesBefore = (await raw.get<{ page_count: number }>('PRAGMA page_count'))!.page_count;
        const report = await runPurgePass(f.storage, NO_AUDIT_RETENTION, { now: NOW });
        assert.equal(report.logEntries, 3000);
        assert.equal(report.freePagesLeft, 0);
        const pagesAfter = (await raw.get<{ page_count: number }>('PRAGMA page_count'))!.page_count;
        assert.ok(pagesAfter < pagesBefore / 2, `pages ${pagesBefore} → ${pagesAfter}`);
        assert.equal((await raw.get<{ freelist_count: number }>('PRAGMA freelist_count'))!.freelist_count, 0);
        assert.equal((await raw.get<{ integrity_check: string }>('PRAGMA integrity_check'))!.integrity_check, 'ok');
        // The file itself shrinks once the last connection checkpoints the WAL into it.
        await raw.close();
        await f.storage.close();
        const fileBytes = statSync(path).size;
        assert.ok(fileBytes <= pagesAfter * 4096, `file ${fileBytes} bytes for ${pagesAfter} pages`);
      } finally {
        await raw.close().catch(() => undefined);
        await f.storage.close();
        await f.database.cleanup();
      }
    });
  }
});
