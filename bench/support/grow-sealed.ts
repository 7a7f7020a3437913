/**
 * Grows a sealed benchmark database without ingesting again: every block
 * of `log_sealed` (and its filter shards) is copied `copies` times, each
 * copy's ids, received_at and ts shifted past the previous copy's, in the
 * block header as in the row, so each copy reads back as later entries of
 * the same projects. Filling 10M entries over HTTP and sealing them costs
 * the same CPU as 10M ingested entries (about an hour on 2 shared cores);
 * copying sealed blocks costs a few seconds per million, and a query reads
 * the same kind of blocks, filters and dictionaries it would.
 *
 * What differs from 10M ingested entries: the entries' texts repeat once
 * per copy (a request id found once in the original is found once per
 * copy; its `timestamp` text keeps the original instant), and the rollup
 * (histograms) and the tail are left as they were. Project counters
 * (`entry_count`, `total_bytes`) grow with the copies.
 */
import pgPromise from 'pg-promise';
import { open } from 'sqlite';
import sqlite3 from 'sqlite3';
import { Reader } from '../../lib/storage/log-index/block-bytes.js';
import type { BenchDatabase } from './harness.js';

interface Shift {
  id: number;
  receivedAt: number;
  ts: number;
}

/** A copy of `block` whose first id, received_at and ts (the header's f64 bases; the deltas are relative) are shifted. */
export function shiftBlock(block: Uint8Array, by: Shift): Buffer {
  const out = Buffer.from(block);
  const r = new Reader(out);
  r.u8();
  r.u8();
  r.u16();
  r.u32();
  const n = r.u32();
  const at = (shift: number, skip: () => number) => {
    const base = r.at;
    out.writeDoubleLE(out.readDoubleLE(base) + shift, base);
    r.f64();
    for (let i = 1; i < n; i++) skip();
  };
  at(by.id, () => r.varint());
  at(by.receivedAt, () => r.zigzag());
  at(by.ts, () => r.zigzag());
  return out;
}

interface SealedRow {
  [column: string]: unknown;
  last_id: number | string;
  first_id: number | string;
  min_ts: number | string;
  max_ts: number | string;
  min_received_at: number | string;
  max_received_at: number | string;
  block: Uint8Array;
}

const SPAN_SQL = `SELECT MAX(last_id) AS max_id, MIN(min_ts) AS min_ts, MAX(max_ts) AS max_ts,
  MIN(min_received_at) AS min_received_at, MAX(max_received_at) AS max_received_at FROM log_sealed`;

/** The shift of copy `k`: ids, received_at and ts each moved past the whole original `k` times. */
function shiftOf(span: Record<string, unknown>, k: number): Shift {
  const n = (key: string) => Number(span[key]);
  return { id: k * n('max_id'), receivedAt: k * (n('max_received_at') - n('min_received_at') + 1), ts: k * (n('max_ts') - n('min_ts') + 1) };
}

function shiftedRow(row: SealedRow, by: Shift): Record<string, unknown> {
  return {
    ...row,
    last_id: Number(row.last_id) + by.id,
    first_id: Number(row.first_id) + by.id,
    min_ts: Number(row.min_ts) + by.ts,
    max_ts: Number(row.max_ts) + by.ts,
    min_received_at: Number(row.min_received_at) + by.receivedAt,
    max_received_at: Number(row.max_received_at) + by.receivedAt,
    block: shiftBlock(row.block, by),
  };
}

/** Copies every sealed block `copies` times (see above); returns the entries the database holds in blocks afterwards. */
export async function growByCopies(db: BenchDatabase, copies: number): Promise<number> {
  return db.settings.dbBackend === 'file' ? growSqlite(db.settings.dbPath!, copies) : growPostgres(db, copies);
}

async function growSqlite(path: string, copies: number): Promise<number> {
  const conn = await open({ filename: path, driver: sqlite3.Database });
  try {
    const span = (await conn.get<Record<string, unknown>>(SPAN_SQL))!;
    const rows = await conn.all<SealedRow[]>('SELECT * FROM log_sealed ORDER BY last_id');
    const columns = Object.keys(rows[0]!);
    const insert = await conn.prepare(`INSERT INTO log_sealed (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    for (let k = 1; k <= copies; k++) {
      const by = shiftOf(span, k);
      await conn.exec('BEGIN');
      for (const row of rows) {
        const shifted = shiftedRow(row, by);
        await insert.run(columns.map((c) => shifted[c]));
      }
      await conn.run('INSERT INTO log_filter_shards SELECT project_id, shard, block_last_id + ?, bits FROM log_filter_shards WHERE block_last_id <= ?', [
        by.id,
        Number(span.max_id),
      ]);
      await conn.exec('COMMIT');
    }
    await insert.finalize();
    await conn.run(
      `UPDATE projects SET entry_count = entry_count * ?, total_bytes = total_bytes * ? WHERE id IN (SELECT DISTINCT project_id FROM log_sealed)`,
      [copies + 1, copies + 1],
    );
    await conn.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return Number((await conn.get<{ n: number }>('SELECT SUM(entries) AS n FROM log_sealed'))!.n);
  } finally {
    await conn.close();
  }
}

async function growPostgres(db: BenchDatabase, copies: number): Promise<number> {
  const s = db.settings;
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
    const span = await conn.one<Record<string, unknown>>(SPAN_SQL);
    const rows = await conn.any<SealedRow>('SELECT * FROM log_sealed ORDER BY last_id');
    const columns = Object.keys(rows[0]!);
    const set = new pgp.helpers.ColumnSet(columns, { table: 'log_sealed' });
    for (let k = 1; k <= copies; k++) {
      const by = shiftOf(span, k);
      await conn.tx(async (t) => {
        for (let at = 0; at < rows.length; at += 100)
          await t.none(
            pgp.helpers.insert(
              rows.slice(at, at + 100).map((r) => shiftedRow(r, by)),
              set,
            ),
          );
        await t.none('INSERT INTO log_filter_shards SELECT project_id, shard, block_last_id + $1, bits FROM log_filter_shards WHERE block_last_id <= $2', [
          by.id,
          Number(span.max_id),
        ]);
      });
    }
    await conn.none(
      'UPDATE projects SET entry_count = entry_count * $1, total_bytes = total_bytes * $1 WHERE id IN (SELECT DISTINCT project_id FROM log_sealed)',
      [copies + 1],
    );
    return Number((await conn.one<{ n: string }>('SELECT SUM(entries) AS n FROM log_sealed')).n);
  } finally {
    await conn.$pool.end();
  }
}
