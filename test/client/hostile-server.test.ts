/**
 * The ingestion client against a real hostile server (`node:http` on
 * 127.0.0.1): it reads no more of an answer than its bound and closes the
 * connection, believes a 202's counts only as far as they fit the batch it
 * sent, and gives up on an answer that trickles in past the total timeout
 * even though every byte resets the idle timeout.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IngestClient, type IngestBatchError, type IngestClientOptions, type IngestRejection } from 'logkeep/client';
import { MIN_ANSWER_BYTES, answerByteLimit } from '../../lib/client/ingest-answer.js';
import { answerHuge, answerJson, answerTrickle, startHostileServer, type HostileScript, type HostileServer } from './hostile-server.js';
import { entry } from './client-support.js';

const MiB = 1024 * 1024;
// What may sit in socket buffers and undici's stream past the bound before the close lands: generous.
const SLACK_BYTES = 16 * MiB;

describe('ingest client against a hostile server', () => {
  let server: HostileServer | null = null;
  let client: IngestClient | null = null;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = null;
    server = null;
  });

  async function clientFor(script: HostileScript, options: Partial<IngestClientOptions> = {}) {
    server = await startHostileServer(script);
    const rejections: IngestRejection[] = [];
    const errors: IngestBatchError[] = [];
    client = new IngestClient({
      url: server.url,
      secretKey: 'slk_hostile',
      backoff: { baseDelayMs: 1, maxDelayMs: 1 },
      onRejected: (r) => rejections.push(r),
      onError: (e) => errors.push(e),
      ...options,
    });
    return { client, server, rejections, errors };
  }

  async function send(c: IngestClient, count: number, from = 0): Promise<void> {
    for (let i = from; i < from + count; i++) await c.log(entry(i));
    await c.flush();
  }

  it('bounds what it reads of an answer to max(1 MiB, 1 KiB per entry sent)', () => {
    assert.equal(MIN_ANSWER_BYTES, MiB);
    assert.equal(answerByteLimit(1), MiB);
    assert.equal(answerByteLimit(500), MiB);
    assert.equal(answerByteLimit(4096), 4 * MiB);
  });

  it('stops reading a huge answer past the bound and closes the connection: 503 retried, 202 settled once, declared length not read at all', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const t = await clientFor((n, res, exchange) => {
        if (n === 0) answerHuge(res, exchange, 503, 64 * MiB, false);
        else if (n === 1) answerHuge(res, exchange, 202, 64 * MiB, false);
        else if (n === 2) answerHuge(res, exchange, 202, 192 * MiB, true);
        else answerJson(res, exchange, 202, { accepted: exchange.entries, rejected: [] });
      });
      await send(t.client, 2);
      await send(t.client, 3, 2);
      await send(t.client, 1, 5);
      await Promise.all(t.server.exchanges.map((e) => e.over));
      const [first, second, third] = t.server.exchanges;
      for (const exchange of [first!, second!, third!]) {
        assert.equal(exchange.closedEarly, true, 'the client closed the connection before the answer ended');
        assert.ok(exchange.written < SLACK_BYTES, `${exchange.written} bytes written of a huge answer`);
      }
      assert.deepEqual(
        t.server.exchanges.map((e) => e.entries),
        [2, 2, 3, 1],
        'the 503 retried once, each 202 settled its batch',
      );
      assert.deepEqual(t.errors, []);
      const { accepted, rejected, failed, batches, retries } = t.client.stats;
      assert.deepEqual({ accepted, rejected, failed, batches, retries }, { accepted: 6, rejected: 0, failed: 0, batches: 3, retries: 1 });
      await new Promise((resolve) => setImmediate(resolve));
      const tooLarge = warnings.filter((w) => (w as { code?: string }).code === 'LOGKEEP_INGEST_ANSWER_TOO_LARGE');
      assert.equal(tooLarge.length, 2);
      assert.match(tooLarge[0]!.message, /more than 1048576 bytes; the answer was not read, and the batch is not sent again/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("clamps a hostile 202's counts to the batch sent: accepted ≤ sent, one onRejected per valid listed index", async () => {
    const cases: { sent: number; answer: unknown; accepted: number; rejected: number; reported: [number, string][] }[] = [
      // The review's answer: a billion accepted and 20,000 rejections of entry 0, for 2 sent.
      { sent: 2, answer: { accepted: 1e9, rejected: Array.from({ length: 20_000 }, () => ({ index: 0 })) }, accepted: 2, rejected: 0, reported: [] },
      {
        sent: 2,
        answer: {
          accepted: 0,
          rejected: [
            ...Array.from({ length: 20_000 }, () => ({ index: 0 })),
            { index: -1, error: 'e', message: 'm' },
            { index: 2, error: 'e', message: 'm' },
            { index: 1.5, error: 'e', message: 'm' },
            { index: '1', error: 'e', message: 'm' },
            null,
            7,
            { index: 1, error: 'validation_error', message: 'bad' },
            { index: 1, error: 'again', message: 'again' },
          ],
        },
        accepted: 0,
        rejected: 2,
        reported: [
          [0, 'rejected'],
          [1, 'validation_error'],
        ],
      },
      { sent: 3, answer: { accepted: -5, rejected: [], rejected_count: 1e9 }, accepted: 0, rejected: 3, reported: [] },
      {
        sent: 3,
        answer: { accepted: 1.7, rejected: [{ index: 2, error: 'quota_exceeded', message: 'q' }], rejected_count: -1 },
        accepted: 1,
        rejected: 1,
        reported: [[2, 'quota_exceeded']],
      },
      { sent: 2, answer: { accepted: 2, rejected: [{ index: 0, error: 'e', message: 'm' }] }, accepted: 2, rejected: 0, reported: [] },
    ];
    for (const c of cases) {
      const t = await clientFor((_n, res, exchange) => answerJson(res, exchange, 202, c.answer));
      await send(t.client, c.sent);
      const { accepted, rejected, batches } = t.client.stats;
      assert.deepEqual({ accepted, rejected, batches }, { accepted: c.accepted, rejected: c.rejected, batches: 1 }, JSON.stringify(c.answer).slice(0, 120));
      assert.deepEqual(
        t.rejections.map((r) => [r.entry.n, r.error]),
        c.reported,
      );
      await t.client.close();
      await t.server.close();
      client = null;
      server = null;
    }
  });

  it('counts rejected_count when the server lists only the first rejections, and reports the listed ones', async () => {
    const t = await clientFor((_n, res, exchange) =>
      answerJson(res, exchange, 202, {
        accepted: 1,
        rejected: [
          { index: 1, error: 'validation_error', message: 'one' },
          { index: 3, error: 'quota_exceeded', message: 'three' },
        ],
        rejected_count: 4,
      }),
    );
    await send(t.client, 5);
    const { accepted, rejected } = t.client.stats;
    assert.deepEqual({ accepted, rejected }, { accepted: 1, rejected: 4 });
    assert.deepEqual(
      t.rejections.map((r) => [r.entry.n, r.error, r.message]),
      [
        [1, 'validation_error', 'one'],
        [3, 'quota_exceeded', 'three'],
      ],
    );
  });

  it('gives up on a 202 whose body trickles one byte a second once the total timeout passes, though each byte resets the idle timeout', async () => {
    const t = await clientFor((_n, res, exchange) => answerTrickle(res, exchange, '{"accepted":1,"rejected":[]}', 1000), {
      requestTimeoutMs: 5_000,
      requestTotalTimeoutMs: 1_500,
      maxAttempts: 1,
    });
    const started = Date.now();
    await send(t.client, 1);
    const elapsed = Date.now() - started;
    assert.equal(t.errors.length, 1);
    assert.equal(t.errors[0]!.kind, 'retries_exhausted');
    assert.match(t.errors[0]!.message, /no complete answer within 1500 ms/);
    assert.ok(elapsed >= 1_400 && elapsed < 10_000, `gave up after ${elapsed} ms`);
    await t.server.exchanges[0]!.over;
    assert.equal(t.server.exchanges[0]!.closedEarly, true);
    assert.ok(t.server.exchanges[0]!.written < 10, `${t.server.exchanges[0]!.written} bytes trickled`);
    assert.deepEqual([t.client.stats.accepted, t.client.stats.failed], [0, 1]);
  });

  it('takes the total timeout as an option, a positive integer', () => {
    assert.throws(() => new IngestClient({ url: 'http://127.0.0.1:9', secretKey: 'slk_x', requestTotalTimeoutMs: 0 }), RangeError);
    assert.throws(() => new IngestClient({ url: 'http://127.0.0.1:9', secretKey: 'slk_x', requestTotalTimeoutMs: 1.5 }), RangeError);
  });
});
