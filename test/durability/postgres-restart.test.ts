/**
 * Resilience of the server backend (issue 7, part 4): PostgreSQL stops
 * abruptly and comes back while clients ingest. Requests made while it is
 * down fail fast with 500 `internal_error` (none hangs past a bound, none
 * breaks the connection), the service recovers by itself, without a
 * restart, and every entry acknowledged before, during or after the outage
 * is stored, whole, with counters equal to the rows.
 *
 * The server restarted here is a private one (initdb + pg_ctl on a free
 * port), never the shared one other test files are using.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { api, startService, type RunningService } from '../support/service.js';
import { IngestLoad, verifyStoredEntries } from './durability-support.js';
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
import { skipReasonOutsideCi } from '../support/postgres.js';

/** No request may take longer than this, outage or not. */
const REQUEST_BOUND_MS = 10_000;
const OUTAGE_MS = 1500;

const unavailable = skipReasonOutsideCi(privatePostgresUnavailable(), 'the restart test is required');

describe('PostgreSQL restarted under load', { skip: unavailable ?? false }, () => {
  let pg: PrivatePostgres;
  let running: RunningService;

  before(async () => {
    pg = await startPrivatePostgres();
    running = await startService('server', { database: { config: pg.config, cleanup: async () => {} } });
  });
  after(async () => {
    await running?.stop();
    await pg?.destroy();
  });

  it('answers 500 internal_error while it is down, recovers by itself, and loses no acknowledged entry', async () => {
    const url = running.url;
    const admin = await signInAdmin(url);
    const groupId = await createGroup(url, admin.token, 'restart');
    const projectId = await createProject(url, admin.token, groupId, 'restart');
    const { secret } = await createKey(url, admin.token, projectId);

    const batchSize = 50;
    const load = new IngestLoad(url, { projectId, secret }, { clients: 4, batchSize, stopOnNetworkError: false, retryDelayMs: 20 }).start();
    try {
      await load.waitForAcked(2000);
      await pg.stopServer();
      const downAt = load.outcomes.length;
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await pg.startServer();
      const ackedAtRestart = load.acked.size;
      // Recovery: ingestion is acknowledged again without restarting the service.
      await load.waitForAcked(ackedAtRestart + 2000, 20_000);
      assert.ok(
        load.outcomes.slice(downAt).some((o) => o.status === 500),
        'requests failed while PostgreSQL was down',
      );
    } finally {
      await load.stop();
    }

    const failures = load.outcomes.filter((o) => o.status !== 202);
    for (const failure of failures) {
      assert.deepEqual([failure.status, failure.error], [500, 'internal_error'], `request ${failure.request}`);
    }
    const slowest = Math.max(...load.outcomes.map((o) => o.ms));
    assert.ok(slowest < REQUEST_BOUND_MS, `the slowest request took ${slowest} ms`);

    // Other routes recovered too.
    const projects = await api(url, 'GET', `/v1/projects/${projectId}`, { token: admin.token });
    assert.equal(projects.status, 200, projects.text);

    const check = await verifyStoredEntries(pg.config, projectId, load.acked, batchSize);
    assert.ok(check.stored >= load.acked.size);
  });
});
