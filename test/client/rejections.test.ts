/**
 * Per-entry rejections inside a 202, from a real logkeep: each rejected
 * entry reaches `onRejected` with the entry as it was sent and logkeep's
 * code and message, its neighbours are stored, and nothing is retried.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IngestClient, type IngestRejection } from 'logkeep/client';
import { startService, type RunningService } from '../support/service.js';
import { entry, newProject, storedEntries } from './client-support.js';

describe('ingest client rejections', () => {
  let svc: RunningService;
  before(async () => {
    svc = await startService('file');
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('reports validation_error entries with the original entry and stores the rest', async () => {
    const project = await newProject(svc.url, 'validation');
    const rejections: IngestRejection[] = [];
    const errors: unknown[] = [];
    const client = new IngestClient({ url: svc.url, secretKey: project.secret, onRejected: (r) => rejections.push(r), onError: (e) => errors.push(e) });
    await client.log(entry(0));
    await client.log({ level: 'loud', event: 'bad level', timestamp: '2025-01-01T00:00:00Z', n: 1 } as never);
    await client.log(entry(2));
    await client.log({ level: 'info', timestamp: '2025-01-01T00:00:00Z', n: 3 } as never);
    await client.log({ level: 'info', event: 'has an id', id: 7, n: 4 });
    await client.close();
    assert.deepEqual(
      rejections.map((r) => [r.entry.n, r.error]),
      [
        [1, 'validation_error'],
        [3, 'validation_error'],
        [4, 'validation_error'],
      ],
    );
    assert.deepEqual(rejections[0]!.entry, { level: 'loud', event: 'bad level', timestamp: '2025-01-01T00:00:00Z', n: 1 });
    assert.ok(rejections.every((r) => typeof r.message === 'string' && r.message.length > 0));
    assert.deepEqual(errors, []);
    assert.deepEqual([client.stats.accepted, client.stats.rejected, client.stats.failed, client.stats.batches], [2, 3, 0, 1]);
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      [0, 2],
    );
  });

  it('reports quota_exceeded entries, across batches', async () => {
    const project = await newProject(svc.url, 'quota', { max_entries: 3 });
    const rejections: IngestRejection[] = [];
    const client = new IngestClient({ url: svc.url, secretKey: project.secret, maxBatchEntries: 2, onRejected: (r) => rejections.push(r) });
    for (let i = 0; i < 5; i++) await client.log(entry(i));
    await client.close();
    assert.deepEqual(
      rejections.map((r) => [r.entry.n, r.error]),
      [
        [3, 'quota_exceeded'],
        [4, 'quota_exceeded'],
      ],
    );
    assert.deepEqual([client.stats.accepted, client.stats.rejected, client.stats.batches], [3, 2, 3]);
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      [0, 1, 2],
    );
  });
});
