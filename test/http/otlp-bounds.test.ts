/**
 * What one OTLP export may cost, over HTTP on both backends:
 * - what it stores is held to 16 × its decoded body + 512 KiB, however its
 *   resource attributes are copied (a 1 MiB resource attribute over 120
 *   empty records stored 120 MiB), while ordinary exports are untouched;
 * - empty ScopeLogs and ResourceLogs count: hundreds of thousands of them
 *   get a quick 400 in either encoding, the event loop stays free, and
 *   another project's batches prepared at the same time get their 202
 *   (they used to share the preparation worker's out-of-memory 500);
 * - a time out of range refuses only its record (it used to be a 500 for
 *   the whole export).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { describeEachBackend } from '../support/backends.js';
import { serviceWithAdmin } from '../support/fixture.js';
import { api } from '../support/service.js';
import { assertDocumentedResponse } from '../support/openapi.js';
import { assertStatus } from '../support/actors.js';
import { ingest, queryAllPages } from '../support/logs.js';
import { OTLP } from '../../lib/ingest/otlp/otlp-schema.js';
import { MAX_OTLP_GROUPS, OTLP_STORED_BYTES_BASE, OTLP_STORED_BYTES_PER_BODY_BYTE, storedBytesBudget } from '../../lib/ingest/otlp/otlp-request.js';

const PATH = '/v1/otlp/v1/logs';
const BODY_LIMIT = 10 * 1024 * 1024;
/** Far above what these bodies now cost the event loop, far below what they cost before (6–13 s). */
const LOOP_DELAY_BOUND_MS = 2000;
const NANOS = '1735787045678000000'; // 2025-01-02T03:04:05.678Z

type Encoding = 'json' | 'protobuf';

interface OtlpAnswer {
  status: number;
  body: any;
}

/** POST an export (gzip when asked); the answer decoded from its encoding and checked against the OpenAPI document. */
async function postExport(url: string, secret: string, encoding: Encoding, body: Buffer, gzip = false): Promise<OtlpAnswer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${secret}`,
    'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  };
  const res = await fetch(url + PATH, { method: 'POST', headers, body: gzip ? gzipSync(body) : body });
  const bytes = Buffer.from(await res.arrayBuffer());
  assertDocumentedResponse(url, 'POST', PATH, { status: res.status, headers: res.headers, text: bytes.toString('utf8') });
  if (res.status !== 200 || encoding === 'json') return { status: res.status, body: JSON.parse(bytes.toString('utf8')) };
  const message = OTLP.ExportLogsServiceResponse.toObject(OTLP.ExportLogsServiceResponse.decode(bytes), { longs: String });
  return { status: res.status, body: message };
}

function encode(json: Record<string, unknown>, encoding: Encoding): Buffer {
  return encoding === 'json'
    ? Buffer.from(JSON.stringify(json))
    : Buffer.from(OTLP.ExportLogsServiceRequest.encode(OTLP.ExportLogsServiceRequest.fromObject(json)).finish());
}

const attributes = (values: Record<string, string | number>) =>
  Object.entries(values).map(([key, value]) => ({ key, value: typeof value === 'number' ? { intValue: value } : { stringValue: value } }));

/** A length-delimited protobuf field. */
function field(number: number, bytes: Uint8Array): Buffer {
  return Buffer.from(
    protobuf.Writer.create()
      .uint32((number << 3) | 2)
      .bytes(bytes)
      .finish(),
  );
}

/** An ExportLogsServiceRequest of one ResourceLogs holding `count` empty ScopeLogs (two bytes each). */
function emptyScopeLogs(count: number): Buffer {
  return field(1, Buffer.alloc(count * 2, Buffer.from([(2 << 3) | 2, 0])));
}

/** A fixed64 protobuf field holding `value`. */
function fixed64(number: number, value: bigint): Buffer {
  const bytes = Buffer.alloc(9);
  bytes[0] = (number << 3) | 1;
  bytes.writeBigUInt64LE(value, 1);
  return bytes;
}

/** Runs `work` while measuring this process's (the service's) event-loop delay; the largest delay seen, in ms. */
async function withLoopDelay<T>(work: () => Promise<T>): Promise<{ result: T; maxDelayMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  try {
    const result = await work();
    return { result, maxDelayMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}

/** GET /healthz after `delayMs`, while an export is being read: its status once answered. */
async function healthzDuring(url: string, delayMs: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  return (await fetch(`${url}/healthz`)).status;
}

/** A POST /v1/logs batch of ~100 KiB: prepared on the worker thread, like the exports below. */
function ordinaryBatch(tag: string): unknown[] {
  return Array.from({ length: 400 }, (_, i) => ({ level: 'info', event: `${tag} ${i} ${'y'.repeat(200)}`, timestamp: '2025-01-02T03:04:05.678Z' }));
}

describeEachBackend('OTLP export bounds', (backend) => {
  const app = serviceWithAdmin(backend, { group: 'otlp-bounds', settings: { maxIngestBodyBytes: BODY_LIMIT } });

  async function usage(project: number): Promise<{ entries: number; bytes: number }> {
    const res = await api(app.url, 'GET', `/v1/projects/${project}`, { token: app.admin.token });
    assertStatus(res, 200);
    return { entries: res.body.entry_count, bytes: res.body.total_bytes };
  }

  for (const encoding of ['json', 'protobuf'] as const) {
    it(`holds a gzip ${encoding} export with a 1 MiB resource attribute over 120 empty records to ${OTLP_STORED_BYTES_PER_BODY_BYTE} × its decoded body + ${OTLP_STORED_BYTES_BASE} bytes`, async () => {
      const body = encode(
        {
          resourceLogs: [
            {
              resource: { attributes: attributes({ padding: 'x'.repeat(1024 * 1024) }) },
              scopeLogs: [{ logRecords: Array.from({ length: 120 }, () => ({})) }],
            },
          ],
        },
        encoding,
      );
      assert.ok(gzipSync(body).length < 4096, 'a few kilobytes sent');
      const { project, secret } = await app.newProject(`copied-resource-${encoding}`);
      const res = await postExport(app.url, secret, encoding, body, true);
      assert.equal(res.status, 200);
      const rejected = Number(res.body.partialSuccess.rejectedLogRecords);
      assert.ok(rejected > 0 && rejected < 120, `${rejected} refused`);
      assert.match(
        res.body.partialSuccess.errorMessage,
        new RegExp(
          `the first, record ${120 - rejected}: The export would store more than ${storedBytesBudget(body.length)} bytes of entries \\(${OTLP_STORED_BYTES_PER_BODY_BYTE} × its ${body.length} bytes \\+ ${OTLP_STORED_BYTES_BASE}\\)`,
        ),
      );
      const stored = await usage(project);
      assert.equal(stored.entries, 120 - rejected);
      assert.ok(stored.bytes <= storedBytesBudget(body.length), `${stored.bytes} bytes stored from a ${body.length}-byte export`);
      assert.ok(stored.bytes > storedBytesBudget(body.length) - 1.1 * 1024 * 1024, 'the records before the bound are stored');
    });
  }

  it('stores ordinary exports whole: an SDK batch under its usual resource, and thousands of records under a few small resource attributes', async () => {
    // What the OpenTelemetry JavaScript SDK's default detectors report, with a service name: its default batch of 512 records, each one character long.
    const sdkResource = attributes({
      'service.name': 'checkout',
      'service.version': '1.42.0',
      'deployment.environment.name': 'production',
      'service.instance.id': 'eefbbf91-5326-4e71-826c-245a04d9b506',
      'process.pid': 11464,
      'process.executable.name': 'node',
      'process.executable.path': '/usr/local/bin/node',
      'process.command': '/srv/app/dist/server.js',
      'process.runtime.version': '20.20.2',
      'process.runtime.name': 'nodejs',
      'process.runtime.description': 'Node.js',
      'process.owner': 'app',
      'os.type': 'linux',
      'os.version': '6.8.0-45-generic',
      'host.name': 'web-7f9c',
      'host.arch': 'amd64',
      'host.id': '3d1219c7c4c5404aaa1f6d2a48adfda4',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.version': '2.12.1',
    });
    const record = (i: number, text: string) => ({
      timeUnixNano: NANOS,
      observedTimeUnixNano: NANOS,
      severityNumber: 9,
      severityText: 'INFO',
      body: { stringValue: `${text}${i % 10}` },
    });
    const sdkBatch = {
      resourceLogs: [
        {
          resource: { attributes: sdkResource },
          scopeLogs: [{ scope: { name: 'checkout', version: '1.4.0' }, logRecords: Array.from({ length: 512 }, (_, i) => record(i, '')) }],
        },
      ],
    };
    const fewAttributes = attributes({
      'service.name': 'shop',
      'host.name': 'web-1',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.version': '2.12.1',
    });
    const manyRecords = {
      resourceLogs: [
        {
          resource: { attributes: fewAttributes },
          scopeLogs: [{ scope: { name: 'http' }, logRecords: Array.from({ length: 5000 }, (_, i) => record(i, 'GET /healthz 200 ')) }],
        },
      ],
    };
    for (const [name, json, count] of [
      ['sdk', sdkBatch, 512],
      ['thousands', manyRecords, 5000],
    ] as const) {
      for (const encoding of ['protobuf', 'json'] as const) {
        const { project, secret } = await app.newProject(`ordinary-${name}-${encoding}`);
        const res = await postExport(app.url, secret, encoding, encode(json, encoding), true);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, {}, `${name} ${encoding}: nothing refused`);
        assert.equal((await usage(project)).entries, count);
      }
    }
  });

  it(`refuses 450,000 empty ScopeLogs (gzip protobuf, prepared on the worker) with 400, while three batches of another project prepared beside it get 202`, async () => {
    const body = emptyScopeLogs(450_000);
    const exporter = await app.newProject('empty-scopes-worker');
    const other = await app.newProject('beside-empty-scopes');
    assert.ok(gzipSync(body).length < 2048 && body.length < 1024 * 1024);
    const batches = ['a', 'b', 'c'].map(ordinaryBatch);
    const { result, maxDelayMs } = await withLoopDelay(() =>
      Promise.all([
        postExport(app.url, exporter.secret, 'protobuf', body, true),
        healthzDuring(app.url, 20),
        ...batches.map((batch) => ingest(app.url, other.secret, batch)),
      ]),
    );
    const [exported, health, ...ingested] = result;
    for (const res of ingested) {
      assertStatus(res, 202);
      assert.deepEqual(res.body, { accepted: 400, rejected: [], rejected_count: 0 });
    }
    assert.equal(exported.status, 400);
    assert.equal(exported.body.error, 'invalid_request');
    assert.equal(exported.body.message, `The request carries more than ${MAX_OTLP_GROUPS} ResourceLogs and ScopeLogs.`);
    assert.equal(health, 200);
    assert.ok(maxDelayMs < LOOP_DELAY_BOUND_MS, `event loop held ${maxDelayMs} ms`);
    assert.equal((await usage(other.project)).entries, 1200);
    assert.equal((await usage(exporter.project)).entries, 0);
  });

  it('refuses 2,000,000 empty ScopeLogs (4 KiB of gzip protobuf) with 400, the event loop free meanwhile', async () => {
    const body = emptyScopeLogs(2_000_000);
    const { project, secret } = await app.newProject('empty-scopes-inline');
    const { result, maxDelayMs } = await withLoopDelay(() => Promise.all([postExport(app.url, secret, 'protobuf', body, true), healthzDuring(app.url, 20)]));
    assert.equal(result[0].status, 400);
    assert.match(result[0].body.message, /more than 100000 ResourceLogs and ScopeLogs/);
    assert.equal(result[1], 200);
    assert.ok(maxDelayMs < LOOP_DELAY_BOUND_MS, `event loop held ${maxDelayMs} ms`);
    assert.deepEqual(await usage(project), { entries: 0, bytes: 0 });
  });

  it('refuses OTLP/JSON of empty ScopeLogs or ResourceLogs with 400, from 300,000 (on the worker) to 10 MiB of them, the event loop free and another project served', async () => {
    const empties = (n: number) => `${'{},'.repeat(n - 1)}{}`;
    const bodies = [
      Buffer.from(`{"resourceLogs":[{"scopeLogs":[${empties(300_000)}]}]}`),
      Buffer.from(`{"resourceLogs":[{"scopeLogs":[${empties(3_400_000)}]}]}`),
      Buffer.from(`{"resourceLogs":[${empties(3_400_000)}]}`),
    ];
    const exporter = await app.newProject('empty-scopes-json');
    const other = await app.newProject('beside-empty-scopes-json');
    for (const body of bodies) {
      assert.ok(body.length <= BODY_LIMIT);
      const { result, maxDelayMs } = await withLoopDelay(() =>
        Promise.all([
          postExport(app.url, exporter.secret, 'json', body, true),
          healthzDuring(app.url, 20),
          ingest(app.url, other.secret, ordinaryBatch('json')),
        ]),
      );
      const [exported, health, beside] = result;
      assert.equal(exported.status, 400, `${body.length} bytes`);
      assert.equal(exported.body.message, `The request carries more than ${MAX_OTLP_GROUPS} ResourceLogs and ScopeLogs.`);
      assert.equal(health, 200);
      assertStatus(beside, 202);
      assert.ok(maxDelayMs < LOOP_DELAY_BOUND_MS, `event loop held ${maxDelayMs} ms for ${body.length} bytes`);
    }
    assert.equal((await usage(exporter.project)).entries, 0);
  });

  it('refuses only the record whose OTLP/JSON time is out of range, storing the others (no 500)', async () => {
    const { project, secret } = await app.newProject('time-range-json');
    const good = (text: string, extra: Record<string, unknown> = {}) => ({ timeUnixNano: NANOS, body: { stringValue: text }, ...extra });
    const records = [
      { timeUnixNano: 9e21, body: { stringValue: 'far future' } },
      good('good one'),
      { timeUnixNano: '9000000000000000000000', body: { stringValue: 'digits' } },
      { timeUnixNano: '18446744073709551616', body: { stringValue: 'one past uint64' } },
      { timeUnixNano: -1, body: { stringValue: 'negative' } },
      good('observed out of range', { observedTimeUnixNano: 1e300 }),
      { timeUnixNano: '18446744073709551615', body: { stringValue: 'largest uint64' } },
      good('good two'),
    ];
    const res = await postExport(app.url, secret, 'json', Buffer.from(JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] })));
    assert.equal(res.status, 200);
    assert.equal(res.body.partialSuccess.rejectedLogRecords, '5');
    assert.match(
      res.body.partialSuccess.errorMessage,
      /^5 of 8 log records were rejected; .*record 0: 'timeUnixNano' must be a count of nanoseconds from 0 to 18446744073709551615/,
    );
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(project)]], 100);
    assert.deepEqual(items.map((i) => [i.event, i.timestamp]).sort(), [
      ['good one', '2025-01-02T03:04:05.678Z'],
      ['good two', '2025-01-02T03:04:05.678Z'],
      ['largest uint64', '2554-07-21T23:34:33.709Z'],
    ]);
  });

  it('stores protobuf times up to the largest fixed64 beside a good record (no 500)', async () => {
    const { project, secret } = await app.newProject('time-range-protobuf');
    const text = (s: string) => field(5, field(1, Buffer.from(s)));
    const records = [
      Buffer.concat([fixed64(1, 2n ** 64n - 1n), text('largest')]),
      Buffer.concat([fixed64(1, 1735787045678000000n), text('good')]),
      Buffer.concat([fixed64(11, 2n ** 64n - 1n), text('observed largest')]),
      Buffer.concat([fixed64(1, 2n ** 63n), text('high bit')]),
    ];
    const body = field(1, field(2, Buffer.concat(records.map((r) => field(2, r)))));
    const res = await postExport(app.url, secret, 'protobuf', body);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});
    const { items } = await queryAllPages(app.url, app.admin.token, [['project_id', String(project)]], 100);
    assert.deepEqual(items.map((i) => [i.event, i.timestamp]).sort(), [
      ['good', '2025-01-02T03:04:05.678Z'],
      ['high bit', '2262-04-11T23:47:16.854Z'],
      ['largest', '2554-07-21T23:34:33.709Z'],
      ['observed largest', '2554-07-21T23:34:33.709Z'],
    ]);
  });
});
