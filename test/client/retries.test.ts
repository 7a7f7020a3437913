/**
 * The ingestion client's retries. A small real server in front of a real
 * logkeep answers what logkeep never sends on ingestion (5xx, 429 with
 * Retry-After, a cut connection) and then forwards to logkeep; the client's
 * clock and jitter are injected so every wait is checked exactly. 400, 401,
 * 403 and 413 are never retried: the batch goes to `onError` once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IngestBatchError, IngestClient, type IngestRetry } from 'logkeep/client';
import { api, startService, type RunningService } from '../support/service.js';
import { ManualClock, entry, newProject, startFrontServer, storedEntries, type FrontAnswer, type TestProject } from './client-support.js';
import { waitUntil } from '../support/wait.js';

const BACKOFF = { baseDelayMs: 100, maxDelayMs: 1000 };

describe('ingest client retries', () => {
  let svc: RunningService;
  let project: TestProject;
  before(async () => {
    svc = await startService('file', { settings: { maxIngestBodyBytes: 4096 } });
    project = await newProject(svc.url, 'retries');
  });
  after(() => svc.stop({ dropDatabase: true }));

  /** A client in front of a scripted server; collects retries and errors. */
  async function scripted(script: (n: number) => FrontAnswer, options: { maxAttempts?: number; secretKey?: string; target?: TestProject } = {}) {
    const target = options.target ?? (await newProject(svc.url, `p${Math.random().toString(36).slice(2)}`));
    const front = await startFrontServer(svc.url, script);
    const clock = new ManualClock(Date.UTC(2025, 0, 1, 12, 0, 0));
    const retries: IngestRetry[] = [];
    const errors: IngestBatchError[] = [];
    const client = new IngestClient({
      url: front.url,
      secretKey: options.secretKey ?? target.secret,
      clock,
      random: () => 0.5,
      backoff: BACKOFF,
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      onRetry: (r) => retries.push(r),
      onError: (e) => errors.push(e),
    });
    /** Waits for the client's next retry wait, then lets it elapse. */
    const elapseRetry = async (expectedMs: number) => {
      await waitUntil(() => clock.pending().includes(expectedMs), `a retry wait of ${expectedMs} ms`);
      clock.advance(expectedMs);
    };
    return { target, front, clock, client, retries, errors, elapseRetry };
  }

  it('retries 5xx with capped exponential backoff and full jitter, then delivers once', async () => {
    const statuses = [500, 502, 503, 504, 500, 503];
    const t = await scripted((n) => (n < statuses.length ? { status: statuses[n]!, body: '<html>bad gateway</html>' } : 'forward'));
    await t.client.log(entry(1));
    const flushed = t.client.flush();
    // random 0.5 → half of min(1000, 100·2^(k-1)).
    for (const wait of [50, 100, 200, 400, 500, 500]) await t.elapseRetry(wait);
    await flushed;
    assert.deepEqual(
      t.retries.map((r) => [r.retry, r.delayMs, r.status]),
      [
        [1, 50, 500],
        [2, 100, 502],
        [3, 200, 503],
        [4, 400, 504],
        [5, 500, 500],
        [6, 500, 503],
      ],
    );
    assert.deepEqual(
      t.front.requests.map((r) => r.status),
      [...statuses, 202],
    );
    assert.deepEqual(t.errors, []);
    assert.deepEqual(
      (await storedEntries(svc.url, t.target)).map((e) => e.n),
      [1],
    );
    assert.equal(t.client.stats.retries, 6);
    await t.client.close();
    await t.front.close();
  });

  it('honours Retry-After in seconds and as an HTTP date, on 429 and on 503', async () => {
    const answers: FrontAnswer[] = [
      { status: 429, headers: { 'retry-after': '2' }, body: '{"error":"too_many_requests","message":"wait 2 seconds"}' },
      // The manual clock starts at 12:00:00 and stands at 12:00:02 after the first wait: the date is 3 s later.
      { status: 503, headers: { 'retry-after': 'Wed, 01 Jan 2025 12:00:05 GMT' } },
      { status: 429, headers: { 'retry-after': 'whenever' } },
    ];
    const t = await scripted((n) => answers[n] ?? 'forward');
    await t.client.log(entry(1));
    const flushed = t.client.flush();
    await t.elapseRetry(2000);
    await t.elapseRetry(3000);
    await t.elapseRetry(200); // unparsable: backoff for the third retry (0.5 · 400)
    await flushed;
    assert.deepEqual(
      t.retries.map((r) => r.delayMs),
      [2000, 3000, 200],
    );
    assert.match(t.retries[0]!.reason, /429 too_many_requests/);
    assert.deepEqual(
      (await storedEntries(svc.url, t.target)).map((e) => e.n),
      [1],
    );
    await t.client.close();
    await t.front.close();
  });

  it('retries a connection cut before the answer, and a refused connection', async () => {
    const t = await scripted((n) => (n < 2 ? 'cut' : 'forward'));
    await t.client.log(entry(1));
    const flushed = t.client.flush();
    await t.elapseRetry(50);
    await t.elapseRetry(100);
    await flushed;
    assert.deepEqual(
      t.retries.map((r) => r.status),
      [null, null],
    );
    assert.deepEqual(
      (await storedEntries(svc.url, t.target)).map((e) => e.n),
      [1],
    );
    await t.client.close();
    await t.front.close();

    // Nobody listening at all: ECONNREFUSED is retried the same way.
    const refused = new IngestClient({
      url: t.front.url,
      secretKey: t.target.secret,
      maxAttempts: 2,
      backoff: { baseDelayMs: 1 },
      onError: (e) => t.errors.push(e),
    });
    await refused.log(entry(2));
    await refused.close();
    assert.equal(t.errors.length, 1);
    assert.equal(t.errors[0]!.kind, 'retries_exhausted');
    assert.equal(t.errors[0]!.status, null);
    assert.match(t.errors[0]!.message, /ECONNREFUSED/);
  });

  it('gives a batch up after maxAttempts and moves on to the next one', async () => {
    const t = await scripted((n) => (n < 3 ? { status: 503 } : 'forward'), { maxAttempts: 3 });
    await t.client.log(entry(1));
    const first = t.client.flush();
    await t.elapseRetry(50);
    await t.elapseRetry(100);
    await first;
    assert.equal(t.errors.length, 1);
    const [error] = t.errors;
    assert.ok(error instanceof IngestBatchError);
    assert.deepEqual([error.kind, error.status, error.attempts, error.entries.map((e) => e.n)], ['retries_exhausted', 503, 3, [1]]);
    await t.client.log(entry(2));
    await t.client.close();
    assert.deepEqual(
      (await storedEntries(svc.url, t.target)).map((e) => e.n),
      [2],
    );
    assert.deepEqual([t.client.stats.failed, t.client.stats.accepted], [1, 1]);
    await t.front.close();
  });

  it('never retries 401 (unknown key), 403 project_blocked, 413 or 400: one request, onError, entries not re-queued', async () => {
    // 401 and 403 and 413 come from logkeep itself; 400 from the front server (logkeep only sends it for a non-array body).
    const cases: {
      name: string;
      status: number;
      code: string | null;
      prepare: () => Promise<{ secretKey: string; target: TestProject; entry: Record<string, unknown>; script?: (n: number) => FrontAnswer }>;
    }[] = [
      {
        name: 'unknown key',
        status: 401,
        code: 'unauthorized',
        prepare: async () => ({ secretKey: 'slk_not-a-key', target: project, entry: entry(1) }),
      },
      {
        name: 'blocked project',
        status: 403,
        code: 'project_blocked',
        prepare: async () => {
          const target = await newProject(svc.url, 'blocked');
          const res = await api(svc.url, 'POST', `/v1/projects/${target.projectId}/block`, { token: target.admin.token });
          assert.equal(res.status, 200);
          return { secretKey: target.secret, target, entry: entry(2) };
        },
      },
      {
        name: 'body over the limit',
        status: 413,
        code: 'payload_too_large',
        prepare: async () => ({ secretKey: project.secret, target: project, entry: entry(3, { pad: 'x'.repeat(5000) }) }),
      },
      {
        name: 'bad request from a proxy',
        status: 400,
        code: 'invalid_request',
        prepare: async () => ({
          secretKey: project.secret,
          target: project,
          entry: entry(4),
          script: () => ({ status: 400, body: '{"error":"invalid_request","message":"no"}' }),
        }),
      },
    ];
    for (const c of cases) {
      const prepared = await c.prepare();
      const t = await scripted(prepared.script ?? (() => 'forward'), { secretKey: prepared.secretKey, target: prepared.target });
      await t.client.log(prepared.entry as never);
      await t.client.flush();
      assert.equal(t.front.requests.length, 1, `${c.name}: exactly one request`);
      assert.equal(t.retries.length, 0, `${c.name}: no retry`);
      assert.equal(t.errors.length, 1, `${c.name}: one onError`);
      const [error] = t.errors;
      assert.deepEqual([error!.kind, error!.status, error!.code, error!.attempts], ['refused', c.status, c.code, 1], c.name);
      assert.deepEqual(error!.entries, [prepared.entry], `${c.name}: the entries as sent`);
      assert.deepEqual([t.client.stats.failed, t.client.stats.buffered, t.client.stats.accepted], [1, 0, 0], c.name);
      // Nothing comes back into the buffer: closing sends no further request.
      await t.client.close();
      assert.equal(t.front.requests.length, 1, `${c.name}: still one request after close`);
      await t.front.close();
    }
    assert.equal((await storedEntries(svc.url, project)).length, 0);
  });

  it('close() gives up after closeTimeoutMs and reports what was left as closed', async () => {
    const t = await scripted(() => ({ status: 503 }));
    const errors: IngestBatchError[] = [];
    const client = new IngestClient({
      url: t.front.url,
      secretKey: t.target.secret,
      clock: t.clock,
      random: () => 0.5,
      backoff: BACKOFF,
      maxBatchEntries: 2,
      closeTimeoutMs: 5000,
      onError: (e) => errors.push(e),
    });
    for (let i = 0; i < 5; i++) await client.log(entry(i));
    let closed = false;
    const closing = client.close().then(() => (closed = true));
    await waitUntil(() => t.clock.pending().includes(50), 'a retry wait');
    t.clock.advance(50);
    await waitUntil(() => t.clock.pending().includes(100), 'the second retry wait');
    assert.equal(closed, false);
    t.clock.advance(4950);
    await closing;
    assert.deepEqual(
      errors.map((e) => [e.kind, e.entries.map((x) => x.n)]),
      [
        ['closed', [0, 1]],
        ['closed', [2, 3]],
        ['closed', [4]],
      ],
    );
    assert.equal(client.stats.failed, 5);
    await t.client.close();
    await t.front.close();
  });

  it('keeps delivering when a callback throws (the throw becomes a process warning)', async () => {
    const t = await scripted(() => 'forward');
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const client = new IngestClient({
        url: t.front.url,
        secretKey: t.target.secret,
        onRejected: () => {
          throw new Error('callback bug');
        },
      });
      await client.log({ level: 'info' } as never);
      await client.log(entry(1));
      await client.close();
      assert.equal(client.stats.accepted, 1);
      await waitUntil(() => warnings.some((w) => /callback bug/.test(w)), 'the warning');
    } finally {
      process.off('warning', onWarning);
      await t.client.close();
      await t.front.close();
    }
  });
});
