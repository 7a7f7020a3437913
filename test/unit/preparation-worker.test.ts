import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { PreparationWorker, WORKER_MIN_BYTES } from '../../lib/ingest/preparation-worker.js';
import { OFFLOAD_MIN_BYTES, batchFromPlainBody } from '../../lib/ingest/plain-body.js';
import { LogServiceError } from '../../lib/core/errors.js';
import { silentLogger } from '../../lib/core/logger.js';
import { batchFromBody } from '../../lib/ingest/body-formats.js';
import { OTLP } from '../../lib/ingest/otlp/otlp-schema.js';

const TARGET = { projectId: 3, receivedAt: 1_700_000_000_000 };

/** A body of at least `bytes`, mixing valid and invalid entries. */
function bodyOf(bytes: number): Buffer {
  const values: unknown[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const value =
      i % 7 === 3
        ? { level: 'loud', event: 'bad' }
        : { level: 'info', event: `event ${i} héllo`, timestamp: '2025-01-01T00:00:00Z', ctx: { n: i, ok: i % 2 === 0 } };
    values.push(value);
    size += JSON.stringify(value).length + 1;
  }
  return Buffer.from(JSON.stringify(values));
}

/** An OTLP/JSON logs export of at least `bytes`; with `deep`, one record in nine nests too deep to be stored. */
function otlpExportOf(bytes: number, deep: boolean): Record<string, unknown> {
  const records: unknown[] = [];
  let nested: Record<string, unknown> = { stringValue: 'bottom' };
  for (let i = 0; i < 101; i++) nested = { arrayValue: { values: [nested] } };
  for (let size = 0; size < bytes; size += 60) {
    // ~60 bytes a record in protobuf, more in JSON
    const i = records.length;
    records.push({
      timeUnixNano: '1735787045678000000',
      severityNumber: 9,
      body: deep && i % 9 === 4 ? nested : { stringValue: `record ${i} héllo` },
      attributes: [{ key: 'request_id', value: { stringValue: `req-${i}` } }],
    });
  }
  return {
    resourceLogs: [
      { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'pool' } }] }, scopeLogs: [{ scope: { name: 'unit' }, logRecords: records }] },
    ],
  };
}

describe('PreparationWorker', () => {
  const worker = new PreparationWorker(1024 * 1024, silentLogger);
  after(() => worker.close());

  it('prepares a mid-sized body on the worker exactly as inline, and transfers it', async () => {
    const body = bodyOf(WORKER_MIN_BYTES * 2);
    const expected = await batchFromPlainBody(Buffer.from(body), TARGET);
    const copy = Buffer.from(body);
    const got = await worker.batchFromBody(copy, TARGET);
    assert.equal(copy.length, 0, 'the buffer went to the worker');
    assert.deepEqual(got, expected);
    assert.ok(got.request.sizes.length > 100 && got.rejected.length > 10);
  });

  it("turns the worker's refusal into the same 400", async () => {
    const malformed = Buffer.from(`[${'{"level":"info"},'.repeat(4000)}`);
    assert.ok(malformed.length >= WORKER_MIN_BYTES);
    await assert.rejects(
      worker.batchFromBody(malformed, TARGET),
      (err: unknown) => err instanceof LogServiceError && err.status === 400 && err.code === 'invalid_request',
    );
    const notArray = Buffer.from(JSON.stringify({ pad: 'x'.repeat(WORKER_MIN_BYTES) }));
    await assert.rejects(worker.batchFromBody(notArray, TARGET), (err: unknown) => err instanceof LogServiceError && err.status === 400);
  });

  it('prepares OTLP exports in both encodings on the worker exactly as inline, and refuses a body that is not one', async () => {
    // protobufjs will not encode the too-deep records: the protobuf export has none.
    const plain = otlpExportOf(WORKER_MIN_BYTES * 2, false);
    const bodies = {
      'otlp-json': Buffer.from(JSON.stringify(otlpExportOf(WORKER_MIN_BYTES * 2, true))),
      'otlp-protobuf': Buffer.from(OTLP.ExportLogsServiceRequest.encode(OTLP.ExportLogsServiceRequest.fromObject(plain)).finish()),
    } as const;
    for (const [format, body] of Object.entries(bodies) as [keyof typeof bodies, Buffer][]) {
      assert.ok(body.length >= WORKER_MIN_BYTES, `${format}: ${body.length} bytes`);
      const expected = await batchFromBody(Buffer.from(body), TARGET, format);
      const copy = Buffer.from(body);
      const got = await worker.batchFromBody(copy, TARGET, format);
      assert.equal(copy.length, 0, `${format}: the buffer went to the worker`);
      assert.deepEqual(got, expected, format);
      assert.ok(got.request.sizes.length > 300, format);
      assert.equal(got.rejected.length, format === 'otlp-json' ? Math.ceil((got.request.sizes.length + got.rejected.length - 4) / 9) : 0, format);
      const truncated = Buffer.from(body.subarray(0, body.length - 3));
      await assert.rejects(
        worker.batchFromBody(truncated, TARGET, format),
        (err: unknown) => err instanceof LogServiceError && err.status === 400 && err.code === 'invalid_request',
        format,
      );
    }
  });

  it('prepares inline what the worker should not take: small bodies, views of a larger buffer, bodies at the size bound', async () => {
    const small = bodyOf(1000);
    const got = await worker.batchFromBody(small, TARGET);
    assert.ok(small.length > 0, 'not transferred');
    assert.ok(got.request.sizes.length > 0);
    const inner = bodyOf(WORKER_MIN_BYTES * 2);
    const backing = Buffer.concat([inner, Buffer.alloc(10)]);
    const view = backing.subarray(0, inner.length);
    const fromView = await worker.batchFromBody(view, TARGET);
    assert.equal(backing.length, inner.length + 10, 'the shared buffer was not transferred');
    assert.ok(view.equals(inner));
    assert.deepEqual(fromView, await batchFromPlainBody(inner, TARGET));
    const atBound = new PreparationWorker(WORKER_MIN_BYTES * 2, silentLogger);
    try {
      const big = bodyOf(WORKER_MIN_BYTES * 2);
      await atBound.batchFromBody(big, TARGET);
      assert.ok(big.length > 0, 'a body at the bound stays on the event loop');
    } finally {
      await atBound.close();
    }
  });

  it('sends the long elements of a body prepared inline to the worker one by one, preparing exactly what inline preparation gives', async () => {
    const zeros = JSON.stringify({ level: 'info', event: 'zeros', timestamp: '2025-01-01T00:00:00Z', a: Array(400_000).fill(0) });
    const wide = JSON.stringify(
      Object.fromEntries([
        ['level', 'info'],
        ['event', 'wide'],
        ['timestamp', '2025-01-01T00:00:00Z'],
        ...Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i]),
      ]),
    );
    const short = (i: number) => JSON.stringify({ level: i % 2 ? 'info' : 'loud', event: `e${i}`, timestamp: '2025-01-01T00:00:00Z' });
    const elements = [short(0), zeros, short(1), `{${'x'.repeat(OFFLOAD_MIN_BYTES)}}`, wide, short(2)];
    const offloading = new PreparationWorker(1024 * 1024, silentLogger);
    const offloaded: number[] = [];
    const toWorker = offloading.entryFromText;
    Object.defineProperty(offloading, 'entryFromText', {
      value: (text: string) => {
        offloaded.push(text.length);
        return toWorker(text);
      },
    });
    try {
      const ndjson = Buffer.from(elements.join('\n'));
      assert.ok(ndjson.length >= 1024 * 1024, 'large enough to be prepared inline');
      assert.deepEqual(await offloading.batchFromBody(Buffer.from(ndjson), TARGET, 'ndjson'), await batchFromPlainBody(ndjson, TARGET, { format: 'ndjson' }));
      assert.deepEqual(offloaded, [zeros.length, OFFLOAD_MIN_BYTES + 2, wide.length]);
      const json = Buffer.from(`[${elements.filter((_, i) => i !== 3).join(',')}]`);
      assert.deepEqual(await offloading.batchFromBody(Buffer.from(json), TARGET), await batchFromPlainBody(json, TARGET));
      assert.equal(offloaded.length, 5);
    } finally {
      await offloading.close();
    }
  });

  it('serves many batches at once, each with its own answer', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => bodyOf(WORKER_MIN_BYTES + i * 5000));
    const expected = await Promise.all(bodies.map((b) => batchFromPlainBody(Buffer.from(b), TARGET)));
    const got = await Promise.all(bodies.map((b) => worker.batchFromBody(b, TARGET)));
    assert.deepEqual(got, expected);
  });

  it('prepares inline once closed', async () => {
    const closed = new PreparationWorker(1024 * 1024, silentLogger);
    await closed.close();
    const body = bodyOf(WORKER_MIN_BYTES * 2);
    await closed.batchFromBody(body, TARGET);
    assert.ok(body.length > 0, 'not transferred');
  });

  it('turns an unexpected failure in the worker into a plain error, never a refusal carrying its text to the client', async () => {
    const body = bodyOf(WORKER_MIN_BYTES * 2);
    // A missing target makes preparation throw a TypeError inside the worker.
    const failed = worker.batchFromBody(body, undefined as unknown as typeof TARGET);
    await assert.rejects(failed, (err: unknown) => {
      assert.ok(!(err instanceof LogServiceError), 'a LogServiceError would be answered with its message');
      assert.match(String(err), /TypeError/, 'the cause is kept for the service log');
      return true;
    });
    // The worker keeps serving.
    assert.ok((await worker.batchFromBody(bodyOf(WORKER_MIN_BYTES * 2), TARGET)).request.sizes.length > 0);
  });
});
