/**
 * Crash safety (a 202 means committed; shutdown finishes pending writes), on each backend, with the built
 * binary as a real process:
 * - SIGKILL in the middle of concurrent ingestion, then a restart: every
 *   entry answered 202 is there, each request's entries are all there or
 *   none, the counters equal the rows, and the SQLite file and its sealed
 *   index pass their integrity checks;
 * - SIGKILL right after a burst, while the file backend seals: nothing
 *   lost, each entry in the tail or in one block, before and after a restart;
 * - SIGTERM in the middle of ingestion: the requests in flight are answered
 *   (202, not a reset connection), their entries are committed, exit 0.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { assertBinBuilt } from '../support/bin.js';
import { describeEachBackend, newTestDatabase, type BackendName, type TestDatabase } from '../support/backends.js';
import { IngestLoad, adminTokenAfterRestart, prepareProject, projectUsage, startLogkeep, verifyStoredEntries } from './durability-support.js';

before(() => assertBinBuilt());

describeEachBackend('durability', (backend: BackendName) => {
  const databases: TestDatabase[] = [];
  after(async () => {
    for (const d of databases) await d.cleanup();
  });

  it('SIGKILL during concurrent ingestion loses no acknowledged entry and leaves nothing half-written', async () => {
    const database = await newTestDatabase(backend);
    databases.push(database);
    const first = await startLogkeep(database.config);
    const batchSize = 40;
    let load: IngestLoad | null = null;
    let target: Awaited<ReturnType<typeof prepareProject>>;
    try {
      target = await prepareProject(first.url);
      load = new IngestLoad(first.url, target, { clients: 8, batchSize, stopOnNetworkError: true }).start();
      await load.waitForAcked(4000);
      assert.ok(load.inFlight > 0, 'requests are in flight when the process is killed');
      first.bin.child.kill('SIGKILL');
      await load.stop();
    } catch (err) {
      first.bin.kill();
      throw err;
    }
    const killed = await first.bin.exited(10_000);
    assert.equal(killed.signal, 'SIGKILL');
    assert.ok(
      load.outcomes.some((o) => o.status === 'network-error'),
      'some requests were cut off by the kill',
    );
    const acked = new Set(load.acked);

    // Restart on the same database: the service opens it and serves the same counts.
    const second = await startLogkeep(database.config);
    try {
      const token = await adminTokenAfterRestart(second.url);
      const usage = await projectUsage(second.url, token, target.projectId);
      assert.ok(usage.entry_count >= acked.size, `${usage.entry_count} stored, ${acked.size} acknowledged`);
      second.bin.child.kill('SIGTERM');
    } catch (err) {
      second.bin.kill();
      throw err;
    }
    assert.equal((await second.bin.exited(20_000)).code, 0);
    const check = await verifyStoredEntries(database.config, target.projectId, acked, batchSize);
    assert.ok(check.stored >= acked.size);
  });

  // The file backend seals each project's tail in the background after every
  // commit that takes it past a full run (1,024 entries): killed right after
  // a burst, the process is sealing. A restart resumes sealing what is left.
  it('SIGKILL while sealing loses nothing, and leaves each entry in the tail or in one block', async () => {
    const database = await newTestDatabase(backend);
    databases.push(database);
    const first = await startLogkeep(database.config);
    const batchSize = 500;
    let load: IngestLoad | null = null;
    let target: Awaited<ReturnType<typeof prepareProject>>;
    try {
      target = await prepareProject(first.url);
      load = new IngestLoad(first.url, target, { clients: 4, batchSize, stopOnNetworkError: true }).start();
      await load.waitForAcked(12_000, 120_000);
      first.bin.child.kill('SIGKILL');
      await load.stop();
    } catch (err) {
      first.bin.kill();
      throw err;
    }
    assert.equal((await first.bin.exited(10_000)).signal, 'SIGKILL');
    const acked = new Set(load.acked);
    const check = await verifyStoredEntries(database.config, target.projectId, acked, batchSize);
    assert.ok(check.stored >= acked.size);
    // Restarted, the service seals what was left; stopped, the same entries are there, each once.
    const second = await startLogkeep(database.config);
    try {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      second.bin.child.kill('SIGTERM');
    } catch (err) {
      second.bin.kill();
      throw err;
    }
    assert.equal((await second.bin.exited(20_000)).code, 0);
    const again = await verifyStoredEntries(database.config, target.projectId, acked, batchSize);
    assert.equal(again.stored, check.stored);
  });

  it('SIGTERM during ingestion answers the requests in flight, commits them, and exits 0', async () => {
    const database = await newTestDatabase(backend);
    databases.push(database);
    const running = await startLogkeep(database.config);
    // Large enough that a batch is still being stored 30 ms after it was sent
    // (500-entry batches now commit within that).
    const batchSize = 2000;
    let load: IngestLoad | null = null;
    let target: Awaited<ReturnType<typeof prepareProject>>;
    try {
      target = await prepareProject(running.url);
      load = new IngestLoad(running.url, target, { clients: 4, batchSize, stopOnNetworkError: true }).start();
      await load.waitForAcked(4 * batchSize);
      // No request starts after this; those already sent reach the server before the signal.
      const stopping = load.stop();
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.ok(load.inFlight > 0, 'requests are in flight when the signal arrives');
      running.bin.child.kill('SIGTERM');
      await stopping;
    } catch (err) {
      running.bin.kill();
      throw err;
    }
    const result = await running.bin.exited(20_000);
    assert.equal(result.code, 0, result.stderr);
    const failures = load.outcomes.filter((o) => o.status !== 202);
    assert.deepEqual(failures, [], 'every request sent before the signal was answered 202');
    const check = await verifyStoredEntries(database.config, target.projectId, load.acked, batchSize);
    assert.equal(check.stored, load.acked.size, 'exactly the acknowledged entries are stored');
  });
});
