/**
 * The HTTP server's own bounds, on both backends, over raw sockets: the
 * header size (a few hundred grants' worth, not a megabyte), the URL
 * length, slow headers and slow bodies cut by their timeouts, the idle
 * keep-alive timeout, and the cap on open connections. A live stream is a
 * response, so the request timeout never cuts it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertOpen, openRawStream } from '../support/sse.js';
import { getRequest, rawConnect, type RawConnection } from '../support/raw-http.js';

const pad = (bytes: number) => 'a'.repeat(bytes);
const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
/** The JSON body after the head: refusals from the HTTP parser come in the general envelope too. */
const envelopeOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: string; message: string };
/** Much longer than the short timeouts below, much shorter than Node's own defaults (60 s headers, 300 s request). */
const WAIT_MS = 15_000;

describeEachBackend('HTTP server bounds', (backend) => {
  describe('with the default bounds', () => {
    let svc: RunningService;
    const sockets: RawConnection[] = [];
    const exchange = async (request: string) => {
      const conn = await rawConnect(svc.url);
      sockets.push(conn);
      conn.write(request);
      await conn.waitFor((t) => /\r\n\r\n/.test(t), WAIT_MS, 'a response head');
      return conn;
    };

    before(async () => {
      svc = await startService(backend);
    });
    after(async () => {
      for (const s of sockets) s.destroy();
      await svc.stop({ dropDatabase: true });
    });

    it('answers 431 to headers over 64 KiB and closes, without reading them into a megabyte', async () => {
      const conn = await exchange(getRequest('/healthz', { 'X-Pad': pad(70 * 1024) }));
      assert.equal(statusOf(conn.received()), 431);
      await conn.waitClosed(WAIT_MS);
    });

    it('answers a request that is not HTTP with 400 in the general envelope, then closes', async () => {
      const conn = await exchange('NOT HTTP AT ALL\r\n\r\n');
      assert.equal(statusOf(conn.received()), 400);
      await conn.waitClosed(WAIT_MS);
      assert.equal(envelopeOf(conn.received()).error, 'invalid_request');
    });

    it('serves headers of a user with a few hundred grants (60 KiB)', async () => {
      const conn = await exchange(getRequest('/healthz', { 'X-Pad': pad(60 * 1024) }));
      assert.equal(statusOf(conn.received()), 200);
    });

    it('answers 400 invalid_request in the general envelope to a URL over 8 KiB', async () => {
      const conn = await exchange(getRequest(`/healthz?pad=${pad(8 * 1024)}`, { Connection: 'close' }));
      await conn.waitClosed(WAIT_MS);
      const text = conn.received();
      assert.equal(statusOf(text), 400);
      const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
      assert.equal(body.error, 'invalid_request');
      assert.match(body.message, /URL is longer than 8192 bytes/);
      const fits = await exchange(getRequest(`/healthz?pad=${pad(8 * 1024 - 20)}`));
      assert.equal(statusOf(fits.received()), 200);
    });
  });

  describe('with short timeouts', () => {
    let svc: RunningService;
    const sockets: RawConnection[] = [];
    const connect = async () => {
      const conn = await rawConnect(svc.url);
      sockets.push(conn);
      return conn;
    };

    before(async () => {
      svc = await startService(backend, {
        settings: {
          httpHeadersTimeoutSeconds: 1,
          httpRequestTimeoutSeconds: 2,
          httpKeepAliveTimeoutSeconds: 1,
          sseHeartbeatIntervalSeconds: 1,
        },
      });
    });
    after(async () => {
      for (const s of sockets) s.destroy();
      await svc.stop({ dropDatabase: true });
    });

    it('answers 408 and closes a connection whose headers never finish', async () => {
      const conn = await connect();
      conn.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      await conn.waitClosed(WAIT_MS);
      assert.equal(statusOf(conn.received()), 408);
      assert.equal(envelopeOf(conn.received()).error, 'request_timeout');
    });

    it('answers 408 and closes a request whose body keeps dribbling past the request timeout', async () => {
      const conn = await connect();
      conn.write('POST /v1/auth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n');
      // A byte every 200 ms: never idle, never finished.
      const drip = setInterval(() => conn.write('a'), 200);
      try {
        await conn.waitClosed(WAIT_MS);
      } finally {
        clearInterval(drip);
      }
      assert.equal(statusOf(conn.received()), 408);
    });

    it('announces and applies the keep-alive timeout to an idle connection', async () => {
      const conn = await connect();
      conn.write(getRequest('/healthz'));
      await conn.waitFor((t) => t.includes('{"status":"ok"}'), WAIT_MS, 'the health answer');
      assert.match(conn.received(), /\r\nKeep-Alive: timeout=1\r\n/i);
      await conn.waitClosed(WAIT_MS);
    });

    it('never cuts a live stream: it outlives the request timeout and still delivers', async () => {
      const admin = await signInAdmin(svc.url);
      const group = await createGroup(svc.url, admin.token, 'bounds');
      const project = await createProject(svc.url, admin.token, group, 'p');
      const key = await createKey(svc.url, admin.token, project);
      const stream = assertOpen(await openRawStream(svc.url, `/v1/logs/stream?project_id=${project}`, { token: admin.token }));
      try {
        // Three request timeouts; heartbeats pass meanwhile.
        await stream.waitFor((s) => s.comments.filter((c) => c === 'ping').length >= 6, WAIT_MS, 'six heartbeats');
        await ingestAll(svc.url, key.secret, [{ level: 'info', event: 'still here', timestamp: '2024-01-01T00:00:00Z' }]);
        const [entry] = await stream.waitForLogs(1, WAIT_MS);
        assert.equal(entry.event, 'still here');
        assert.equal(stream.closed, false);
      } finally {
        stream.close();
      }
    });
  });

  describe('with a connection cap', () => {
    let svc: RunningService;
    const sockets: RawConnection[] = [];
    const served = async () => {
      const conn = await rawConnect(svc.url);
      sockets.push(conn);
      conn.write(getRequest('/healthz'));
      return conn;
    };

    before(async () => {
      svc = await startService(backend, { settings: { httpMaxConnections: 2 } });
    });
    after(async () => {
      for (const s of sockets) s.destroy();
      await svc.stop({ dropDatabase: true });
    });

    it('closes connections past the cap unanswered, and takes new ones once a slot frees', async () => {
      const first = await served();
      const second = await served();
      for (const conn of [first, second]) await conn.waitFor((t) => t.includes('{"status":"ok"}'), WAIT_MS, 'the health answer');
      const third = await served();
      await third.waitClosed(WAIT_MS);
      assert.equal(third.receivedBytes(), 0);
      first.destroy();
      await first.waitClosed(WAIT_MS);
      // The server learns of the close a moment later: retry until it has.
      for (let attempt = 0; ; attempt++) {
        const next = await served();
        try {
          await next.waitFor((t) => t.includes('{"status":"ok"}'), WAIT_MS, 'the health answer');
          break;
        } catch (err) {
          if (attempt >= 20) throw err;
        }
      }
    });
  });
});
