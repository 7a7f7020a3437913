/**
 * readRequestBody with a decoder: the decoded bytes are what the limit and
 * the byte budget count, a decompression bomb stops at the limit having
 * pulled only a sliver of its compressed stream, and a corrupt stream is a
 * 400.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { createGunzip, createGzip, gzipSync } from 'node:zlib';
import { LogServiceError } from '../../lib/core/errors.js';
import { readRequestBody } from '../../lib/ingest/request-body.js';
import { ByteBudget } from '../../lib/ingest/byte-budget.js';
import { zeros } from '../support/compressed.js';

const LIMIT = 1024 * 1024;
const GIB = 1024 * 1024 * 1024;

function fakeRequest(): PassThrough & IncomingMessage {
  return new PassThrough() as unknown as PassThrough & IncomingMessage;
}

const isCode = (code: string) => (err: unknown) => err instanceof LogServiceError && err.code === code;

describe('readRequestBody with a decoder', () => {
  it('returns the decoded body and takes its decoded size from the budget', async () => {
    const budget = new ByteBudget(LIMIT * 2);
    const hold = budget.open(LIMIT);
    const text = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ event: `event ${i}` })));
    const req = fakeRequest();
    const reading = readRequestBody(req, { limit: LIMIT, hold, idleMs: 10_000, decoder: createGunzip() });
    req.end(gzipSync(text));
    const body = await reading;
    assert.equal(body.toString(), text);
    assert.equal(hold.held, Buffer.byteLength(text));
    hold.release();
    assert.equal(budget.free, LIMIT * 2);
  });

  it('stops a gzip body inflating to 1 GiB at the limit, having pulled little of it', async () => {
    const budget = new ByteBudget(LIMIT * 2);
    const hold = budget.open(LIMIT);
    const source = zeros(GIB);
    const req = fakeRequest();
    source.pipe(createGzip()).pipe(req);
    const rssBefore = process.memoryUsage().rss;
    await assert.rejects(readRequestBody(req, { limit: LIMIT, hold, idleMs: 10_000, decoder: createGunzip() }), isCode('payload_too_large'));
    // The reader never accepted more than the limit...
    assert.ok(hold.held <= LIMIT, `held ${hold.held}`);
    // ...and the bomb was inflated only about that far: the stream pipes hold a few chunks more, never the gigabyte.
    assert.ok(source.produced() < 16 * LIMIT, `zeros compressed: ${source.produced()}`);
    // Loose: twice the limit plus room for the test's own allocations.
    assert.ok(process.memoryUsage().rss - rssBefore < 2 * LIMIT + 32 * 1024 * 1024);
    source.destroy();
    hold.release();
  });

  it('counts the bytes as sent against the limit too', async () => {
    const hold = new ByteBudget(LIMIT * 2).open(LIMIT);
    const req = fakeRequest();
    // A gzip header whose file name never ends: bytes that decode to nothing, for as long as they are sent.
    const reading = readRequestBody(req, { limit: 1024, hold, idleMs: 10_000, decoder: createGunzip() });
    req.write(Buffer.from([0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0, 0x03]));
    req.write(Buffer.alloc(2048, 0x61));
    await assert.rejects(reading, isCode('payload_too_large'));
    assert.equal(hold.held, 0);
    hold.release();
  });

  it('waits for the shared budget with a compressed body, as with a plain one', async () => {
    const budget = new ByteBudget(LIMIT * 2);
    // An earlier body, read and awaiting its commit, holds nearly everything.
    const earlier = budget.open(LIMIT);
    assert.ok(earlier.take(LIMIT * 2 - 100));
    earlier.finishReading();
    const hold = budget.open(LIMIT);
    const text = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ event: `event ${i}` })));
    const req = fakeRequest();
    let settled = false;
    const reading = readRequestBody(req, { limit: LIMIT, hold, idleMs: 10_000, decoder: createGunzip() }).finally(() => (settled = true));
    req.end(gzipSync(text));
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false);
    assert.equal(hold.held, 0);
    earlier.release();
    assert.equal((await reading).toString(), text);
    assert.equal(hold.held, Buffer.byteLength(text));
    hold.release();
  });

  it('answers 400 for bytes that are not gzip', async () => {
    const hold = new ByteBudget(LIMIT * 2).open(LIMIT);
    const req = fakeRequest();
    const reading = readRequestBody(req, { limit: LIMIT, hold, idleMs: 10_000, decoder: createGunzip() });
    req.end(Buffer.from('[{"not": "gzip"}]'));
    await assert.rejects(reading, isCode('invalid_request'));
    hold.release();
  });

  it('answers 408 when a compressed body stops arriving', async () => {
    const hold = new ByteBudget(LIMIT * 2).open(LIMIT);
    const req = fakeRequest();
    const reading = readRequestBody(req, { limit: LIMIT, hold, idleMs: 50, decoder: createGunzip() });
    req.write(gzipSync('[]').subarray(0, 5));
    await assert.rejects(reading, isCode('request_timeout'));
    hold.release();
  });
});
