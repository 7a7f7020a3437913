/**
 * POST /v1/otlp/v1/logs over raw HTTP on both backends: protobuf and
 * OTLP/JSON bodies, plain or gzip; the answer an ExportLogsServiceResponse
 * in the request's encoding, with partial_success for records refused by
 * validation or a quota; and the refusals: 400 undecodable, 415 unknown
 * content type or encoding, 413 over the limit (a gzip bomb too), 401 as
 * on POST /v1/logs (revoked key), 403 project_blocked before the body.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api, type ApiResponse } from '../support/service.js';
import { assertDocumentedResponse } from '../support/openapi.js';
import { assertStatus } from '../support/actors.js';
import { queryAllPages } from '../support/logs.js';
import { gzipOfZeros } from '../support/compressed.js';
import protobuf from 'protobufjs';
import { OTLP } from '../../lib/ingest/otlp/otlp-schema.js';

const BODY_LIMIT = 64 * 1024;
const PATH = '/v1/otlp/v1/logs';
const NANOS = '1735787045678000000'; // 2025-01-02T03:04:05.678Z

/** An OTLP/JSON export of records with these bodies (strings), under one resource and scope. */
function exportOf(bodies: unknown[], service = 'raw-http'): Record<string, unknown> {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeLogs: [
          {
            scope: { name: 'raw', version: '2.0' },
            logRecords: bodies.map((body, i) => ({
              timeUnixNano: NANOS,
              severityNumber: 9,
              body: typeof body === 'string' ? { stringValue: body } : body,
              attributes: [{ key: 'request_id', value: { stringValue: `req-${i}` } }],
            })),
          },
        ],
      },
    ],
  };
}

function protobufOf(json: Record<string, unknown>): Buffer {
  return Buffer.from(OTLP.ExportLogsServiceRequest.encode(OTLP.ExportLogsServiceRequest.fromObject(json)).finish());
}

/** A too-deep body: refused by entry validation (nesting), in both encodings. */
function deepBody(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { stringValue: 'bottom' };
  for (let i = 0; i < levels; i++) value = { kvlistValue: { values: [{ key: 'k', value }] } };
  return value;
}

/** A length-delimited protobuf field, for bodies protobufjs will not encode. */
function field(number: number, bytes: Uint8Array): Buffer {
  return Buffer.from(
    protobuf.Writer.create()
      .uint32((number << 3) | 2)
      .bytes(bytes)
      .finish(),
  );
}

interface BinaryResponse {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

/** A request whose answer may be protobuf: the bytes are kept, and the answer is checked against the OpenAPI document. */
async function postBinary(url: string, secret: string | null, body: Buffer | string, headers: Record<string, string>): Promise<BinaryResponse> {
  const res = await fetch(url + PATH, { method: 'POST', body, headers: { ...(secret ? { authorization: `Bearer ${secret}` } : {}), ...headers } });
  const bytes = Buffer.from(await res.arrayBuffer());
  assertDocumentedResponse(url, 'POST', PATH, { status: res.status, headers: res.headers, text: bytes.toString('utf8') });
  return { status: res.status, headers: res.headers, bytes };
}

function postJson(url: string, secret: string | null, body: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return api(url, 'POST', PATH, { ...(secret ? { token: secret } : {}), raw, headers: { 'content-type': 'application/json', ...headers } });
}

function decodeResponse(bytes: Buffer): { rejectedLogRecords?: number; errorMessage?: string } | null {
  const message = OTLP.ExportLogsServiceResponse.toObject(OTLP.ExportLogsServiceResponse.decode(bytes), { longs: Number });
  return (message.partialSuccess as { rejectedLogRecords?: number; errorMessage?: string } | undefined) ?? null;
}

describeEachBackend('POST /v1/otlp/v1/logs', (backend) => {
  const app = serviceWithAdmin(backend, { group: 'otlp', settings: { maxIngestBodyBytes: BODY_LIMIT } });

  async function stored(project: number): Promise<any[]> {
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(project)]], 100);
    return items;
  }

  for (const gzip of [false, true]) {
    const how = gzip ? 'gzip ' : '';
    const encodingHeaders: Record<string, string> = gzip ? { 'content-encoding': 'gzip' } : {};
    const maybeGzip = (body: Buffer) => (gzip ? gzipSync(body) : body);

    it(`stores a ${how}protobuf export and answers an empty protobuf ExportLogsServiceResponse`, async () => {
      const { project, secret } = await app.newProject(`proto-${gzip}`);
      const res = await postBinary(app.url, secret, maybeGzip(protobufOf(exportOf(['one', 'two', 'three']))), {
        'content-type': 'application/x-protobuf',
        ...encodingHeaders,
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/x-protobuf');
      assert.equal(decodeResponse(res.bytes), null);
      const items = await stored(project);
      assert.deepEqual(items.map((i) => i.event).sort(), ['one', 'three', 'two']);
      assert.deepEqual(
        items.map((i) => [i.level, i.logger, i.timestamp, i.resource.service.name]),
        Array(3).fill(['info', 'raw', '2025-01-02T03:04:05.678Z', 'raw-http']),
      );
    });

    it(`stores a ${how}OTLP/JSON export and answers {}`, async () => {
      const { project, secret } = await app.newProject(`json-${gzip}`);
      const res = await postJson(app.url, secret, maybeGzip(Buffer.from(JSON.stringify(exportOf(['alpha', 'beta'])))), encodingHeaders);
      assertStatus(res, 200);
      assert.deepEqual(res.body, {});
      assert.deepEqual((await stored(project)).map((i) => [i.event, i.request_id]).sort(), [
        ['alpha', 'req-0'],
        ['beta', 'req-1'],
      ]);
    });
  }

  it('answers partial success under an entry quota: the first records stored, the rest counted in rejectedLogRecords', async () => {
    const { project, secret } = await app.newProject('quota-json', { max_entries: 3 });
    const res = await postJson(app.url, secret, exportOf(['q0', 'q1', 'q2', 'q3', 'q4']));
    assertStatus(res, 200);
    assert.equal(res.body.partialSuccess.rejectedLogRecords, '2');
    assert.match(res.body.partialSuccess.errorMessage, /^2 of 5 log records were rejected; 2 over a quota, 0 invalid; the first, record 3: .*max_entries/);
    assert.deepEqual((await stored(project)).map((i) => i.event).sort(), ['q0', 'q1', 'q2']);

    const proto = await app.newProject('quota-proto', { max_entries: 1 });
    const binary = await postBinary(app.url, proto.secret, protobufOf(exportOf(['p0', 'p1', 'p2'])), { 'content-type': 'application/x-protobuf' });
    assert.equal(binary.status, 200);
    const partial = decodeResponse(binary.bytes);
    assert.equal(partial?.rejectedLogRecords, 2);
    assert.match(partial?.errorMessage ?? '', /max_entries/);
    assert.deepEqual(
      (await stored(proto.project)).map((i) => i.event),
      ['p0'],
    );
  });

  it('refuses a record that fails entry validation in partial_success and stores the others', async () => {
    const { project, secret } = await app.newProject('invalid-record');
    const res = await postJson(app.url, secret, exportOf(['kept', deepBody(120), 'also kept']));
    assertStatus(res, 200);
    assert.equal(res.body.partialSuccess.rejectedLogRecords, '1');
    assert.match(res.body.partialSuccess.errorMessage, /record 1: The entry nests objects and arrays more than 100 levels deep/);
    assert.deepEqual((await stored(project)).map((i) => i.event).sort(), ['also kept', 'kept']);

    // Protobuf: a body nesting 60 arrays is 120 nested messages, past the decoder's limit of 100.
    const proto = await app.newProject('invalid-record-proto');
    const okRecord = (text: string) => field(2, field(5, field(1, Buffer.from(text))));
    let deep = field(1, Buffer.from('bottom'));
    for (let i = 0; i < 60; i++) deep = field(5, field(1, deep));
    const bytes = field(1, field(2, Buffer.concat([okRecord('kept'), field(2, field(5, deep)), okRecord('kept too')])));
    const binary = await postBinary(app.url, proto.secret, bytes, { 'content-type': 'application/x-protobuf' });
    assert.equal(binary.status, 200);
    const partial = decodeResponse(binary.bytes);
    assert.equal(partial?.rejectedLogRecords, 1);
    assert.match(partial?.errorMessage ?? '', /record 1: The record nests messages more than 100 levels deep/);
    assert.deepEqual((await stored(proto.project)).map((i) => i.event).sort(), ['kept', 'kept too']);
  });

  it('stores and judges an export of several hundred records (prepared off the event loop) as it does a small one', async () => {
    const bodies: unknown[] = Array.from({ length: 300 }, (_, i) => `record ${i} ${'x'.repeat(100)}`);
    const bytes = protobufOf(exportOf(bodies));
    assert.ok(bytes.length > 32 * 1024 && bytes.length < BODY_LIMIT, `protobuf body of ${bytes.length} bytes`);
    const proto = await app.newProject('large-proto');
    const binary = await postBinary(app.url, proto.secret, bytes, { 'content-type': 'application/x-protobuf' });
    assert.equal(binary.status, 200);
    assert.equal(decodeResponse(binary.bytes), null);
    const protoItems = await stored(proto.project);
    assert.deepEqual(protoItems.map((i) => i.request_id).sort(), bodies.map((_, i) => `req-${i}`).sort());
    assert.deepEqual(new Set(protoItems.map((i) => i.resource.service.name)), new Set(['raw-http']));

    // OTLP/JSON, with one record nesting too deep (protobufjs will not encode that one).
    bodies[7] = deepBody(120);
    const text = JSON.stringify(exportOf(bodies.slice(0, 200)));
    assert.ok(text.length > 32 * 1024 && text.length < BODY_LIMIT, `OTLP/JSON body of ${text.length} bytes`);
    const json = await app.newProject('large-json');
    const res = await postJson(app.url, json.secret, Buffer.from(text));
    assertStatus(res, 200);
    assert.equal(res.body.partialSuccess.rejectedLogRecords, '1');
    assert.match(res.body.partialSuccess.errorMessage, /record 7: The entry nests objects and arrays more than 100 levels deep/);
    assert.equal((await stored(json.project)).length, 199);

    // Refused as a whole, storing nothing: a large body that is not an export.
    const garbage = Buffer.concat([bytes.subarray(0, 40 * 1024), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])]);
    const refused = await app.newProject('large-undecodable');
    const bad = await postBinary(app.url, refused.secret, garbage, { 'content-type': 'application/x-protobuf' });
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.bytes.toString()).error, 'invalid_request');
    assertStatus(await postJson(app.url, refused.secret, Buffer.from(text.slice(0, -3))), 400, 'invalid_request');
    assert.deepEqual(await stored(refused.project), []);
  });

  it('answers 400 for a body that is not an export in its content type, or does not decompress, storing nothing', async () => {
    const { project, secret } = await app.newProject('undecodable');
    const proto = await postBinary(app.url, secret, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), { 'content-type': 'application/x-protobuf' });
    assert.equal(proto.status, 400);
    assert.equal(JSON.parse(proto.bytes.toString()).error, 'invalid_request');
    assertStatus(await postJson(app.url, secret, '{"resourceLogs": ['), 400, 'invalid_request');
    assertStatus(await postJson(app.url, secret, { resourceLogs: 'no' }), 400, 'invalid_request');
    assertStatus(await postJson(app.url, secret, Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' }), 400, 'invalid_request');
    assert.deepEqual(await stored(project), []);
  });

  it('answers 415 for a content type other than protobuf or JSON, and for an unknown encoding', async () => {
    const { secret } = await app.newProject('unsupported');
    const text = await postBinary(app.url, secret, 'hello', { 'content-type': 'text/plain' });
    assert.equal(text.status, 415);
    assert.equal(JSON.parse(text.bytes.toString()).error, 'unsupported_media_type');
    assertStatus(await postJson(app.url, secret, exportOf(['x']), { 'content-encoding': 'compress' }), 415, 'unsupported_media_type');
  });

  it('answers 413 over the body limit, also when a small gzip body inflates past it', async () => {
    const { project, secret } = await app.newProject('too-large');
    const big = exportOf(Array.from({ length: 400 }, (_, i) => `${'x'.repeat(200)} ${i}`));
    assertStatus(await postJson(app.url, secret, big), 413, 'payload_too_large');
    const bomb = await gzipOfZeros(16 * 1024 * 1024);
    const res = await postBinary(app.url, secret, bomb, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    assert.equal(res.status, 413);
    assert.deepEqual(await stored(project), []);
  });

  it('answers 401 as POST /v1/logs does: no key, an access token, an unknown or a revoked key', async () => {
    const body = exportOf(['x']);
    assertStatus(await postJson(app.url, null, body), 401, 'unauthorized');
    assertStatus(await postJson(app.url, app.admin.token, body), 401, 'unauthorized');
    assertStatus(await postJson(app.url, 'slk_not-a-real-key', body), 401, 'unauthorized');
    const { project, secret, keyId } = await app.newProject('revoked');
    assertStatus(await postJson(app.url, secret, body), 200);
    assertStatus(await api(app.url, 'DELETE', `/v1/projects/${project}/secret-keys/${keyId}`, { token: app.admin.token }), 204);
    assertStatus(await postJson(app.url, secret, body), 401, 'unauthorized');
    assertStatus(await postJson(app.url, secret, 'x'.repeat(BODY_LIMIT + 1)), 401, 'unauthorized');
  });

  it('answers 403 project_blocked before reading the body, then stores again after unblock', async () => {
    const { project, secret } = await app.newProject('blocked');
    assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/block`, { token: app.admin.token }), 200);
    assertStatus(await postJson(app.url, secret, exportOf(['x'])), 403, 'project_blocked');
    assertStatus(await postJson(app.url, secret, 'not json'), 403, 'project_blocked');
    const proto = await postBinary(app.url, secret, protobufOf(exportOf(['x'])), { 'content-type': 'application/x-protobuf' });
    assert.equal(proto.status, 403);
    assertStatus(await api(app.url, 'POST', `/v1/projects/${project}/unblock`, { token: app.admin.token }), 200);
    assertStatus(await postJson(app.url, secret, exportOf(['after'])), 200);
    assert.deepEqual(
      (await stored(project)).map((i) => i.event),
      ['after'],
    );
  });
});
