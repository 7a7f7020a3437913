/**
 * SIGKILL while the server backend seals (docs/storage-format.md), with the
 * built binary as a real process: entries ingested past a few full runs are
 * being sealed in the background when the process is killed; after a
 * restart every acknowledged entry is found exactly once (tail or block),
 * the counters equal the entries, and the restarted service seals what was
 * left, after which every entry is still found once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pgPromise from 'pg-promise';
import { assertBinBuilt } from '../support/bin.js';
import { newTestDatabase, type TestDatabase } from '../support/backends.js';
import { postgresSkipReason } from '../support/postgres.js';
import { IngestLoad, prepareProject, startLogkeep, verifyStoredEntries } from './durability-support.js';
import { SEAL_MAX_ENTRIES } from '../../lib/storage/log-index/sealed-block.js';

const unavailable = await postgresSkipReason();
const pgp = pgPromise({ noWarnings: true });

before(() => assertBinBuilt());

describe('durability: SIGKILL while sealing [server]', { skip: unavailable ?? false }, () => {
  const databases: TestDatabase[] = [];
  after(async () => {
    for (const d of databases) await d.cleanup();
    pgp.end();
  });

  it('loses no entry and doubles none, and the restarted service seals the rest', async () => {
    const database = await newTestDatabase('server');
    databases.push(database);
    const c = database.config;
    const raw = pgp({
      host: c.dbServerHost ?? '127.0.0.1',
      port: c.dbServerPort,
      database: c.dbServerDatabase ?? '',
      user: c.dbServerUsername ?? '',
      password: c.dbServerPassword ?? '',
      max: 1,
    });
    const count = async (sql: string) => Number((await raw.one<{ n: number }>(sql)).n);
    const blocks = () => count('SELECT count(*) AS n FROM log_sealed');
    const tail = () => count('SELECT COALESCE(sum(entries), 0) AS n FROM log_tails');
    const batchSize = 256;
    const first = await startLogkeep(c);
    let load: IngestLoad | null = null;
    let target: Awaited<ReturnType<typeof prepareProject>>;
    try {
      target = await prepareProject(first.url);
      load = new IngestLoad(first.url, target, { clients: 4, batchSize, stopOnNetworkError: false }).start();
      await load.waitForAcked(6 * SEAL_MAX_ENTRIES, 120_000);
      await load.stop();
      // Killed once the sealer has committed a block and more full runs wait: it is sealing the next one.
      for (;;) {
        if ((await blocks()) > 0 || (await tail()) < SEAL_MAX_ENTRIES) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      first.bin.child.kill('SIGKILL');
    } catch (err) {
      first.bin.kill();
      await raw.$pool.end();
      throw err;
    }
    assert.equal((await first.bin.exited(10_000)).signal, 'SIGKILL');
    const acked = new Set(load.acked);
    try {
      assert.ok((await tail()) >= SEAL_MAX_ENTRIES, 'full runs were still waiting when the process was killed');
      // Every entry once, tail or block, the counters equal to them.
      const killed = await verifyStoredEntries(c, target.projectId, acked, batchSize);
      assert.equal(killed.stored, acked.size);

      const second = await startLogkeep(c);
      try {
        // The restarted service seals every full run left.
        for (let waited = 0; (await tail()) >= SEAL_MAX_ENTRIES; waited += 20) {
          assert.ok(waited < 120_000, 'the restarted service seals the full runs left');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        second.bin.child.kill('SIGTERM');
      } catch (err) {
        second.bin.kill();
        throw err;
      }
      assert.equal((await second.bin.exited(20_000)).code, 0);
      const sealed = await verifyStoredEntries(c, target.projectId, acked, batchSize);
      assert.equal(sealed.stored, acked.size);
      assert.ok((await blocks()) >= 5, 'the entries are sealed');
      assert.equal(await tail(), await count('SELECT count(*) AS n FROM log_entries'), "the tails' counts equal their rows");
    } finally {
      await raw.$pool.end();
    }
  });
});
