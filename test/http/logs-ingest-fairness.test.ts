/**
 * Fair ingestion over HTTP on both backends: a body counts against the
 * shared ingestion budget only for the bytes it has sent, so one key's
 * stalled bodies never hold up another project's batch; a body that sends
 * nothing for the idle timeout is answered 408 `request_timeout` and its
 * connection closed, while a slow body that keeps sending is served.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request, type ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { assertStatus } from '../support/actors.js';
import { ingest } from '../support/logs.js';
import { rawConnect, type RawConnection } from '../support/raw-http.js';

const entry = (i: number) => ({ level: 'info', event: `event ${i}`, timestamp: '2025-01-01T00:00:00Z' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  text: string;
  /** Resolves when the connection the answer came on is closed. */
  closed: Promise<void>;
}

interface OpenPost {
  req: ClientRequest;
  /** Settles with the answer once the server has sent it whole. */
  answer: Promise<Answer>;
}

/** Starts `POST /v1/logs` on a keep-alive connection and writes `first` (nothing more until the caller does). */
function openPost(url: string, secret: string, headers: Record<string, string>, first: string): OpenPost {
  const agent = new Agent({ keepAlive: true });
  const req = request(`${url}/v1/logs`, { method: 'POST', agent, headers: { authorization: `Bearer ${secret}`, ...headers } });
  let socket: Socket | null = null;
  req.on('socket', (s) => (socket = s));
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const s = socket!;
        const closed = s.destroyed ? Promise.resolve() : new Promise<void>((done) => s.once('close', () => done()));
        void closed.then(() => agent.destroy());
        resolve({ status: res.statusCode ?? 0, text, closed });
      });
    });
    req.on('error', reject);
  });
  answer.catch(() => {});
  if (first.length > 0) req.write(first);
  else req.flushHeaders();
  return { req, answer };
}

/** Resolves with `promise`'s value, or rejects once `ms` passed first (a bound far from any timing the test measures). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

describeEachBackend('fair ingestion', (backend) => {
  describe('with the default body limit and idle timeout', () => {
    const app = serviceWithAdmin(backend, { group: 'fair' });

    it("answers another project's batch promptly while one key's three chunked bodies stall", async () => {
      const stalling = (await app.newProject('stalling')).secret;
      const other = (await app.newProject('other')).secret;
      const stalled = [0, 1, 2].map(() => openPost(app.url, stalling, { 'transfer-encoding': 'chunked' }, '[{"level":"info",'));
      // Let the server start reading all three.
      await sleep(200);
      try {
        const res = await within(ingest(app.url, other, [entry(1), entry(2)]), 2000, 'the other project');
        assertStatus(res, 202);
        assert.equal(res.body.accepted, 2);
        // And a batch over 1 MiB, read into the spare buffer.
        const big = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => entry(i)));
        assert.ok(big.length > 1024 * 1024);
        const bigRes = await within(ingest(app.url, other, big), 5000, 'the other project, 1 MiB+');
        assertStatus(bigRes, 202);
        assert.equal(bigRes.body.accepted, 20_000);
      } finally {
        for (const s of stalled) s.req.destroy();
      }
    });
  });

  describe('with the default body limit, beside bodies that trickle', () => {
    const app = serviceWithAdmin(backend, { group: 'trickle' });

    /** A raw `POST /v1/logs` that sends `head` of its body, then one more byte every `everyMs` (under the 10 s idle timeout). */
    async function trickle(secret: string, framing: 'chunked' | number, everyMs: number) {
      const conn: RawConnection = await rawConnect(app.url);
      const length = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${framing}`;
      const piece = (text: string) => (framing === 'chunked' ? `${text.length.toString(16)}\r\n${text}\r\n` : text);
      conn.write(`POST /v1/logs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\n${length}\r\n\r\n${piece('[')}`);
      let sent = 1;
      const timer = setInterval(() => {
        conn.write(piece(' '));
        sent += 1;
      }, everyMs);
      return {
        conn,
        /** Sends the rest of the body at once: `[`, spaces, `]`, which is an empty batch. */
        finish() {
          clearInterval(timer);
          if (framing === 'chunked') conn.write(`${piece(']')}0\r\n\r\n`);
          else conn.write(`${' '.repeat(framing - sent - 1)}]`);
        },
        stop() {
          clearInterval(timer);
          conn.destroy();
        },
      };
    }

    it("answers another project's 3 MiB batch within seconds while bodies trickle a byte every 2 s, and the trickles still finish", async (t) => {
      const slow = (await app.newProject('trickling')).secret;
      const other = (await app.newProject('other')).secret;
      // Each may still grow to ~10 MB: the budget (10 MiB + 2 MiB) had no room for 3 MiB beside what it reserved for them.
      const tricklers = [await trickle(slow, 'chunked', 2000), await trickle(slow, 10_000_000, 2000)];
      try {
        await sleep(300);
        const big = JSON.stringify(Array.from({ length: 45_000 }, (_, i) => entry(i)));
        assert.ok(big.length > 3 * 1024 * 1024);
        const started = Date.now();
        const res = await within(ingest(app.url, other, big), 10_000, 'the 3 MiB batch beside the trickles');
        assertStatus(res, 202);
        assert.equal(res.body.accepted, 45_000);
        // About a rate window plus a review; the bound is far from both, and far below the 120 s a trickle may live.
        t.diagnostic(`the 3 MiB batch was answered after ${Date.now() - started} ms`);
        for (const trickler of tricklers) trickler.finish();
        for (const trickler of tricklers) {
          await trickler.conn.waitFor((text) => /\r\n\r\n\{"accepted":0,/.test(text), 10_000, 'the trickling body answered');
          assert.match(trickler.conn.received(), /^HTTP\/1\.1 202 /);
        }
      } finally {
        for (const trickler of tricklers) trickler.stop();
      }
    });
  });

  describe('with a short idle timeout', () => {
    const IDLE_MS = 300;
    const app = serviceWithAdmin(backend, { group: 'idle', ingestBodyIdleMs: IDLE_MS });

    it('answers 408 request_timeout and closes the connection when a body stops sending, chunked or declared', async () => {
      const key = (await app.newProject('idle')).secret;
      const chunked = openPost(app.url, key, { 'transfer-encoding': 'chunked' }, '[{"level":"info",');
      const declared = openPost(app.url, key, { 'content-length': '1000' }, '');
      for (const post of [chunked, declared]) {
        const answer = await within(post.answer, 10_000, 'the stalled body');
        assert.equal(answer.status, 408);
        const body = JSON.parse(answer.text);
        assert.equal(body.error, 'request_timeout');
        assert.equal(typeof body.message, 'string');
        await within(answer.closed, 5000, 'closing the connection');
      }
      // Their bytes went back: the project ingests as usual.
      assertStatus(await ingest(app.url, key, [entry(1)]), 202);
    });

    it('serves a slow body that keeps sending, however long it takes in all', async () => {
      const key = (await app.newProject('slow')).secret;
      const text = JSON.stringify([entry(1), entry(2), entry(3)]);
      const post = openPost(app.url, key, { 'transfer-encoding': 'chunked' }, '');
      // Pieces IDLE_MS / 3 apart: in all several idle timeouts long, never idle for one.
      const pieces = text.match(/.{1,12}/gs)!;
      for (const piece of pieces) {
        post.req.write(piece);
        await sleep(IDLE_MS / 3);
      }
      assert.ok(pieces.length * (IDLE_MS / 3) > 3 * IDLE_MS);
      post.req.end();
      const answer = await within(post.answer, 10_000, 'the slow body');
      assert.equal(answer.status, 202, answer.text);
      assert.equal(JSON.parse(answer.text).accepted, 3);
      post.req.destroy();
    });
  });
});
