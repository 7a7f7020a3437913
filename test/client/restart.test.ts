/**
 * The ingestion client across a server restart, on both backends: a real
 * logkeep is stopped abruptly (every connection cut) while the client is
 * shipping, then a new one starts on the same port and the same database.
 * Nothing logged is lost, and the only duplicates are entries of batches
 * that were sent again after a network error (at-least-once delivery: the
 * first attempt may have been committed before its answer was cut).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogService, MAX_HEADER_BYTES } from '../../lib/index.js';
import { IngestClient, type IngestRetry } from 'logkeep/client';
import { silentLogger } from '../../lib/core/logger.js';
import { describeEachBackend, newTestDatabase, type TestDatabase } from '../support/backends.js';
import { ADMIN_PASSWORD, TEST_JWT_SECRET, TEST_SCRYPT_LOG_N } from '../support/service.js';
import { entry, newProject, storedEntries } from './client-support.js';
import { waitUntil } from '../support/wait.js';

/** A logkeep on `port` (0: any), as the bin would run it, with an abrupt stop. */
async function listen(database: TestDatabase, port: number): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const service = await createLogService(
    { ...database.config, jwtSecret: TEST_JWT_SECRET, bootstrapAdminPassword: ADMIN_PASSWORD, rateLimitEnabled: false },
    { logger: silentLogger, passwordHashLogN: TEST_SCRYPT_LOG_N },
  );
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, service.handler);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
    },
  };
}

describeEachBackend('ingest client across a server restart', (backend) => {
  it('loses no entry and duplicates only entries of batches retried after a network error', async (t) => {
    const database = await newTestDatabase(backend);
    let server = await listen(database, 0);
    const url = server.url;
    try {
      const project = await newProject(url, 'restart');
      const retries: IngestRetry[] = [];
      const client = new IngestClient({
        url,
        secretKey: project.secret,
        maxBatchEntries: 25,
        flushIntervalMs: 10,
        backoff: { baseDelayMs: 20, maxDelayMs: 200 },
        onRetry: (r) => retries.push(r),
        onError: (e) => assert.fail(`no batch may be given up: ${e.message}`),
      });

      const total = 3000;
      let logged = 0;
      const produce = async (until: number) => {
        for (; logged < until; logged++) {
          await client.log(entry(logged));
          // Yield now and then so batches go out while entries keep coming.
          if (logged % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 1));
        }
      };

      await produce(1000);
      await waitUntil(() => client.stats.accepted >= 200, 'some entries accepted before the stop');
      await server.stop();
      // The client keeps logging (and retrying) while nothing listens.
      await produce(1500);
      await new Promise((resolve) => setTimeout(resolve, 300));
      server = await listen(database, server.port);
      await produce(total);
      await client.close();

      assert.ok(retries.length > 0, 'the restart happened mid-stream: some batch was retried');
      assert.deepEqual([client.stats.dropped, client.stats.failed, client.stats.rejected], [0, 0, 0]);
      const stored = (await storedEntries(url, project)).map((e) => e.n as number);
      const distinct = new Set(stored);
      assert.equal(distinct.size, total, 'every logged entry is stored');
      const duplicates = stored.length - distinct.size;
      const resentAfterNetworkError = retries.filter((r) => r.status === null).reduce((sum, r) => sum + r.entries, 0);
      t.diagnostic(`${retries.length} retries, ${resentAfterNetworkError} entries sent again after a network error, ${duplicates} stored twice`);
      assert.ok(duplicates <= resentAfterNetworkError, `${duplicates} duplicates, at most ${resentAfterNetworkError} entries were sent again`);
      // Batches go one at a time and a retried batch goes before the next: first copies are in log() order.
      const firstSeen = stored.filter((n, i) => stored.indexOf(n) === i);
      assert.deepEqual(
        firstSeen,
        Array.from({ length: total }, (_, i) => i),
      );
    } finally {
      await server.stop();
      await database.cleanup();
    }
  });
});
