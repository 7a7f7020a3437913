/**
 * Sealed storage on the `server` backend (docs/storage-format.md): the
 * schema's keys (every primary key and unique index of a log table leads
 * with project_id, what distributing by project needs), sealing runs of
 * the tail into blocks in one transaction (every entry in exactly one
 * place, byte for byte), several storages sealing one database at once
 * while ingesting, retention of sealed blocks with usage and the rollup
 * kept exact, and the upgrade from the previous schema.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pgPromise from 'pg-promise';
import { silentLogger } from '../../lib/core/logger.js';
import { POSTGRES_MIGRATIONS, readSchemaVersion, SEALED_SCHEMA_VERSION } from '../../lib/storage/postgres/migrations.js';
import { runMigrations } from '../../lib/storage/schema/run-migrations.js';
import { openPostgresStorage } from '../../lib/storage/postgres/postgres-storage.js';
import type { PostgresStorageOptions, SqlExecutor } from '../../lib/storage/postgres/connection.js';
import { dueProjects, readRun, sealDue, sealProject, SEAL_MAX_TAIL_AGE_MS } from '../../lib/storage/postgres/sealing.js';
import { decodeSealedBlock, readSealedHeader, SEAL_MAX_BYTES, SEAL_MAX_ENTRIES } from '../../lib/storage/log-index/sealed-block.js';
import { blockFrames, HEAD_BYTES } from '../../lib/storage/postgres/block-frames.js';
import { FILTER_SHARDS } from '../../lib/storage/log-index/block-filter.js';
import { encodeRequest } from '../../lib/storage/log-index/encoded-entries.js';
import { runPurgePass, type PurgeSettings } from '../../lib/ops/purge.js';
import type { Storage } from '../../lib/storage/storage.js';
import type { LogSelection } from '../../lib/storage/types-logs.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { PG, createThrowawayDatabase, endPostgresAdmin, postgresSkipReason, type ThrowawayDatabase } from '../support/postgres.js';

const unavailable = await postgresSkipReason();
const DAY_MS = 86_400_000;
const NO_AUDIT_RETENTION: PurgeSettings = { auditRetentionDays: null, authEventRetentionDays: null, auditPurgeBatchSize: 1000 };

const databases: ThrowawayDatabase[] = [];
const storages: Storage[] = [];
const rawPgp = pgPromise({ noWarnings: true });
after(async () => {
  await Promise.all(storages.map((s) => s.close()));
  await Promise.all(databases.map((db) => db.drop()));
  rawPgp.end();
  endPostgresAdmin();
});

function options(database: string): PostgresStorageOptions {
  return {
    host: PG.host,
    port: PG.port,
    database,
    user: PG.user,
    password: PG.password,
    poolSize: 4,
    sslMode: 'disable',
    logger: silentLogger,
    sealing: false,
  };
}

async function newDatabase(): Promise<ThrowawayDatabase> {
  const db = await createThrowawayDatabase();
  databases.push(db);
  return db;
}

async function open(database: string, sealing = false): Promise<Storage> {
  const storage = await openPostgresStorage({ ...options(database), sealing });
  storages.push(storage);
  return storage;
}

function raw(database: string): SqlExecutor {
  return rawPgp({ host: PG.host, port: PG.port, user: PG.user, password: PG.password, database, max: 4, application_name: 'logkeep-test' });
}

/** The storage's pool (what a sealer runs on). */
const poolOf = (storage: Storage) => (storage as unknown as { db: SqlExecutor }).db;
const sealNow = (storage: Storage) => storage.sealNow!();
/** How the storage's background sealer came by its runs (log-index/sealer.ts). */
const runsOf = (storage: Storage) => (storage as unknown as { sealer: { runs: { remembered: number; read: number; refused: number } } }).sealer.runs;

async function newProject(storage: Storage, name: string, retentionDays = 30) {
  const group = await storage.write((tx) => tx.insertGroup(`g-${name}`, 0));
  return storage.write((tx) => tx.insertProject({ groupId: group.id, name, retentionDays, maxEntries: null, maxBytes: null, createdAt: 0 }));
}

/** Varied entries: words, numbers, nested context, non-ASCII, keys in no particular order. */
function values(n: number, from: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    return k % 3 === 0
      ? {
          timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, k)).toISOString(),
          level: 'error',
          event: `failed ${k} ünïcode`,
          context: { user: { id: k % 97 }, trace: `t-${k}` },
        }
      : {
          level: k % 3 === 1 ? 'info' : 'debug',
          timestamp: new Date(Date.UTC(2025, 0, 1, 0, 1, k)).toISOString(),
          event: `tick ${k}`,
          request_id: `r-${k}`,
          ms: k * 7,
        };
  });
}

async function ingest(storage: Storage, projectId: number, n: number, from: number, receivedAt: number): Promise<number[]> {
  const [outcomes] = await storage.write((tx) => tx.ingestLogs([encodeRequest(projectId, receivedAt, entriesFromValues(values(n, from)).entries)]));
  return outcomes!.map((o) => ('id' in o ? o.id : assert.fail('not admitted')));
}

type Stored = { id: number; body: string; place: 'tail' | 'block' };

/** Every entry of a project wherever it is: its tail rows and its decoded blocks. */
async function everything(db: SqlExecutor, projectId: number): Promise<Stored[]> {
  const tail = await db.any<{ id: number; body: string }>('SELECT id, body FROM log_entries WHERE project_id = $1', [projectId]);
  const blocks = await db.any<{ block: Buffer; dictionaryId: number }>('SELECT block, dictionary_id AS "dictionaryId" FROM log_sealed WHERE project_id = $1', [
    projectId,
  ]);
  const out: Stored[] = tail.map((r) => ({ id: Number(r.id), body: r.body, place: 'tail' }));
  for (const b of blocks) {
    const dict = await db.oneOrNone<{ bytes: Buffer }>('SELECT bytes FROM log_dictionaries WHERE project_id = $1 AND id = $2', [projectId, b.dictionaryId]);
    const dictionary = dict === null ? null : { id: b.dictionaryId, bytes: new Uint8Array(dict.bytes) };
    for (const e of decodeSealedBlock(b.block, dictionary)) out.push({ id: e.id, body: e.body, place: 'block' });
  }
  return out.sort((a, b) => a.id - b.id);
}

/** The bodies as the entries were submitted (prepared as ingestion does), in order. */
const submitted = (n: number, from: number) => entriesFromValues(values(n, from)).entries.map((e) => e.body);

async function usage(db: SqlExecutor, projectId: number) {
  const row = await db.one<{ entries: number; bytes: number; rollup: number }>(
    `SELECT entry_count AS entries, total_bytes AS bytes,
       (SELECT COALESCE(sum(n), 0)::bigint FROM log_rollup WHERE project_id = $1 AND span = 60000) AS rollup
     FROM projects WHERE id = $1`,
    [projectId],
  );
  return { entries: Number(row.entries), bytes: Number(row.bytes), rollup: Number(row.rollup) };
}

const byteSum = (bodies: readonly string[]) => bodies.reduce((n, b) => n + Buffer.byteLength(b, 'utf8'), 0);

describe('postgres sealed storage', { skip: unavailable ?? false }, () => {
  it('leads every primary key and unique index of a log table with project_id (what distributing by project needs)', async () => {
    const db = await newDatabase();
    await open(db.name);
    const rows = await raw(db.name).any<{ table: string; index: string; first: string }>(
      `SELECT t.relname AS table, i.relname AS index, a.attname AS first
       FROM pg_index AS x
       JOIN pg_class AS t ON t.oid = x.indrelid
       JOIN pg_class AS i ON i.oid = x.indexrelid
       JOIN pg_namespace AS n ON n.oid = t.relnamespace
       JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
       WHERE n.nspname = current_schema() AND t.relname LIKE 'log\\_%' AND (x.indisunique OR x.indisprimary)
       ORDER BY 1, 2`,
    );
    const tables = new Set(rows.map((r) => r.table));
    for (const table of ['log_entries', 'log_tails', 'log_sealed', 'log_filter_shards', 'log_dictionaries', 'log_rollup'])
      assert.ok(tables.has(table), `${table} has a primary key`);
    for (const r of rows) assert.equal(r.first, 'project_id', `${r.table}.${r.index} leads with project_id`);
    // Constraints too (a unique constraint is an index above; this also covers exclusion constraints).
    const constraints = await raw(db.name).any<{ name: string; first: string }>(
      `SELECT c.conname AS name, a.attname AS first FROM pg_constraint AS c
       JOIN pg_class AS t ON t.oid = c.conrelid
       JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = c.conkey[1]
       WHERE t.relname LIKE 'log\\_%' AND c.contype IN ('p', 'u', 'x')`,
    );
    assert.ok(constraints.length >= 6);
    for (const c of constraints) assert.equal(c.first, 'project_id', c.name);
    const storage = await raw(db.name).one<{ storage: string }>(
      `SELECT a.attstorage AS storage FROM pg_attribute AS a WHERE a.attrelid = 'log_sealed'::regclass AND a.attname = 'block'`,
    );
    assert.equal(storage.storage, 'e', 'blocks are kept out of line, not compressed again');
    const tailKeys = await raw(db.name).any(`SELECT conname FROM pg_constraint WHERE conrelid = 'log_entries'::regclass AND contype = 'f'`);
    assert.deepEqual(tailKeys, [], 'the tail keeps no foreign key (checked per inserted row)');
  });

  it('seals full runs, then an old part-filled tail: every entry in exactly one place, byte for byte', async () => {
    const db = await newDatabase();
    const storage = await open(db.name);
    const pool = poolOf(storage);
    const p = await newProject(storage, 'p');
    const q = await newProject(storage, 'q');
    const now = 1_750_000_000_000;
    const ids = [...(await ingest(storage, p.id, 1500, 0, now)), ...(await ingest(storage, p.id, 1100, 1500, now))];
    await ingest(storage, q.id, 10, 0, now);
    const before = await usage(pool, p.id);

    assert.deepEqual(await dueProjects(pool, now), [p.id], 'only a tail holding a full run is due while young');
    assert.equal(await sealDue(pool, { now: () => now }), 2 * SEAL_MAX_ENTRIES);
    const tails = await pool.any<{ project: number; entries: number }>('SELECT project_id AS project, entries FROM log_tails ORDER BY project_id');
    assert.deepEqual(
      tails.map((t) => [Number(t.project), Number(t.entries)]),
      [
        [p.id, 2600 - 2 * SEAL_MAX_ENTRIES],
        [q.id, 10],
      ],
    );
    let stored = await everything(pool, p.id);
    assert.deepEqual(
      stored.map((s) => s.id),
      ids,
      'every id once',
    );
    assert.deepEqual(
      stored.map((s) => s.body),
      [...submitted(1500, 0), ...submitted(1100, 1500)],
      'bodies byte for byte, in id order',
    );
    assert.equal(stored.filter((s) => s.place === 'block').length, 2 * SEAL_MAX_ENTRIES);
    assert.deepEqual(
      stored.filter((s) => s.place === 'tail').map((s) => s.id),
      ids.slice(2 * SEAL_MAX_ENTRIES),
      'the oldest runs were sealed first',
    );

    // Later than the tail's age bound: the part-filled rest of both projects is sealed too.
    const later = now + SEAL_MAX_TAIL_AGE_MS + 1;
    assert.equal(await sealDue(pool, { now: () => later }), 2600 - 2 * SEAL_MAX_ENTRIES + 10);
    stored = await everything(pool, p.id);
    assert.deepEqual(
      stored.map((s) => s.id),
      ids,
    );
    assert.ok(stored.every((s) => s.place === 'block'));
    assert.deepEqual(await dueProjects(pool, later), []);
    assert.deepEqual(await sealProject(pool, p.id, { now: later }), { sealed: false, reason: 'nothing' });

    const blocks = await pool.any<{ entries: number; bytes: number; shards: number; firstId: number; lastId: number }>(
      `SELECT entries, bytes, first_id AS "firstId", last_id AS "lastId",
         (SELECT count(*) FROM log_filter_shards AS f WHERE f.project_id = s.project_id AND f.block_last_id = s.last_id)::integer AS shards
       FROM log_sealed AS s WHERE project_id = $1 ORDER BY last_id`,
      [p.id],
    );
    assert.deepEqual(
      blocks.map((b) => Number(b.entries)),
      [SEAL_MAX_ENTRIES, SEAL_MAX_ENTRIES, 2600 - 2 * SEAL_MAX_ENTRIES],
    );
    assert.ok(blocks.every((b) => b.shards === FILTER_SHARDS));
    assert.equal(
      blocks.reduce((n, b) => n + Number(b.bytes), 0),
      before.bytes,
      "blocks' bytes add up to the project's usage",
    );
    assert.deepEqual(await usage(pool, p.id), before, 'sealing changes neither usage nor the rollup');
    const dictionaries = await pool.one<{ n: number }>('SELECT count(*)::integer AS n FROM log_dictionaries WHERE project_id = $1', [p.id]);
    assert.equal(dictionaries.n, 1, 'one dictionary per project, taken when its first block was sealed');
    const tail = await pool.one<{ entries: number; oldest: number | null }>(
      'SELECT entries, oldest_received_at AS oldest FROM log_tails WHERE project_id = $1',
      [p.id],
    );
    assert.deepEqual([Number(tail.entries), tail.oldest], [0, null]);
  });

  it('seals full runs from the rows it committed, and from the tail when another process wrote rows between them', async () => {
    const db = await newDatabase();
    const sealing = await open(db.name, true);
    const other = await open(db.name);
    const pool = poolOf(sealing);
    const p = await newProject(sealing, 'p');
    // Received now: the background sealer seals only full runs (an older tail would be sealed part-filled on its timer).
    const now = Date.now();
    const ids: number[] = [];
    const bodies: string[] = [];
    // A minute ahead, so that the retention pass below (entries received before `now`) takes only the entries received at `now` - 1.
    const add = async (storage: Storage, n: number, receivedAt = now + 60_000) => {
      ids.push(...(await ingest(storage, p.id, n, bodies.length, receivedAt)));
      bodies.push(...submitted(n, bodies.length));
    };
    // Alone, full runs come from memory.
    await add(sealing, 700);
    await add(sealing, 700);
    await sealNow(sealing);
    assert.deepEqual({ ...runsOf(sealing) }, { remembered: 1, read: 1, refused: 0 }, 'one full run from memory, the part-filled rest read from the tail');
    // Another process's rows between this one's: the seal from memory is refused, the tail is read instead.
    await add(sealing, 600);
    await add(other, 300);
    await add(sealing, 600);
    await sealNow(sealing);
    const runs = { ...runsOf(sealing) };
    assert.equal(runs.refused, 1, "the run from memory missed the other process's rows");
    assert.equal(runs.remembered, 1);
    // Memory matches the tail again once a seal leaves it holding what memory holds.
    await add(sealing, 1100);
    await sealNow(sealing);
    assert.equal(runsOf(sealing).remembered, 2, 'memory is trusted again');
    assert.equal(runsOf(sealing).refused, 1);
    // As many rows in the tail as in memory, but not the same ones (retention took some of this process's, another process added others): refused too.
    await add(sealing, 600, now - 1);
    await add(other, 300);
    const purged = await other.write((tx) => tx.purgeLogEntries(p.id, now, 300));
    assert.equal(purged.entries, 300);
    const gone = ids.length - 900;
    ids.splice(gone, 300);
    bodies.splice(gone, 300);
    await add(sealing, 724);
    await sealNow(sealing);
    assert.equal(runsOf(sealing).refused, 2, "a run of the right length but not the tail's rows is refused");

    const stored = await everything(pool, p.id);
    assert.deepEqual(
      stored.map((s) => s.id),
      ids,
      'every id once',
    );
    assert.deepEqual(
      stored.map((s) => s.body),
      bodies,
      'bodies byte for byte',
    );
    assert.ok(stored.every((s) => s.place === 'block'));
    const tail = await pool.one<{ entries: number }>('SELECT entries FROM log_tails WHERE project_id = $1', [p.id]);
    assert.equal(Number(tail.entries), 0);
    assert.equal((await usage(pool, p.id)).entries, ids.length);
  });

  it('reads a run up to its byte bound, and an entry larger than the bound alone', async () => {
    const db = await newDatabase();
    const storage = await open(db.name);
    const project = await newProject(storage, 'heavy');
    const big = (n: number, tag: string) =>
      entriesFromValues(
        Array.from({ length: n }, (_, i) => ({ level: 'info', timestamp: '2025-01-01T00:00:00Z', event: `${tag} ${i}`, pad: 'x'.repeat(SEAL_MAX_BYTES / 3) })),
      ).entries;
    // Three entries of a third of the bound each, then a small one: the fourth starts past the bound.
    const small = entriesFromValues([{ level: 'info', timestamp: '2025-01-01T00:00:00Z', event: 'small' }]).entries;
    await storage.write((tx) => tx.ingestLogs([encodeRequest(project.id, 1, [...big(3, 'third'), ...small])]));
    const run = await readRun(poolOf(storage), project.id);
    assert.deepEqual(
      run.entries.map((e) => JSON.parse(e.body).event),
      ['third 0', 'third 1', 'third 2'],
    );
    assert.ok(run.entries.every((e) => e.body.length > SEAL_MAX_BYTES / 3));
    const lone = await newProject(storage, 'lone');
    const huge = entriesFromValues([{ level: 'info', timestamp: '2025-01-01T00:00:00Z', event: 'huge', pad: 'y'.repeat(SEAL_MAX_BYTES + 10) }]).entries;
    await storage.write((tx) => tx.ingestLogs([encodeRequest(lone.id, 1, [...huge, ...small])]));
    assert.deepEqual(
      (await readRun(poolOf(storage), lone.id)).entries.map((e) => JSON.parse(e.body).event),
      ['huge'],
    );
  });

  it("reads a block's header and only the frames asked for, each byte as stored", async () => {
    const db = await newDatabase();
    const storage = await open(db.name);
    const pool = poolOf(storage);
    const p = await newProject(storage, 'frames');
    await ingest(storage, p.id, 2 * SEAL_MAX_ENTRIES, 0, 1_750_000_000_000);
    await sealDue(pool, { now: () => 1_750_000_000_000 });
    const blocks = await pool.any<{ lastId: string; block: Buffer }>('SELECT last_id AS "lastId", block FROM log_sealed WHERE project_id = $1', [p.id]);
    assert.equal(blocks.length, 2);
    for (const mask of [0, 0b1, 0b10010010, 0xff]) {
      const got = await blockFrames(pool, p.id, [...blocks.map((b) => ({ lastId: Number(b.lastId), frames: mask })), { lastId: 999_999_999, frames: 1 }]);
      assert.equal(got.size, 2, 'a block that is not there is left out');
      for (const b of blocks) {
        const whole = new Uint8Array(b.block);
        const part = got.get(Number(b.lastId))!;
        assert.equal(part.length, whole.length);
        const header = readSealedHeader(whole);
        assert.ok(header.frames[0]!.offset < HEAD_BYTES, 'the header fits the first read');
        assert.deepEqual(readSealedHeader(part), header);
        header.frames.forEach((f, i) => {
          const wanted = (mask & (1 << i)) !== 0;
          const same = Buffer.compare(part.subarray(f.offset, f.offset + f.length), whole.subarray(f.offset, f.offset + f.length)) === 0;
          if (wanted) assert.ok(same, `frame ${i} as stored`);
          // Frames not asked for are only read as far as the first slice reaches.
          else if (f.offset >= HEAD_BYTES)
            assert.ok(
              part.subarray(f.offset, f.offset + f.length).every((x) => x === 0),
              `frame ${i} not read`,
            );
        });
      }
    }
  });

  it('never doubles or loses an entry when two storages seal one database while both ingest', async () => {
    const db = await newDatabase();
    const first = await open(db.name);
    const second = await open(db.name);
    const projects = [await newProject(first, 'a'), await newProject(first, 'b')];
    const now = 1_750_000_000_000;
    const ingested = new Map<number, number[]>(projects.map((p) => [p.id, []]));
    let done = false;
    const ingestAll = async (storage: Storage, offset: number) => {
      for (let round = 0; round < 8; round++) {
        for (const p of projects) ingested.get(p.id)!.push(...(await ingest(storage, p.id, 300, offset + round * 300, now)));
      }
    };
    const sealLoop = async (storage: Storage) => {
      let sealed = 0;
      while (!done) sealed += await sealDue(poolOf(storage), { now: () => now });
      return sealed;
    };
    const sealers = [sealLoop(first), sealLoop(second), sealLoop(first)];
    await Promise.all([ingestAll(first, 0), ingestAll(second, 100_000)]);
    done = true;
    await Promise.all(sealers);
    // Whatever is still due once ingestion stopped, old enough to seal everything.
    await Promise.all([
      sealDue(poolOf(first), { now: () => now + SEAL_MAX_TAIL_AGE_MS + 1 }),
      sealDue(poolOf(second), { now: () => now + SEAL_MAX_TAIL_AGE_MS + 1 }),
    ]);
    const pool = poolOf(first);
    for (const p of projects) {
      const stored = await everything(pool, p.id);
      assert.deepEqual(
        stored.map((s) => s.id),
        [...ingested.get(p.id)!].sort((a, b) => a - b),
        `project ${p.name}: every entry exactly once`,
      );
      assert.ok(stored.every((s) => s.place === 'block'));
      const { entries } = await usage(pool, p.id);
      assert.equal(entries, 2 * 8 * 300);
      const tail = await pool.one<{ entries: number }>('SELECT entries FROM log_tails WHERE project_id = $1', [p.id]);
      assert.equal(Number(tail.entries), 0, 'the tail count matches the tail');
    }
  });

  it('retention drops whole expired blocks, rewrites the block at the cutoff, and keeps usage and the rollup exact', async () => {
    const db = await newDatabase();
    const storage = await open(db.name);
    const pool = poolOf(storage);
    const p = await newProject(storage, 'p', 1);
    const now = 1_750_000_000_000;
    const cutoff = now - DAY_MS;
    // Sealed as [A][B + C][C'] and a tail D: A and B are past retention, C, C' and D are not.
    const a = await ingest(storage, p.id, SEAL_MAX_ENTRIES, 0, cutoff - 3000);
    const b = await ingest(storage, p.id, 400, 5000, cutoff - 2000);
    const c = await ingest(storage, p.id, SEAL_MAX_ENTRIES, 6000, cutoff + 1000);
    await sealDue(pool, { now: () => cutoff + 1000 + SEAL_MAX_TAIL_AGE_MS + 1 });
    const d = await ingest(storage, p.id, 30, 9000, now);
    const blocksBefore = await pool.any<{ entries: number }>('SELECT entries FROM log_sealed WHERE project_id = $1 ORDER BY last_id', [p.id]);
    assert.deepEqual(
      blocksBefore.map((x) => Number(x.entries)),
      [SEAL_MAX_ENTRIES, SEAL_MAX_ENTRIES, 400],
    );

    const report = await runPurgePass(storage, NO_AUDIT_RETENTION, { now });
    assert.equal(report.logEntries, a.length + b.length);
    const kept = [...c, ...d];
    const keptBodies = [...submitted(SEAL_MAX_ENTRIES, 6000), ...submitted(30, 9000)];
    assert.equal(report.logBytes, byteSum([...submitted(SEAL_MAX_ENTRIES, 0), ...submitted(400, 5000)]));
    const stored = await everything(pool, p.id);
    assert.deepEqual(
      stored.map((s) => s.id),
      kept,
      'expired entries are gone from every place, the rest stays',
    );
    assert.deepEqual(
      stored.map((s) => s.body),
      keptBodies,
    );
    assert.deepEqual(await usage(pool, p.id), { entries: kept.length, bytes: byteSum(keptBodies), rollup: kept.length });
    const blocks = await pool.any<{ entries: number; firstId: number; bytes: number; shards: number }>(
      `SELECT entries, first_id AS "firstId", bytes,
         (SELECT count(*) FROM log_filter_shards AS f WHERE f.project_id = s.project_id AND f.block_last_id = s.last_id)::integer AS shards
       FROM log_sealed AS s WHERE project_id = $1 ORDER BY last_id`,
      [p.id],
    );
    assert.deepEqual(
      blocks.map((x) => [Number(x.entries), Number(x.firstId), x.shards]),
      [
        [SEAL_MAX_ENTRIES - 400, c[0], FILTER_SHARDS],
        [400, c[SEAL_MAX_ENTRIES - 400], FILTER_SHARDS],
      ],
    );
    const shardRows = await pool.one<{ n: number }>('SELECT count(*)::integer AS n FROM log_filter_shards WHERE project_id = $1', [p.id]);
    assert.equal(shardRows.n, 2 * FILTER_SHARDS, 'no shard row of a dropped block is left');
    const again = await runPurgePass(storage, NO_AUDIT_RETENTION, { now });
    assert.equal(again.logEntries, 0, 'a second pass finds nothing');
  });

  it('upgrades a database of the previous schema in place: every entry found, then sealed', async () => {
    const db = await newDatabase();
    const conn = raw(db.name);
    // The previous schema: every step before this one's, as the previous version ran them.
    await conn.tx((t) =>
      runMigrations(
        t,
        POSTGRES_MIGRATIONS.filter((m) => m.version < SEALED_SCHEMA_VERSION),
        SEALED_SCHEMA_VERSION - 1,
        {
          read: readSchemaVersion,
          write: async (c, version) => void (await c.none('UPDATE schema_version SET version = $1', [version])),
        },
      ),
    );
    const group = await conn.one<{ id: number }>(`INSERT INTO org_groups (name, name_lower, created_at) VALUES ('g', 'g', 0) RETURNING id`);
    const project = await conn.one<{ id: number }>(
      `INSERT INTO projects (group_id, name, name_lower, retention_days, created_at) VALUES ($1, 'p', 'p', 30, 0) RETURNING id`,
      [group.id],
    );
    const bodies = submitted(1500, 0);
    const now = 1_750_000_000_000;
    for (const [i, body] of bodies.entries()) {
      await conn.none(`INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body) VALUES ($1, $2, $3, 2, $4, $5)`, [
        project.id,
        now + i,
        i,
        Buffer.byteLength(body),
        body,
      ]);
    }
    await conn.none('UPDATE projects SET entry_count = $2, total_bytes = $3 WHERE id = $1', [project.id, bodies.length, byteSum(bodies)]);

    const storage = await open(db.name);
    const pool = poolOf(storage);
    const tail = await pool.one<{ entries: number; oldest: number }>('SELECT entries, oldest_received_at AS oldest FROM log_tails WHERE project_id = $1', [
      project.id,
    ]);
    assert.deepEqual([Number(tail.entries), Number(tail.oldest)], [bodies.length, now], 'the stored entries are the tail');
    const all: LogSelection = { projectIds: [project.id], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };
    const found = await storage.queryLogs(all, { limit: 2000 });
    assert.deepEqual(found.map((r) => r.body).reverse(), bodies, 'found through the previous format before any sealing');
    assert.equal(await sealDue(pool, { now: () => now + SEAL_MAX_TAIL_AGE_MS + bodies.length }), bodies.length);
    const stored = await everything(pool, project.id);
    assert.deepEqual(
      stored.map((s) => s.body),
      bodies,
    );
    assert.ok(stored.every((s) => s.place === 'block'));

    // Read back from the blocks as the tail was: every entry, a word, an exact value, a prefix, catch-up after an id.
    const sealed = await storage.queryLogs(all, { limit: 2000 });
    assert.deepEqual(sealed.map((r) => r.body).reverse(), bodies, 'found through the blocks after sealing');
    const ids = sealed.map((r) => r.id).reverse();
    const expect = (test: (body: string) => boolean) => ids.filter((_, i) => test(bodies[i]!)).reverse();
    const matching = async (filter: Partial<LogSelection>) => (await storage.queryLogs({ ...all, ...filter }, { limit: 2000 })).map((r) => r.id);
    assert.deepEqual(
      await matching({ words: ['1234'] }),
      expect((b) => /\b1234\b/.test(b)),
    );
    assert.deepEqual(
      await matching({ exact: [{ path: ['request_id'], value: 'r-77' }] }),
      expect((b) => b.includes('"request_id":"r-77"')),
    );
    assert.deepEqual(
      await matching({ exact: [{ path: ['context', 'user', 'id'], value: '57' }] }),
      expect((b) => b.includes('"user":{"id":57}')),
    );
    assert.deepEqual(
      await matching({ prefixes: ['ünï'] }),
      expect((b) => b.includes('ünïcode')),
    );
    assert.deepEqual(await matching({ words: ['no-such-word-anywhere'] }), []);
    const later = await storage.logsAfter(all, ids[700]!, 50);
    assert.deepEqual(
      later.map((r) => r.id),
      ids.slice(701, 751),
      'catch-up after an id, oldest first',
    );
  });
});
