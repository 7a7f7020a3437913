/**
 * The ingestion client's `compressAboveBytes` against a real logkeep on both
 * backends, seen through a recording server in front of it: bodies from
 * that size on go gzip-compressed (fewer bytes on the wire, the same
 * entries stored), smaller ones and every body by default go as plain JSON.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { IngestClient } from 'logkeep/client';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { entry, newProject, startFrontServer, storedEntries } from './client-support.js';

describeEachBackend('ingest client compression', (backend) => {
  let svc: RunningService;
  before(async () => {
    svc = await startService(backend);
  });
  after(() => svc.stop({ dropDatabase: true }));

  it('sends bodies of compressAboveBytes or more gzip-compressed and smaller ones plain; logkeep stores both', async () => {
    const project = await newProject(svc.url, 'compressed');
    const front = await startFrontServer(svc.url);
    const client = new IngestClient({ url: front.url, secretKey: project.secret, compressAboveBytes: 2048, maxBatchEntries: 50 });
    const padding = 'a repetitive message that compresses well '.repeat(4);
    for (let i = 0; i < 50; i++) await client.log(entry(i, { padding }));
    await client.flush();
    await client.log(entry(50));
    await client.flush();

    assert.deepEqual(
      front.requests.map((r) => [r.contentEncoding ?? 'none', r.entries.length, r.status]),
      [
        ['gzip', 50, 202],
        ['none', 1, 202],
      ],
    );
    const plainBytes = Buffer.byteLength(JSON.stringify(front.requests[0]!.entries));
    assert.ok(front.requests[0]!.bytes * 4 < plainBytes, `gzip sent ${front.requests[0]!.bytes} bytes for ${plainBytes} of JSON`);
    assert.deepEqual(
      (await storedEntries(svc.url, project)).map((e) => e.n),
      Array.from({ length: 51 }, (_, i) => i),
    );
    assert.equal(client.stats.accepted, 51);
    await client.close();
    await front.close();
  });

  it('sends plain JSON by default, however large the body', async () => {
    const project = await newProject(svc.url, 'plain');
    const front = await startFrontServer(svc.url);
    const client = new IngestClient({ url: front.url, secretKey: project.secret });
    for (let i = 0; i < 200; i++) await client.log(entry(i, { padding: 'x'.repeat(500) }));
    await client.close();
    assert.ok(front.requests.length > 0 && front.requests.every((r) => r.contentEncoding === undefined && r.status === 202));
    assert.equal((await storedEntries(svc.url, project)).length, 200);
    await front.close();
  });

  it('refuses a compressAboveBytes that is not a positive integer', () => {
    for (const compressAboveBytes of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => new IngestClient({ url: svc.url, secretKey: 'slk_x', compressAboveBytes }), RangeError, String(compressAboveBytes));
    }
  });
});
