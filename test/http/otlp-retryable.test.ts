/**
 * POST /v1/otlp/v1/logs when the commit fails, on both backends: a trigger
 * added behind the service's back makes the database refuse every write
 * of log blocks; the export is answered 503 with Retry-After (an OTLP
 * client retries it) and nothing is stored; once the database accepts
 * writes again, the same export is stored.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { open as openSqliteFile } from 'sqlite';
import sqlite3 from 'sqlite3';
import pgPromise from 'pg-promise';
import { describeEachBackend, type TestDatabase } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus, createGroup, createKey, createProject } from '../support/actors.js';
import { queryAllPages } from '../support/logs.js';

const pgp = pgPromise({ noWarnings: true });

const REFUSE = {
  file: [`CREATE TRIGGER refuse_blocks BEFORE INSERT ON log_rollup BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`],
  server: [
    `CREATE FUNCTION refuse_blocks() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql`,
    `CREATE TRIGGER refuse_blocks BEFORE INSERT ON log_rollup FOR EACH ROW EXECUTE FUNCTION refuse_blocks()`,
  ],
};
const ACCEPT = { file: ['DROP TRIGGER refuse_blocks'], server: ['DROP TRIGGER refuse_blocks ON log_rollup', 'DROP FUNCTION refuse_blocks()'] };

/** Runs statements on the service's database through a connection of the test's own. */
async function execute(database: TestDatabase, statements: string[]): Promise<void> {
  const c = database.config;
  if (c.dbBackend === 'file') {
    const raw = await openSqliteFile({ filename: c.dbPath as string, driver: sqlite3.Database });
    try {
      await raw.exec('PRAGMA busy_timeout = 5000');
      for (const sql of statements) await raw.exec(sql);
    } finally {
      await raw.close();
    }
    return;
  }
  const db = pgp({
    host: c.dbServerHost ?? '127.0.0.1',
    port: c.dbServerPort,
    database: c.dbServerDatabase ?? '',
    user: c.dbServerUsername ?? '',
    password: c.dbServerPassword ?? '',
    max: 1,
  });
  try {
    for (const sql of statements) await db.none(sql);
  } finally {
    // Only this pool: pgp.end() would close every pool of the process.
    await db.$pool.end();
  }
}

describeEachBackend('POST /v1/otlp/v1/logs: a failed commit', (backend) => {
  const app = serviceWithAdmin(backend);

  it('is 503 with Retry-After, storing nothing, and the retry is stored once the database accepts writes', async () => {
    const project = await createProject(app.url, app.admin.token, await createGroup(app.url, app.admin.token, 'retry'), 'retry');
    const { secret } = await createKey(app.url, app.admin.token, project);
    const body = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'retried' } }] }] }] };
    const send = () => api(app.url, 'POST', '/v1/otlp/v1/logs', { token: secret, json: body });

    await execute(app.svc.database, REFUSE[backend]);
    const refused = await send();
    assertStatus(refused, 503, 'temporarily_unavailable');
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.doesNotMatch(refused.text, /refused by the test|log_blocks|log_rollup/, 'no internals in the answer');

    await execute(app.svc.database, ACCEPT[backend]);
    assertStatus(await send(), 200);
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(project)]], 100);
    assert.deepEqual(
      items.map((i) => i.event),
      ['retried'],
    );
  });
});
