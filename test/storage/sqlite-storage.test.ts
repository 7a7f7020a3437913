/**
 * What only the file backend promises, beyond the shared contract suite:
 * connection pragmas (WAL, synchronous=FULL, foreign keys, read-only
 * readers), the log tables of schema v1, the migration step machinery, and
 * how `close()` treats a transaction in flight.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'sqlite';
import { silentLogger } from '../../lib/core/logger.js';
import { closeConnection, connectionExecutor, openReader, openWriter, type SqlExecutor } from '../../lib/storage/sqlite/connection.js';
import * as LogSql from '../../lib/storage/sqlite/log-sql.js';
import { logsAfter as sqliteLogsAfter, queryLogs as sqliteQueryLogs } from '../../lib/storage/sqlite/log-entries.js';
import { SQLITE_MIGRATIONS, migrate, readSchemaVersion } from '../../lib/storage/sqlite/migrations.js';
import { openSqliteStorage } from '../../lib/storage/sqlite/sqlite-storage.js';
import { SCHEMA_VERSION, type Storage } from '../../lib/storage/storage.js';
import type { LogSelection } from '../../lib/storage/types-logs.js';
import { SchemaTooNewError, StorageUnavailableError } from '../../lib/core/errors.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { assertV2Histograms, v2Entries } from '../support/schema-v2.js';

const dirs: string[] = [];
const opened: { close(): Promise<void> }[] = [];
after(async () => {
  for (const c of opened) await c.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'logkeep-sqlite-'));
  dirs.push(dir);
  return join(dir, 'logkeep.db');
}

async function openFresh(readPoolSize = 2, sealing = true): Promise<{ path: string; storage: Storage }> {
  const path = newPath();
  const storage = await openSqliteStorage({ path, readPoolSize, logger: silentLogger, sealing });
  opened.push(storage);
  return { path, storage };
}

async function pragma(db: Database, name: string): Promise<unknown> {
  const row = await db.get<Record<string, unknown>>(`PRAGMA ${name}`);
  return row ? Object.values(row)[0] : undefined;
}

describe('sqlite connections', () => {
  it('the writer runs WAL with synchronous=FULL, foreign keys and a busy timeout', async () => {
    const writer = await openWriter(newPath());
    opened.push(writer);
    assert.equal(await pragma(writer, 'journal_mode'), 'wal');
    assert.equal(await pragma(writer, 'synchronous'), 2); // FULL
    assert.equal(await pragma(writer, 'foreign_keys'), 1);
    assert.equal(await pragma(writer, 'busy_timeout'), 5000);
  });

  it('readers are read-only with foreign keys and a busy timeout', async () => {
    const path = newPath();
    const writer = await openWriter(path);
    opened.push(writer);
    await migrate(writer);
    const reader = await openReader(path);
    opened.push(reader);
    assert.equal(await pragma(reader, 'query_only'), 1);
    assert.equal(await pragma(reader, 'foreign_keys'), 1);
    assert.equal(await pragma(reader, 'busy_timeout'), 5000);
    await assert.rejects(reader.run('INSERT INTO org_groups (name, name_lower, created_at) VALUES (?, ?, ?)', ['g', 'g', 1]), /SQLITE_READONLY/);
  });

  it('foreign keys are enforced through the storage', async () => {
    const { storage } = await openFresh();
    await assert.rejects(
      storage.write((tx) => tx.insertTeam(12345, 'orphan', 1)),
      /FOREIGN KEY/,
    );
  });

  it('a path that is not a database file is StorageUnavailableError', async () => {
    const path = newPath();
    writeFileSync(path, 'this is not a database, just some text that is long enough to have a header'.repeat(20));
    await assert.rejects(openSqliteStorage({ path, readPoolSize: 1, logger: silentLogger }), StorageUnavailableError);
    await assert.rejects(openSqliteStorage({ path: '', readPoolSize: 1, logger: silentLogger }), StorageUnavailableError);
  });
});

describe('sqlite schema v1', () => {
  it('creates log_entries, the sealed tables, and no FTS5 block index', async () => {
    const path = newPath();
    const writer = await openWriter(path);
    opened.push(writer);
    assert.equal(await migrate(writer), SCHEMA_VERSION);
    // The per-entry index of earlier drafts is gone.
    assert.equal(await writer.get(`SELECT name FROM sqlite_master WHERE name IN ('log_terms', 'log_entries_project_level')`), undefined);
    await writer.exec('BEGIN');
    await writer.run('INSERT INTO org_groups (name, name_lower, created_at) VALUES (?, ?, ?)', ['g', 'g', 1]);
    await writer.run('INSERT INTO projects (group_id, name, name_lower, retention_days, created_at) VALUES (1, ?, ?, 30, 1)', ['p', 'p']);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const entry = await writer.get<{ id: number }>(
        'INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body) VALUES (1, 1, 1, 2, 2, ?) RETURNING id',
        ['{}'],
      );
      assert.ok(entry);
      ids.push(entry.id);
    }
    const [firstId, , lastId] = ids as [number, number, number];
    void firstId;
    void lastId;
    // Sealed storage (version 4): the FTS5 block index is gone, the sealed tables are there.
    const names = (await writer.all<{ name: string }[]>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)).map((r) => r.name);
    for (const gone of ['log_blocks', 'log_block_terms']) assert.ok(!names.includes(gone), gone);
    for (const table of ['log_tails', 'log_sealed', 'log_filter_shards', 'log_dictionaries']) assert.ok(names.includes(table), table);
    await writer.exec('COMMIT');
    await assert.rejects(writer.run('INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body) VALUES (1, 1, 1, 5, 2, ?)', ['{}']), /CHECK/);
  });

  it('migrates a version-2 database holding entries: the rollup it fills (minutes and hours) counts what the entries count', async () => {
    const path = newPath();
    const writer = await openWriter(path);
    assert.equal(await migrate(writer, { target: 2 }), 2);
    const entries = v2Entries();
    await writer.exec('BEGIN');
    await writer.run('INSERT INTO org_groups (name, name_lower, created_at) VALUES (?, ?, ?)', ['g', 'g', 1]);
    await writer.run(`INSERT INTO projects (group_id, name, name_lower, retention_days, created_at) VALUES (1, 'p', 'p', 30, 1), (1, 'q', 'q', 30, 1)`);
    await writer.run(
      `INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body) SELECT value ->> 0, 1, value ->> 1, value ->> 2, 2, '{}' FROM json_each(?)`,
      [JSON.stringify(entries.map((e) => [e.project + 1, e.ts, e.level]))],
    );
    await writer.exec('COMMIT');
    await writer.close();
    const storage = await openSqliteStorage({ path, readPoolSize: 1, logger: silentLogger });
    opened.push(storage);
    assert.equal(await storage.schemaVersion(), SCHEMA_VERSION);
    await assertV2Histograms(storage, [1, 2], entries);
  });

  it('upgrades a version-3 database in place: every entry is found before its conversion, during it, and after', async () => {
    const path = newPath();
    const writer = await openWriter(path);
    assert.equal(await migrate(writer, { target: 3 }), 3);
    const bodies = Array.from({ length: 2600 }, (_, i) =>
      JSON.stringify({
        level: ['debug', 'info', 'warning', 'error'][i % 4],
        event: `upgrade e${i} w${i % 13}`,
        timestamp: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
        request_id: `r-${i}`,
      }),
    );
    await writer.exec('BEGIN');
    await writer.run('INSERT INTO org_groups (name, name_lower, created_at) VALUES (?, ?, ?)', ['g', 'g', 1]);
    await writer.run(`INSERT INTO projects (group_id, name, name_lower, retention_days, created_at) VALUES (1, 'p', 'p', 30, 1)`);
    await writer.run(
      `INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body) SELECT 1, 1000 + key, ?2 + key * 1000, key % 4, length(CAST(value AS BLOB)), value FROM json_each(?1)`,
      [JSON.stringify(bodies), Date.UTC(2025, 0, 1)],
    );
    const total = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);
    await writer.run('UPDATE projects SET entry_count = ?, total_bytes = ? WHERE id = 1', [bodies.length, total]);
    await writer.exec('COMMIT');
    await writer.close();
    const storage = await openSqliteStorage({ path, readPoolSize: 1, logger: silentLogger, sealing: false });
    opened.push(storage);
    assert.equal(await storage.schemaVersion(), SCHEMA_VERSION);
    const base: LogSelection = { projectIds: [1], minLevel: 0, from: null, to: null, words: [], prefixes: [], exact: [] };
    const everything = async () => {
      const out: string[] = [];
      let beforeId: number | undefined;
      for (;;) {
        const rows = await storage.queryLogs(base, { limit: 700, ...(beforeId === undefined ? {} : { beforeId }) });
        out.push(...rows.map((r) => r.body));
        if (rows.length < 700) return out.reverse();
        beforeId = rows[rows.length - 1]!.id;
      }
    };
    const probes = async () => ({
      word: (await storage.queryLogs({ ...base, words: ['w7'] }, { limit: 300 })).map((r) => r.id),
      exact: (await storage.queryLogs({ ...base, exact: [{ path: ['request_id'], value: 'r-1234' }] }, { limit: 5 })).map((r) => r.body),
      after: (await storage.logsAfter(base, 1000, 100)).map((r) => r.id),
    });
    // Before the conversion: every entry is in the tail, counted in log_tails.
    assert.deepEqual(await everything(), bodies);
    const expected = await probes();
    assert.equal(expected.word.length, 200);
    assert.deepEqual(expected.exact, [bodies[1234]]);
    // The conversion: part of it, then all of it.
    await storage.sealNow!();
    assert.deepEqual(await everything(), bodies);
    assert.deepEqual(await probes(), expected);
    const project = await storage.getProject(1);
    assert.deepEqual([project!.entryCount, project!.totalBytes], [bodies.length, total]);
  });

  it('runs only the steps above the stored version, in one transaction', async () => {
    const writer = await openWriter(newPath());
    opened.push(writer);
    await migrate(writer);
    const ran: number[] = [];
    const next = SCHEMA_VERSION + 1;
    const v2 = {
      version: next,
      async up(db: Database) {
        ran.push(next);
        await db.exec('CREATE TABLE added_in_v2 (x INTEGER)');
      },
    };
    assert.equal(await migrate(writer, { migrations: [...SQLITE_MIGRATIONS, v2], target: next }), next);
    assert.deepEqual(ran, [next]);
    assert.equal(await readSchemaVersion(writer), next);
    // Already there: nothing runs again.
    await migrate(writer, { migrations: [...SQLITE_MIGRATIONS, v2], target: next });
    assert.deepEqual(ran, [next]);
    // Newer than the target: refused, nothing changed.
    await assert.rejects(migrate(writer), SchemaTooNewError);
    assert.equal(await readSchemaVersion(writer), next);
  });

  it('a failing step rolls back every step of that run', async () => {
    const writer = await openWriter(newPath());
    opened.push(writer);
    await migrate(writer);
    const v2 = { version: SCHEMA_VERSION + 1, up: (db: Database) => db.exec('CREATE TABLE partial_v2 (x INTEGER)') };
    const v3 = {
      version: SCHEMA_VERSION + 2,
      up: async () => {
        throw new Error('step 3 fails');
      },
    };
    await assert.rejects(migrate(writer, { migrations: [...SQLITE_MIGRATIONS, v2, v3], target: SCHEMA_VERSION + 2 }), /step 3 fails/);
    assert.equal(await readSchemaVersion(writer), SCHEMA_VERSION);
    assert.equal(await writer.get(`SELECT name FROM sqlite_master WHERE name = 'partial_v2'`), undefined);
  });
});

describe('sqlite storage lifecycle', () => {
  it('close() waits for the transaction in flight, which commits; later writes are refused', async () => {
    const { path, storage } = await openFresh();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inTransaction = new Promise<void>((resolve) => (started = resolve));
    const writing = storage.write(async (tx) => {
      const group = await tx.insertGroup('in flight', 1);
      started();
      await gate;
      return group;
    });
    await inTransaction;
    let closed = false;
    const closing = storage.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(closed, false, 'close() returned while a transaction was open');
    release();
    const group = await writing;
    await closing;
    assert.equal(closed, true);
    await storage.close(); // idempotent
    await assert.rejects(
      storage.write(async () => 1),
      StorageUnavailableError,
    );

    const reopened = await openSqliteStorage({ path, readPoolSize: 0, logger: silentLogger });
    opened.push(reopened);
    assert.deepEqual(await reopened.getGroup(group.id), group);
  });

  it('with no reader connections, every verb still works (reads wait between transactions)', async () => {
    const { storage } = await openFresh(0);
    const user = await storage.write((tx) =>
      tx.insertUser({ username: 'solo', passwordHash: 'h', displayName: null, email: null, mustChangePassword: false, isPrimaryAdmin: false, createdAt: 1 }),
    );
    const reads = await Promise.all([storage.getUserById(user.id), storage.countUsers(), storage.schemaVersion()]);
    assert.deepEqual(reads, [user, 1, SCHEMA_VERSION]);
  });

  it('refuses a read pool size outside 0–16', async () => {
    await assert.rejects(openSqliteStorage({ path: newPath(), readPoolSize: 17, logger: silentLogger }), RangeError);
  });
});

describe('sqlite reads across several projects', () => {
  // Each project is read by its own statement, perhaps on its own reader
  // connection in a snapshot of its own. Here project A's statement runs
  // before two commits (A's entry, then B's) and project B's after them, as
  // two readers of a pool may: the answer must not hold B's entry without
  // A's older one, or a stream would step past A's entry for good.
  async function race(read: 'after' | 'page'): Promise<{ first: number[]; all: number[] }> {
    const { path, storage } = await openFresh(0);
    const group = await storage.write((tx) => tx.insertGroup('g', 0));
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) =>
        storage.write((tx) => tx.insertProject({ groupId: group.id, name, retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: 0 })),
      ),
    );
    const one = entriesFromValues([{ level: 'info', event: 'tick', timestamp: '2025-01-01T00:00:00Z' }]).entries;
    const ingest = (projectId: number) => storage.write((tx) => tx.ingestLogs([encodeRequest(projectId, 0, one)]));
    await ingest(a!.id);
    await ingest(b!.id);
    const readers = [await openReader(path), await openReader(path)];
    opened.push(...readers.map((db) => ({ close: () => closeConnection(db) })));
    const [early, late] = readers.map(connectionExecutor) as [SqlExecutor, SqlExecutor];
    const perProject = read === 'after' ? LogSql.QUERY_PROJECT_LOGS_ASC : LogSql.QUERY_PROJECT_LOGS;
    let earlyRead: Promise<unknown> | null = null;
    const routed: SqlExecutor = {
      get: (sql, params) => early.get(sql, params),
      run: (sql, params) => early.run(sql, params),
      all: (sql, params) => {
        if (sql !== perProject || params?.[0] !== b!.id) return (earlyRead = early.all(sql, params));
        return (async () => {
          await earlyRead;
          await ingest(a!.id);
          await ingest(b!.id);
          return late.all(sql, params);
        })();
      },
    };
    const selection: LogSelection = { projectIds: [a!.id, b!.id], minLevel: 0, from: null, to: null, words: [], prefixes: [], exact: [] };
    const first = read === 'after' ? await sqliteLogsAfter(routed, selection, 0, 100) : await sqliteQueryLogs(routed, selection, { limit: 100 });
    const all = (await storage.logsAfter(selection, 0, 100)).map((r) => r.id);
    return { first: first.map((r) => r.id), all };
  }

  it('logsAfter answers a gapless run from its cursor', async () => {
    const { first, all } = await race('after');
    assert.equal(all.length, 4);
    assert.ok(first.length > 0);
    assert.deepEqual(first, all.slice(0, first.length));
  });

  it('a newest page holds every entry below its newest one', async () => {
    const { first, all } = await race('page');
    assert.equal(all.length, 4);
    assert.ok(first.length > 0);
    assert.deepEqual(first, all.filter((id) => id <= first[0]!).reverse());
  });
});

describe('sqlite sealed storage', () => {
  it('retention drops a wholly expired block and rewrites the one at the cutoff, keeping usage exact', async () => {
    const { storage } = await openFresh(1, false);
    const group = await storage.write((tx) => tx.insertGroup('g', 0));
    const project = await storage.write((tx) =>
      tx.insertProject({ groupId: group.id, name: 'p', retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: 0 }),
    );
    const batch = (n: number, word: string) =>
      entriesFromValues(Array.from({ length: n }, (_, i) => ({ level: 'info', event: `${word} n${i}`, timestamp: '2025-01-01T00:00:00Z' }))).entries;
    // 1,024 received at 1000 (one full block), then 100 at 1000 and 100 at 5000 (one block, partly expired at 2000).
    await storage.write((tx) => tx.ingestLogs([encodeRequest(project.id, 1000, batch(1024, 'old'))]));
    await storage.write((tx) => tx.ingestLogs([encodeRequest(project.id, 1000, batch(100, 'old'))]));
    await storage.write((tx) => tx.ingestLogs([encodeRequest(project.id, 5000, batch(100, 'new'))]));
    await storage.sealNow!();
    const before = await storage.getProject(project.id);
    assert.equal(before!.entryCount, 1224);
    let purged = 0;
    for (;;) {
      const chunk = await storage.write((tx) => tx.purgeLogEntries(project.id, 2000, 500));
      if (chunk.entries === 0) break;
      purged += chunk.entries;
    }
    assert.equal(purged, 1124);
    const after = await storage.getProject(project.id);
    assert.equal(after!.entryCount, 100);
    const all = await storage.queryLogs({ projectIds: [project.id], minLevel: 0, from: null, to: null, words: [], prefixes: [], exact: [] }, { limit: 200 });
    assert.equal(all.length, 100);
    assert.ok(all.every((r) => r.receivedAt === 5000 && r.body.includes('new')));
    const words = await storage.queryLogs(
      { projectIds: [project.id], minLevel: 0, from: null, to: null, words: ['old'], prefixes: [], exact: [] },
      { limit: 200 },
    );
    assert.equal(words.length, 0);
    assert.equal(
      after!.totalBytes,
      all.reduce((n, r) => n + Buffer.byteLength(r.body), 0),
    );
  });

  it('answers the same before sealing, after, and with entries on both sides', async () => {
    const { storage } = await openFresh(1, false);
    const group = await storage.write((tx) => tx.insertGroup('g', 0));
    const project = await storage.write((tx) =>
      tx.insertProject({ groupId: group.id, name: 'p', retentionDays: 1, maxEntries: null, maxBytes: null, createdAt: 0 }),
    );
    const batch = (from: number, n: number) =>
      entriesFromValues(
        Array.from({ length: n }, (_, k) => {
          const i = from + k;
          return {
            level: (['debug', 'info', 'warning', 'error'] as const)[i % 4],
            event: `tick${i} other${i % 7}`,
            timestamp: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
            context: { user: { id: i % 100 } },
          };
        }),
      ).entries;
    await storage.write((tx) => tx.ingestLogs([encodeRequest(project.id, 0, batch(0, 1500))]));
    const base: LogSelection = { projectIds: [project.id], minLevel: 0, from: null, to: null, words: [], prefixes: [], exact: [] };
    const selections: LogSelection[] = [
      base,
      { ...base, words: ['other3'] },
      { ...base, prefixes: ['tic'] },
      { ...base, minLevel: 2 },
      { ...base, exact: [{ path: ['context', 'user', 'id'], value: '57' }] },
      { ...base, words: ['tick1234'] },
      { ...base, from: Date.UTC(2025, 0, 1) + 100_000, to: Date.UTC(2025, 0, 1) + 1_300_000, words: ['other5'] },
    ];
    const answers = async () =>
      Promise.all(
        selections.map(async (sel) => ({
          page: (await storage.queryLogs(sel, { limit: 60 })).map((r) => r.id),
          deep: (await storage.queryLogs(sel, { limit: 40, beforeId: 900 })).map((r) => r.id),
          after: (await storage.logsAfter(sel, 700, 50)).map((r) => r.id),
          bodies: (await storage.queryLogs(sel, { limit: 5 })).map((r) => r.body),
        })),
      );
    const unsealed = await answers();
    assert.ok(storage.sealNow);
    await storage.sealNow();
    const sealedRows = await storage.write((tx) => tx.lastLogIdOf([project.id]));
    assert.equal(sealedRows, 1500);
    assert.deepEqual(await answers(), unsealed);
    // Entries on both sides: a new tail above sealed blocks.
    await storage.write((tx) => tx.ingestLogs([encodeRequest(project.id, 0, batch(1500, 300))]));
    const mixed = await answers();
    assert.equal((await storage.queryLogs(base, { limit: 200 }))[0]!.id, 1800);
    await storage.sealNow();
    assert.deepEqual(await answers(), mixed);
    const grid = { origin: Date.UTC(2025, 0, 1), stepMs: 90_000, count: 30 };
    const range = { ...base, from: Date.UTC(2025, 0, 1) + 1500, to: Date.UTC(2025, 0, 1) + 2_000_500 };
    const counts = await storage.logHistogram(range, grid);
    const filtered = await storage.logHistogram({ ...range, words: ['other3'] }, grid);
    let total = 0;
    for (const row of counts!) for (const n of row) total += n;
    assert.equal(total, 1798);
    let other3 = 0;
    for (const row of filtered!) for (const n of row) other3 += n;
    assert.equal(other3, Array.from({ length: 1800 }, (_, i) => i).filter((i) => i >= 2 && i <= 2000 && i % 7 === 3).length);
  });
});
