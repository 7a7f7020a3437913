/**
 * Live streams are bounded, on both backends: a cap per user and one for
 * the service (past either, `GET /v1/logs/stream` answers 429 with
 * `Retry-After` in the general envelope, and no stream starts), and a
 * reader that stops reading is closed after two heartbeats instead of
 * keeping its page (and its slot) forever.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { createActor, createGroup, createKey, createProject, signInAdmin, type TestActor } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { openRawStream, type RawStream, type RejectedStream } from '../support/sse.js';
import { getRequest, rawConnect, type RawConnection } from '../support/raw-http.js';

const WAIT_MS = 20_000;

function assertCapped(result: RawStream | RejectedStream): void {
  assert.ok(!('frames' in result), 'the stream was opened');
  assert.equal(result.status, 429, result.text);
  assert.equal(result.body.error, 'too_many_requests');
  assert.match(result.body.message, /retry in \d+ seconds/);
  assert.match(result.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/);
}

/** Opens streams until one is served (a closed stream frees its slot once the server has seen the close). */
async function openWhenFree(url: string, path: string, token: string): Promise<RawStream> {
  for (let attempt = 0; attempt < 60; attempt++) {
    const result = await openRawStream(url, path, { token });
    if ('frames' in result) return result;
    assertCapped(result);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('no stream slot came free');
}

describeEachBackend('live stream bounds', (backend) => {
  describe('caps per user and in total', () => {
    let svc: RunningService;
    let project: number;
    let alice: TestActor;
    let bob: TestActor;
    const open: RawStream[] = [];
    const stream = async (who: TestActor) => openRawStream(svc.url, `/v1/logs/stream?project_id=${project}`, { token: who.token });

    before(async () => {
      svc = await startService(backend, { settings: { sseMaxStreamsPerUser: 2, sseMaxStreams: 3 } });
      const admin = await signInAdmin(svc.url);
      const group = await createGroup(svc.url, admin.token, 'caps');
      project = await createProject(svc.url, admin.token, group, 'p');
      const grants = [{ role: 'user' as const, scope_type: 'project' as const, scope_id: project }];
      alice = await createActor(svc.url, admin.token, `alice-${backend}`, { grants });
      bob = await createActor(svc.url, admin.token, `bob-${backend}`, { grants });
    });
    after(async () => {
      for (const s of open) s.close();
      await svc.stop({ dropDatabase: true });
    });

    it('answers 429 with Retry-After to a user past the per-user cap, before any stream starts', async () => {
      for (let i = 0; i < 2; i++) {
        const s = await stream(alice);
        assert.ok('frames' in s, `stream ${i + 1} refused: ${s.status} ${'text' in s ? s.text : ''}`);
        open.push(s);
      }
      assertCapped(await stream(alice));
    });

    it('answers 429 to anyone past the service-wide cap', async () => {
      const s = await stream(bob);
      assert.ok('frames' in s, 'bob has a slot while the service has one');
      open.push(s);
      assertCapped(await stream(bob));
    });

    it('gives the slot back when a stream closes', async () => {
      open.shift()!.close();
      open.push(await openWhenFree(svc.url, `/v1/logs/stream?project_id=${project}`, alice.token));
    });
  });

  describe('a reader that stops reading', () => {
    let svc: RunningService;
    let project: number;
    let key: string;
    let reader: TestActor;
    let stalled: RawConnection | null = null;

    before(async () => {
      svc = await startService(backend, { settings: { sseHeartbeatIntervalSeconds: 1, sseMaxStreamsPerUser: 1 } });
      const admin = await signInAdmin(svc.url);
      const group = await createGroup(svc.url, admin.token, 'stall');
      project = await createProject(svc.url, admin.token, group, 'p');
      key = (await createKey(svc.url, admin.token, project)).secret;
      reader = await createActor(svc.url, admin.token, `reader-${backend}`, { grants: [{ role: 'user', scope_type: 'project', scope_id: project }] });
    });
    after(async () => {
      stalled?.destroy();
      await svc.stop({ dropDatabase: true });
    });

    it('is closed without an end frame once it has taken nothing for two heartbeats, freeing its slot', { timeout: 120_000 }, async () => {
      const conn = (stalled = await rawConnect(svc.url));
      conn.write(getRequest(`/v1/logs/stream?project_id=${project}`, { Authorization: `Bearer ${reader.token}` }));
      await conn.waitFor((t) => t.includes(': connected'), WAIT_MS, 'the stream to open');
      assert.match(conn.received(), /^HTTP\/1\.1 200/);
      conn.socket.pause();

      // Far more than the socket buffers on both sides hold: the server has to stop writing.
      const pad = 'x'.repeat(4000);
      let lastEvent = '';
      for (let batch = 0; batch < 12; batch++) {
        const entries = Array.from({ length: 250 }, (_, i) => ({ level: 'info', event: `fill-${batch}-${i}`, timestamp: '2024-01-01T00:00:00Z', pad }));
        await ingestAll(svc.url, key, entries);
        lastEvent = `fill-${batch}-249`;
      }

      // Its slot comes free once the server has closed it.
      const next = await openWhenFree(svc.url, `/v1/logs/stream?project_id=${project}`, reader.token);
      next.close();

      // What the kernel already held still arrives, then the close: no end frame, and not the last entries.
      conn.socket.resume();
      await conn.waitClosed(WAIT_MS);
      const text = conn.received();
      assert.ok(!text.includes('event: end'), 'a stalled stream gets no end frame');
      assert.ok(!text.includes(`"event":"${lastEvent}"`), 'the page held for it was dropped');
    });
  });
});
