/**
 * POST /v1/logs with compressed bodies (gzip, deflate, br) and NDJSON, over
 * HTTP on both backends: entries stored and found through GET /v1/logs, the
 * decompressed size held to the body limit (a decompression bomb is 413),
 * a corrupt stream 400, an unknown or stacked encoding 415, and an NDJSON
 * line that is not an entry rejected by its index with the others stored.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, type ApiResponse } from '../support/service.js';
import { assertStatus } from '../support/actors.js';
import { queryAllPages } from '../support/logs.js';
import { gzipOfZeros } from '../support/compressed.js';

const BODY_LIMIT = 64 * 1024;
const ok = (i: number, extra: Record<string, unknown> = {}) => ({ level: 'info', event: `event ${i}`, timestamp: '2025-01-01T00:00:00Z', ...extra });

function post(url: string, secret: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return api(url, 'POST', '/v1/logs', { token: secret, raw: body, headers });
}

const ENCODERS = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;

describeEachBackend('POST /v1/logs: compressed and NDJSON bodies', (backend) => {
  const app = serviceWithAdmin(backend, { group: 'encodings', settings: { maxIngestBodyBytes: BODY_LIMIT } });

  async function storedEvents(project: number): Promise<string[]> {
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(project)]], 100);
    return items.map((item: { event: string }) => item.event).sort();
  }

  for (const [encoding, encode] of Object.entries(ENCODERS)) {
    it(`stores a ${encoding} body, found through GET /v1/logs`, async () => {
      const { project, secret } = await app.newProject(`enc-${encoding}`);
      const entries = Array.from({ length: 20 }, (_, i) => ok(i, { encoding }));
      const res = await post(app.url, secret, encode(Buffer.from(JSON.stringify(entries))), { 'content-encoding': encoding });
      assertStatus(res, 202);
      assert.deepEqual(res.body, { accepted: 20, rejected: [], rejected_count: 0 });
      const { items } = await queryAllPages(
        app.url,
        app.admin.token,
        [
          ['project_id', String(project)],
          ['context.encoding', encoding],
        ],
        100,
      );
      assert.equal(items.length, 20);
    });
  }

  it('takes identity and a Content-Encoding written in another case or with spaces', async () => {
    const { secret } = await app.newProject('enc-identity');
    assertStatus(await post(app.url, secret, JSON.stringify([ok(1)]), { 'content-encoding': 'identity' }), 202);
    assertStatus(await post(app.url, secret, gzipSync(JSON.stringify([ok(2)])), { 'content-encoding': ' GZip ' }), 202);
  });

  it('refuses a gzip body that inflates past the limit with 413, stores nothing, and serves the next request', async () => {
    const { project, secret } = await app.newProject('enc-bomb');
    // 16 MiB of zeros in about 16 KiB: well under the limit as sent, 256 times over it inflated.
    const bomb = await gzipOfZeros(16 * 1024 * 1024);
    assert.ok(bomb.length < BODY_LIMIT);
    assertStatus(await post(app.url, secret, bomb, { 'content-encoding': 'gzip' }), 413, 'payload_too_large');
    // A valid batch that decompresses to just over the limit is refused too.
    const padded = [ok(1, { filler: 'x'.repeat(BODY_LIMIT) })];
    assertStatus(await post(app.url, secret, gzipSync(JSON.stringify(padded)), { 'content-encoding': 'gzip' }), 413, 'payload_too_large');
    assert.deepEqual(await storedEvents(project), []);
    assertStatus(await post(app.url, secret, gzipSync(JSON.stringify([ok(1)])), { 'content-encoding': 'gzip' }), 202);
  });

  it('answers 400 for a corrupt or truncated stream and stores nothing', async () => {
    const { project, secret } = await app.newProject('enc-corrupt');
    const good = gzipSync(JSON.stringify([ok(1), ok(2)]));
    const corrupt = Buffer.from(good);
    corrupt.fill(0xff, 10, 20);
    assertStatus(await post(app.url, secret, corrupt, { 'content-encoding': 'gzip' }), 400, 'invalid_request');
    assertStatus(await post(app.url, secret, good.subarray(0, good.length - 6), { 'content-encoding': 'gzip' }), 400, 'invalid_request');
    assertStatus(await post(app.url, secret, JSON.stringify([ok(1)]), { 'content-encoding': 'deflate' }), 400, 'invalid_request');
    assertStatus(await post(app.url, secret, JSON.stringify([ok(1)]), { 'content-encoding': 'br' }), 400, 'invalid_request');
    assert.deepEqual(await storedEvents(project), []);
  });

  it('answers 415 unsupported_media_type for an unknown or stacked encoding, after the key checks', async () => {
    const { project, secret } = await app.newProject('enc-unknown');
    const body = JSON.stringify([ok(1)]);
    assertStatus(await post(app.url, secret, body, { 'content-encoding': 'compress' }), 415, 'unsupported_media_type');
    assertStatus(await post(app.url, secret, gzipSync(gzipSync(body)), { 'content-encoding': 'gzip, gzip' }), 415, 'unsupported_media_type');
    assertStatus(await post(app.url, secret, body, { 'content-encoding': 'gzip, br' }), 415, 'unsupported_media_type');
    assertStatus(await post(app.url, 'slk_not-a-real-key', body, { 'content-encoding': 'compress' }), 401, 'unauthorized');
    assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/block`, { token: app.admin.token }), 200);
    assertStatus(await post(app.url, secret, body, { 'content-encoding': 'compress' }), 403, 'project_blocked');
  });

  it('answers an NDJSON body as the JSON array of the same entries: a bad line is its index only', async () => {
    const { project, secret } = await app.newProject('ndjson');
    const entries: unknown[] = [ok(0), { level: 'info' }, ok(2), 'a string', ok(4)];
    const lines = entries.map((e) => JSON.stringify(e));
    // Blank lines (empty or spaces) are skipped; \r\n is a line end too; a last line without a newline counts.
    const ndjson = `\n${lines[0]}\r\n  \n${lines[1]}\n${lines[2]}\r\n\r\n${lines[3]}\n{not json\n${lines[4]}`;
    const res = await post(app.url, secret, ndjson, { 'content-type': 'application/x-ndjson' });
    assertStatus(res, 202);
    const asArray = [...entries.slice(0, 4), 'placeholder', entries[4]];
    const project2 = await app.newProject('ndjson-as-array');
    const reference = await post(app.url, project2.secret, JSON.stringify(asArray));
    assert.equal(res.body.accepted, reference.body.accepted);
    assert.deepEqual(
      res.body.rejected.map((r: { index: number }) => r.index),
      [1, 3, 4],
    );
    assert.deepEqual(
      res.body.rejected.filter((r: { index: number }) => r.index !== 4),
      reference.body.rejected.filter((r: { index: number }) => r.index !== 4),
    );
    assert.equal(res.body.rejected[2].error, 'validation_error');
    assert.deepEqual(await storedEvents(project), ['event 0', 'event 2', 'event 4']);
  });

  it('takes gzip NDJSON, and a JSON array whatever else the Content-Type says', async () => {
    const { project, secret } = await app.newProject('ndjson-gzip');
    const ndjson = `${Array.from({ length: 30 }, (_, i) => JSON.stringify(ok(i))).join('\n')}\n`;
    const res = await post(app.url, secret, gzipSync(ndjson), { 'content-type': 'application/x-ndjson; charset=utf-8', 'content-encoding': 'gzip' });
    assertStatus(res, 202);
    assert.deepEqual(res.body, { accepted: 30, rejected: [], rejected_count: 0 });
    assertStatus(await post(app.url, secret, JSON.stringify([ok(100)]), { 'content-type': 'text/plain' }), 202);
    assertStatus(await post(app.url, secret, ndjson, { 'content-type': 'application/json' }), 400, 'invalid_request');
    assert.equal((await storedEvents(project)).length, 31);
  });

  it('takes a gzip NDJSON file sent by curl', async () => {
    const { project, secret } = await app.newProject('ndjson-curl');
    const dir = await mkdtemp(join(tmpdir(), 'logkeep-curl-'));
    try {
      const file = join(dir, 'entries.ndjson.gz');
      await writeFile(file, gzipSync([ok(1), ok(2), ok(3)].map((e) => JSON.stringify(e)).join('\n')));
      const { stdout } = await promisify(execFile)('/usr/bin/curl', [
        '-sS',
        '--data-binary',
        `@${file}`,
        '-H',
        'Content-Encoding: gzip',
        '-H',
        'Content-Type: application/x-ndjson',
        '-H',
        `Authorization: Bearer ${secret}`,
        `${app.url}/v1/logs`,
      ]);
      assert.deepEqual(JSON.parse(stdout), { accepted: 3, rejected: [], rejected_count: 0 });
      assert.deepEqual(await storedEvents(project), ['event 1', 'event 2', 'event 3']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
