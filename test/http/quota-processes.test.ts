/**
 * Quotas stay exact entry by entry when two real `logkeep` processes
 * ingest into one project of one PostgreSQL database at once: each process
 * group-commits its own requests, and only the database's row lock on the
 * project's counters orders the two.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/service.js';
import { assertStatus, createGroup, createKey, createProject, signIn, type TestActor } from '../support/actors.js';
import { ingest, queryAllPages } from '../support/logs.js';
import { PG, createThrowawayDatabase, postgresSkipReason, type ThrowawayDatabase } from '../support/postgres.js';
import { BIN_BOOTSTRAP_PASSWORD, startPostgresBin, type RunningBin } from '../support/bin.js';

const skip = (await postgresSkipReason()) ?? false;
const entry = (i: number) => ({ level: 'info', event: `event ${i}`, timestamp: '2025-01-01T00:00:00Z' });

describe('quotas across logkeep processes sharing one PostgreSQL [server]', { skip }, () => {
  let database: ThrowawayDatabase;
  const bins: RunningBin[] = [];
  let urls: string[] = [];
  let admin: TestActor;
  let group: number;

  before(async () => {
    database = await createThrowawayDatabase();
    // One after the other: the first migrates and creates the admin.
    for (let n = 0; n < 2; n++) {
      const started = await startPostgresBin({ ...PG, database: database.name });
      bins.push(started.bin);
      urls.push(started.url);
    }
    const first = await api(urls[0]!, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: BIN_BOOTSTRAP_PASSWORD } });
    assertStatus(first, 200);
    const changed = await api(urls[0]!, 'POST', '/v1/auth/change-password', {
      token: first.body.access_token,
      json: { current_password: BIN_BOOTSTRAP_PASSWORD, new_password: 'admin-password-final-9' },
    });
    assertStatus(changed, 200);
    admin = await signIn(urls[1]!, 'admin', 'admin-password-final-9');
    group = await createGroup(urls[0]!, admin.token, 'G');
  });
  after(async () => {
    for (const bin of bins) bin.kill();
    urls = [];
    await database.drop();
  });

  /** Sends `batches` at once, alternating between the two processes. */
  const ingestThroughBoth = (secret: string, batches: unknown[][]) => Promise.all(batches.map((batch, b) => ingest(urls[b % 2]!, secret, batch)));

  it('accepts exactly max_entries from 10 concurrent batches sent through two processes', async () => {
    for (const round of [1, 2, 3]) {
      const project = await createProject(urls[0]!, admin.token, group, `entries-${round}`, { max_entries: 37 });
      const key = await createKey(urls[1]!, admin.token, project);
      const batches = Array.from({ length: 10 }, (_, b) => Array.from({ length: 10 }, (_, i) => entry(b * 10 + i)));
      const results = await ingestThroughBoth(key.secret, batches);
      for (const r of results) assertStatus(r, 202);
      assert.equal(
        results.reduce((sum, r) => sum + r.body.accepted, 0),
        37,
        `round ${round}`,
      );
      assert.equal(
        results.reduce((sum, r) => sum + r.body.rejected.length, 0),
        63,
      );
      // Both processes read the same counters, equal to the rows stored.
      for (const url of urls) {
        const usage = await api(url, 'GET', `/v1/projects/${project}`, { token: admin.token });
        assert.equal(usage.body.entry_count, 37);
      }
      const { items } = await queryAllPages(urls[1]!, admin.token, [['project_id', String(project)]], 200);
      assert.equal(items.length, 37);
    }
  });

  it('accepts exactly max_bytes from concurrent batches sent through two processes', async () => {
    const size = Buffer.byteLength(JSON.stringify(entry(0)));
    const project = await createProject(urls[0]!, admin.token, group, 'bytes', { max_bytes: size * 23 });
    const key = await createKey(urls[0]!, admin.token, project);
    const results = await ingestThroughBoth(
      key.secret,
      Array.from({ length: 10 }, () => Array.from({ length: 5 }, () => entry(0))),
    );
    assert.equal(
      results.reduce((sum, r) => sum + r.body.accepted, 0),
      23,
    );
    const usage = await api(urls[1]!, 'GET', `/v1/projects/${project}`, { token: admin.token });
    assert.deepEqual([usage.body.entry_count, usage.body.total_bytes], [23, size * 23]);
  });
});
