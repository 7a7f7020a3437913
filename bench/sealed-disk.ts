/**
 * Disk per entry of sealed storage's tables (docs/storage-format.md) on
 * each database, before the backends write them: the varied entries of
 * bench/disk.ts sealed with `sealRun` in blocks of 1,024 per project, with
 * a project dictionary, inserted into the format's `log_sealed`,
 * `log_filter_shards` and `log_dictionaries` in a scratch SQLite file and a
 * scratch PostgreSQL database, then settled as bench/disk.ts settles them.
 * What it leaves out: the tail (short once sealing keeps up), the rollup
 * (a few rows per project and minute) and the org tables.
 *
 * Standalone: `node --import tsx bench/sealed-disk.ts [--quick] [--entries=N]`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgPromise from 'pg-promise';
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import { sealRun, type SealedRun } from '../lib/storage/log-index/seal-run.js';
import { buildDictionary, cutSealRuns, type SealInput } from '../lib/storage/log-index/sealed-block.js';
import { fmt, serverDatabase } from './support/harness.js';
import { createVariedGenerator } from './support/varied-entries.js';

const PROJECTS = 10;

interface Sealed {
  projectId: number;
  run: SealedRun;
  dictionaryId: number;
}

/** Seals `entries` varied entries spread over the projects as 500-entry requests, as ingestion would. */
async function sealAll(
  entries: number,
): Promise<{ blocks: Sealed[]; dictionaries: { projectId: number; id: number; bytes: Uint8Array; firstBlock: number }[] }> {
  const gen = createVariedGenerator(1);
  const perProject: SealInput[][] = Array.from({ length: PROJECTS }, () => []);
  for (let i = 0; i < entries; i++) {
    const e = gen.next();
    const body = JSON.stringify(e);
    perProject[Math.floor(i / 500) % PROJECTS]!.push({
      id: i + 1,
      receivedAt: 1_750_000_000_000 + Math.floor(i / 50),
      ts: Date.parse(e.timestamp as string),
      level: 1,
      body,
    });
  }
  const blocks: Sealed[] = [];
  const dictionaries: { projectId: number; id: number; bytes: Uint8Array; firstBlock: number }[] = [];
  for (let p = 0; p < PROJECTS; p++) {
    const runs = cutSealRuns(perProject[p]!, true);
    if (runs.length === 0) continue;
    const dictionary = { id: 1, bytes: buildDictionary(runs[0]!.map((e) => e.body)) };
    dictionaries.push({ projectId: p + 1, id: 1, bytes: dictionary.bytes, firstBlock: runs[0]![runs[0]!.length - 1]!.id });
    for (const run of runs) {
      blocks.push({ projectId: p + 1, run: sealRun(run, dictionary), dictionaryId: 1 });
      await new Promise((r) => setImmediate(r));
    }
  }
  return { blocks, dictionaries };
}

const SQLITE_TABLES = `
CREATE TABLE log_sealed (last_id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, first_id INTEGER NOT NULL, entries INTEGER NOT NULL, bytes INTEGER NOT NULL,
  min_ts INTEGER NOT NULL, max_ts INTEGER NOT NULL, min_received_at INTEGER NOT NULL, max_received_at INTEGER NOT NULL, levels INTEGER NOT NULL, frames INTEGER NOT NULL,
  dictionary_id INTEGER NOT NULL, block BLOB NOT NULL);
CREATE UNIQUE INDEX log_sealed_project ON log_sealed (project_id, last_id);
CREATE INDEX log_sealed_ts ON log_sealed (project_id, max_ts);
CREATE TABLE log_filter_shards (project_id INTEGER NOT NULL, shard INTEGER NOT NULL, block_last_id INTEGER NOT NULL, bits BLOB NOT NULL,
  PRIMARY KEY (project_id, shard, block_last_id)) WITHOUT ROWID;
CREATE TABLE log_dictionaries (project_id INTEGER NOT NULL, id INTEGER NOT NULL, first_block_last_id INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (project_id, id)) WITHOUT ROWID;
`;

const PG_TABLES = `
CREATE TABLE log_sealed (project_id BIGINT NOT NULL, last_id BIGINT NOT NULL, first_id BIGINT NOT NULL, entries INTEGER NOT NULL, bytes BIGINT NOT NULL,
  min_ts BIGINT NOT NULL, max_ts BIGINT NOT NULL, min_received_at BIGINT NOT NULL, max_received_at BIGINT NOT NULL, levels SMALLINT NOT NULL, frames SMALLINT NOT NULL,
  dictionary_id INTEGER NOT NULL, block BYTEA NOT NULL, PRIMARY KEY (project_id, last_id));
ALTER TABLE log_sealed ALTER COLUMN block SET STORAGE EXTERNAL;
CREATE INDEX log_sealed_ts ON log_sealed (project_id, max_ts);
CREATE TABLE log_filter_shards (project_id BIGINT NOT NULL, shard SMALLINT NOT NULL, block_last_id BIGINT NOT NULL, bits BYTEA NOT NULL, PRIMARY KEY (project_id, shard, block_last_id));
ALTER TABLE log_filter_shards ALTER COLUMN bits SET STORAGE EXTERNAL;
CREATE TABLE log_dictionaries (project_id BIGINT NOT NULL, id INTEGER NOT NULL, first_block_last_id BIGINT NOT NULL, bytes BYTEA NOT NULL, PRIMARY KEY (project_id, id));
`;

function rowOf(s: Sealed): unknown[] {
  const r = s.run;
  return [
    s.projectId,
    r.lastId,
    r.firstId,
    r.count,
    r.bytes,
    r.minTs,
    r.maxTs,
    r.minReceivedAt,
    r.maxReceivedAt,
    r.levels,
    Math.ceil(r.count / 128),
    s.dictionaryId,
    Buffer.from(r.block),
  ];
}

async function sqliteBytes(sealed: Awaited<ReturnType<typeof sealAll>>): Promise<number> {
  const dir = mkdtempSync(join(process.env.LOGKEEP_BENCH_DIR ?? tmpdir(), 'logkeep-sealed-'));
  const path = join(dir, 'sealed.db');
  try {
    const db = await open({ filename: path, driver: sqlite3.Database });
    await db.exec('PRAGMA journal_mode = WAL; PRAGMA auto_vacuum = INCREMENTAL;');
    await db.exec(SQLITE_TABLES);
    const empty = statSync(path).size;
    await db.exec('BEGIN');
    for (const d of sealed.dictionaries)
      await db.run('INSERT INTO log_dictionaries VALUES (?, ?, ?, ?)', [d.projectId, d.id, d.firstBlock, Buffer.from(d.bytes)]);
    for (const s of sealed.blocks) {
      const [projectId, lastId, ...rest] = rowOf(s);
      await db.run(
        'INSERT INTO log_sealed (project_id, last_id, first_id, entries, bytes, min_ts, max_ts, min_received_at, max_received_at, levels, frames, dictionary_id, block) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [projectId, lastId, ...rest],
      );
      for (let shard = 0; shard < s.run.shards.length; shard++)
        await db.run('INSERT INTO log_filter_shards VALUES (?, ?, ?, ?)', [s.projectId, shard, s.run.lastId, Buffer.from(s.run.shards[shard]!)]);
    }
    await db.exec('COMMIT');
    await db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    await db.close();
    return statSync(path).size - empty;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresBytes(sealed: Awaited<ReturnType<typeof sealAll>>): Promise<number | null> {
  const target = await serverDatabase();
  if (!target) return null;
  const s = target.settings;
  const pgp = pgPromise({ noWarnings: true });
  const conn = pgp({
    host: s.dbServerHost!,
    port: s.dbServerPort!,
    database: s.dbServerDatabase!,
    user: s.dbServerUsername!,
    password: s.dbServerPassword!,
    max: 1,
  });
  try {
    await conn.none(PG_TABLES);
    const size = async () => {
      await conn.none('VACUUM');
      await conn.none('CHECKPOINT');
      return Number((await conn.one<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes')).bytes);
    };
    const empty = await size();
    await conn.tx(async (t) => {
      for (const d of sealed.dictionaries)
        await t.none('INSERT INTO log_dictionaries VALUES ($1, $2, $3, $4)', [d.projectId, d.id, d.firstBlock, Buffer.from(d.bytes)]);
      for (const b of sealed.blocks) {
        await t.none('INSERT INTO log_sealed VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)', rowOf(b));
        await t.none(
          'INSERT INTO log_filter_shards SELECT $1, s, $2, b FROM unnest($3::bytea[]) WITH ORDINALITY AS u(b, s1), LATERAL (SELECT (s1 - 1)::smallint AS s) x',
          [b.projectId, b.run.lastId, b.run.shards.map((x) => Buffer.from(x))],
        );
      }
    });
    return (await size()) - empty;
  } finally {
    await conn.$pool.end();
    await target.drop();
  }
}

export async function benchSealedDisk(options: { quick: boolean; entries?: number }): Promise<{ file: number; server: number | null }> {
  const entries = options.entries ?? (options.quick ? 50_000 : 200_000);
  console.log(
    `Sealed format 1 on disk (${fmt(entries)} varied entries sealed in blocks of 1,024 in ${PROJECTS} projects; tail, rollup and org tables left out)`,
  );
  const sealed = await sealAll(entries);
  const file = (await sqliteBytes(sealed)) / entries;
  console.log(`  file (SQLite, WAL checkpointed): ${fmt(file, 1)} B per entry`);
  const serverTotal = await postgresBytes(sealed);
  const server = serverTotal === null ? null : serverTotal / entries;
  if (server !== null) console.log(`  server (PostgreSQL, vacuumed and checkpointed): ${fmt(server, 1)} B per entry`);
  return { file, server };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = process.argv.find((a) => a.startsWith('--entries='));
  await benchSealedDisk({ quick: process.argv.includes('--quick'), entries: arg ? Number(arg.slice('--entries='.length)) : undefined });
}
