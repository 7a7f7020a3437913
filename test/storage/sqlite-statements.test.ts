/**
 * The SQLite executor's prepared statements (statement-cache.ts): reused
 * per connection, always run to completion (no read snapshot or write left
 * open between calls), finalized before the connection closes.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'sqlite';
import { closeConnection, connectionExecutor, openReader, openWriter, type SqlExecutor } from '../../lib/storage/sqlite/connection.js';

const dirs: string[] = [];
const opened: Database[] = [];
after(async () => {
  for (const db of opened) await closeConnection(db).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function fresh(): Promise<{ path: string; writer: Database; w: SqlExecutor }> {
  const dir = mkdtempSync(join(tmpdir(), 'logkeep-stmt-'));
  dirs.push(dir);
  const path = join(dir, 'db.sqlite');
  const writer = await openWriter(path);
  opened.push(writer);
  await writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const w = connectionExecutor(writer);
  for (let i = 0; i < 50; i++) await w.run('INSERT INTO t (v) VALUES (?)', [`row ${i}`]);
  return { path, writer, w };
}

describe('sqlite prepared statements', () => {
  it('prepares a statement once per connection and re-runs it with new parameters', async () => {
    const { writer, w } = await fresh();
    const prepare = writer.prepare.bind(writer);
    let prepared = 0;
    writer.prepare = ((sql: string) => {
      prepared += 1;
      return prepare(sql);
    }) as typeof writer.prepare;
    try {
      for (let i = 1; i <= 5; i++) assert.deepEqual(await w.get('SELECT v FROM t WHERE id = ?', [i]), { v: `row ${i - 1}` });
      // Another executor of the same connection shares its statements.
      assert.deepEqual(await connectionExecutor(writer).all('SELECT v FROM t WHERE id = ?', [7]), [{ v: 'row 6' }]);
      assert.equal(prepared, 1);
      // Callers of one text at once each get a statement of their own (one
      // statement runs one call at a time); afterwards all of them are kept.
      const together = await Promise.all([3, 4, 5].map((id) => w.get('SELECT v FROM t WHERE id = ?', [id])));
      assert.deepEqual(together, [{ v: 'row 2' }, { v: 'row 3' }, { v: 'row 4' }]);
      assert.equal(prepared, 3);
      await Promise.all([3, 4, 5].map((id) => w.get('SELECT v FROM t WHERE id = ?', [id])));
      assert.equal(prepared, 3);
    } finally {
      writer.prepare = prepare;
    }
  });

  it('a get stopped at its first row keeps no read snapshot open', async () => {
    const { path, writer, w } = await fresh();
    const reader = await openReader(path);
    opened.push(reader);
    const r = connectionExecutor(reader);
    assert.deepEqual(await r.get('SELECT id FROM t ORDER BY id'), { id: 1 });
    await w.run('INSERT INTO t (v) VALUES (?)', ['later']);
    // A reader mid-statement would pin the WAL: TRUNCATE could not finish.
    const checkpoint = await writer.get<{ busy: number }>('PRAGMA wal_checkpoint(TRUNCATE)');
    assert.equal(checkpoint?.busy, 0);
    assert.deepEqual(await r.get('SELECT count(*) AS n FROM t'), { n: 51 });
  });

  it('an INSERT … RETURNING through get lets its transaction commit', async () => {
    const { writer, w } = await fresh();
    await writer.exec('BEGIN IMMEDIATE');
    assert.deepEqual(await w.get('INSERT INTO t (v) VALUES (?), (?) RETURNING id', ['a', 'b']), { id: 51 });
    await writer.exec('COMMIT');
    assert.deepEqual(await w.all('SELECT id FROM t WHERE id > 50 ORDER BY id'), [{ id: 51 }, { id: 52 }]);
  });

  it('a statement that fails to prepare rejects each time, and others still run', async () => {
    const { w } = await fresh();
    await assert.rejects(w.all('SELECT nope FROM t'), /no such column/);
    await assert.rejects(w.all('SELECT nope FROM t'), /no such column/);
    assert.deepEqual(await w.get('SELECT count(*) AS n FROM t'), { n: 50 });
  });

  it('keeps a bounded number of statements and closes with every one finalized', async () => {
    const { path, w } = await fresh();
    const reader = await openReader(path);
    const r = connectionExecutor(reader);
    // More distinct texts than the cache keeps: the oldest are finalized on the way.
    for (let i = 0; i < 200; i++) assert.deepEqual(await r.get(`SELECT ${i} AS n, count(*) AS c FROM t`), { n: i, c: 50 });
    assert.deepEqual(await r.get('SELECT 0 AS n, count(*) AS c FROM t'), { n: 0, c: 50 });
    // sqlite3 refuses to close a connection with unfinalized statements.
    await closeConnection(reader);
    await assert.rejects(r.get('SELECT 1 AS n'));
    assert.deepEqual(await w.get('SELECT count(*) AS n FROM t'), { n: 50 });
  });
});
