/**
 * The capped rejection list, over HTTP on both backends: a 202 lists at
 * most MAX_LISTED_REJECTIONS rejections (the first by index, validation and
 * quota merged in index order) and counts every one in `rejected_count`, so
 * accepted + rejected_count is always the number of elements sent; an OTLP
 * export's partial_success counts every refused record, past the cap too.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertStatus } from '../support/actors.js';
import { ingest } from '../support/logs.js';
import { MAX_LISTED_REJECTIONS } from '../../lib/ingest/prepared-batch.js';

const valid = (i: number) => ({ level: 'info', event: `event ${i}`, timestamp: '2025-01-01T00:00:00Z' });
const invalid = (i: number) => ({ level: 'loud', event: `event ${i}`, timestamp: '2025-01-01T00:00:00Z' });
const NANOS = '1735787045678000000';

describeEachBackend('POST /v1/logs: a capped rejection list with a total count', (backend) => {
  const app = serviceWithAdmin(backend, { group: 'rejections' });

  const newKey = async (name: string, quota: { max_entries?: number } = {}): Promise<string> => (await app.newProject(name, quota)).secret;

  it('lists the first MAX_LISTED_REJECTIONS validation rejections and counts them all', async () => {
    const secret = await newKey('validation');
    const n = 5000;
    const entries = Array.from({ length: n }, (_, i) => (i % 5 === 0 ? valid(i) : invalid(i)));
    const res = await ingest(app.url, secret, entries);
    assertStatus(res, 202);
    assert.equal(res.body.accepted, n / 5);
    assert.equal(res.body.rejected_count, n - n / 5);
    assert.equal(res.body.rejected.length, MAX_LISTED_REJECTIONS);
    const expected = Array.from({ length: n }, (_, i) => i)
      .filter((i) => i % 5 !== 0)
      .slice(0, MAX_LISTED_REJECTIONS);
    assert.deepEqual(
      res.body.rejected.map((r: { index: number }) => r.index),
      expected,
    );
    // Nothing refused: an empty list and a zero count.
    assert.deepEqual((await ingest(app.url, secret, [valid(1)])).body, { accepted: 1, rejected: [], rejected_count: 0 });
  });

  it('merges quota rejections with validation ones under the same cap, in index order, counting both exactly', async () => {
    const secret = await newKey('quota', { max_entries: 100 });
    const n = 4000;
    // Even indices valid (quota takes the first 100 of them), odd ones invalid.
    const entries = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? valid(i) : invalid(i)));
    const res = await ingest(app.url, secret, entries);
    assertStatus(res, 202);
    assert.equal(res.body.accepted, 100);
    assert.equal(res.body.rejected_count, n - 100);
    assert.equal(res.body.rejected.length, MAX_LISTED_REJECTIONS);
    const expected = Array.from({ length: n }, (_, i) => i)
      .filter((i) => i % 2 === 1 || i >= 200)
      .slice(0, MAX_LISTED_REJECTIONS);
    assert.deepEqual(
      res.body.rejected.map((r: { index: number; error: string }) => [r.index, r.error]),
      expected.map((i) => [i, i % 2 === 1 ? 'validation_error' : 'quota_exceeded']),
    );
    // Only quota refusals past the cap.
    const full = await ingest(
      app.url,
      secret,
      Array.from({ length: 3000 }, (_, i) => valid(i)),
    );
    assertStatus(full, 202);
    assert.deepEqual([full.body.accepted, full.body.rejected_count, full.body.rejected.length], [0, 3000, MAX_LISTED_REJECTIONS]);
    assert.ok(full.body.rejected.every((r: { index: number; error: string }, i: number) => r.index === i && r.error === 'quota_exceeded'));
  });

  it("counts every refused OTLP record in partial_success, past the list's cap", async () => {
    const secret = await newKey('otlp', { max_entries: 10 });
    const records = Array.from({ length: 3000 }, (_, i) => ({ timeUnixNano: NANOS, severityNumber: 9, body: { stringValue: `record ${i}` } }));
    // One record in three is too deep to be stored: refused as invalid.
    let deep: Record<string, unknown> = { stringValue: 'bottom' };
    for (let i = 0; i < 101; i++) deep = { kvlistValue: { values: [{ key: 'k', value: deep }] } };
    for (let i = 0; i < records.length; i += 3) records[i]!.body = deep as { stringValue: string };
    const exported = { resourceLogs: [{ resource: {}, scopeLogs: [{ scope: { name: 'cap' }, logRecords: records }] }] };
    const res = await api(app.url, 'POST', '/v1/otlp/v1/logs', {
      token: secret,
      raw: JSON.stringify(exported),
      headers: { 'content-type': 'application/json' },
    });
    assertStatus(res, 200);
    assert.equal(res.body.partialSuccess.rejectedLogRecords, String(3000 - 10));
    assert.match(res.body.partialSuccess.errorMessage, /^2990 of 3000 log records were rejected; 1990 over a quota, 1000 invalid; the first, record 0: /);
  });
});
