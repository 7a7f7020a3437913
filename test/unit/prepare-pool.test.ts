import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { PreparePool, WORKER_MIN_BYTES } from '../../lib/logs/prepare-pool.js';
import { prepareBody } from '../../lib/logs/batch-body.js';
import { LogServiceError } from '../../lib/core/errors.js';
import { silentLogger } from '../../lib/core/logger.js';

const TARGET = { projectId: 3, receivedAt: 1_700_000_000_000 };

/** A body of at least `bytes`, mixing valid and invalid entries. */
function bodyOf(bytes: number): Buffer {
  const values: unknown[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const value = i % 7 === 3 ? { level: 'loud', event: 'bad' } : { level: 'info', event: `event ${i} héllo`, timestamp: '2025-01-01T00:00:00Z', ctx: { n: i, ok: i % 2 === 0 } };
    values.push(value);
    size += JSON.stringify(value).length + 1;
  }
  return Buffer.from(JSON.stringify(values));
}

describe('PreparePool', () => {
  const pool = new PreparePool(1024 * 1024, silentLogger);
  after(() => pool.close());

  it('prepares a mid-sized body on the worker exactly as inline, and transfers it', async () => {
    const body = bodyOf(WORKER_MIN_BYTES * 2);
    const expected = await prepareBody(Buffer.from(body), TARGET);
    const copy = Buffer.from(body);
    const got = await pool.prepare(copy, TARGET);
    assert.equal(copy.length, 0, 'the buffer went to the worker');
    assert.deepEqual(got, expected);
    assert.ok(got.request.sizes.length > 100 && got.rejected.length > 10);
  });

  it('turns the worker\'s refusal into the same 400', async () => {
    const malformed = Buffer.from(`[${'{"level":"info"},'.repeat(4000)}`);
    assert.ok(malformed.length >= WORKER_MIN_BYTES);
    await assert.rejects(pool.prepare(malformed, TARGET), (err: unknown) => err instanceof LogServiceError && err.status === 400 && err.code === 'invalid_request');
    const notArray = Buffer.from(JSON.stringify({ pad: 'x'.repeat(WORKER_MIN_BYTES) }));
    await assert.rejects(pool.prepare(notArray, TARGET), (err: unknown) => err instanceof LogServiceError && err.status === 400);
  });

  it('prepares inline what the worker should not take: small bodies, views of a larger buffer, bodies at the size bound', async () => {
    const small = bodyOf(1000);
    const got = await pool.prepare(small, TARGET);
    assert.ok(small.length > 0, 'not transferred');
    assert.ok(got.request.sizes.length > 0);
    const inner = bodyOf(WORKER_MIN_BYTES * 2);
    const backing = Buffer.concat([inner, Buffer.alloc(10)]);
    const view = backing.subarray(0, inner.length);
    const fromView = await pool.prepare(view, TARGET);
    assert.equal(backing.length, inner.length + 10, 'the shared buffer was not transferred');
    assert.ok(view.equals(inner));
    assert.deepEqual(fromView, await prepareBody(inner, TARGET));
    const atBound = new PreparePool(WORKER_MIN_BYTES * 2, silentLogger);
    try {
      const big = bodyOf(WORKER_MIN_BYTES * 2);
      await atBound.prepare(big, TARGET);
      assert.ok(big.length > 0, 'a body at the bound stays on the event loop');
    } finally {
      await atBound.close();
    }
  });

  it('serves many batches at once, each with its own answer', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => bodyOf(WORKER_MIN_BYTES + i * 5000));
    const expected = await Promise.all(bodies.map((b) => prepareBody(Buffer.from(b), TARGET)));
    const got = await Promise.all(bodies.map((b) => pool.prepare(b, TARGET)));
    assert.deepEqual(got, expected);
  });

  it('prepares inline once closed', async () => {
    const closed = new PreparePool(1024 * 1024, silentLogger);
    await closed.close();
    const body = bodyOf(WORKER_MIN_BYTES * 2);
    await closed.prepare(body, TARGET);
    assert.ok(body.length > 0, 'not transferred');
  });

  it('turns an unexpected failure in the worker into a plain error, never a refusal carrying its text to the client', async () => {
    const body = bodyOf(WORKER_MIN_BYTES * 2);
    // A missing target makes preparation throw a TypeError inside the worker.
    const failed = pool.prepare(body, undefined as unknown as typeof TARGET);
    await assert.rejects(failed, (err: unknown) => {
      assert.ok(!(err instanceof LogServiceError), 'a LogServiceError would be answered with its message');
      assert.match(String(err), /TypeError/, 'the cause is kept for the service log');
      return true;
    });
    // The worker keeps serving.
    assert.ok((await pool.prepare(bodyOf(WORKER_MIN_BYTES * 2), TARGET)).request.sizes.length > 0);
  });
});
