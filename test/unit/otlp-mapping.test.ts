/**
 * The LogRecord → entry mapping (lib/ingest/otlp/otlp-mapping.ts) and the two
 * readers that feed it, without a server: severity ranges and text, body
 * to event, time fallbacks, correlation fields, attribute nesting, and both
 * encodings of the same export giving the same entries.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  NO_BODY_EVENT,
  STRUCTURED_EVENT_CHARS,
  nestAttributes,
  otlpEntry as mapEntry,
  otlpLevel,
  otlpShared,
  type OtlpRecordInput,
  type OtlpResourceInput,
  type OtlpScopeInput,
} from '../../lib/ingest/otlp/otlp-mapping.js';
import { OTLP } from '../../lib/ingest/otlp/otlp-schema.js';
import { readProtobufRequest, nanosToMillis } from '../../lib/ingest/otlp/otlp-protobuf.js';
import { readJsonRequest, jsonNanosToMillis } from '../../lib/ingest/otlp/otlp-json.js';
import { MAX_OTLP_RECORDS, batchFromOtlp, type OtlpRequest } from '../../lib/ingest/otlp/otlp-request.js';
import { LogServiceError } from '../../lib/core/errors.js';
import protobuf from 'protobufjs';

const scope = { name: '', version: '', attributes: [], droppedAttributesCount: 0 };
const resource = { attributes: [], droppedAttributesCount: 0 };

function record(overrides: Partial<OtlpRecordInput> = {}): OtlpRecordInput {
  return {
    timeMs: null,
    observedTimeMs: null,
    severityNumber: 0,
    severityText: '',
    body: 'hello',
    attributes: [],
    droppedAttributesCount: 0,
    flags: 0,
    traceId: '',
    spanId: '',
    eventName: '',
    ...overrides,
  };
}

/** A length-delimited protobuf field. */
function field(number: number, bytes: Uint8Array): Buffer {
  return Buffer.from(
    protobuf.Writer.create()
      .uint32((number << 3) | 2)
      .bytes(bytes)
      .finish(),
  );
}

/** The entry of one record, its scope and resource. */
function otlpEntry(record: OtlpRecordInput, scope: OtlpScopeInput, resource: OtlpResourceInput, receivedAt: number): Record<string, unknown> {
  return mapEntry(record, otlpShared(scope, resource), receivedAt);
}

function entriesOf(request: OtlpRequest): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  request.groups.forEach((group, g) => {
    for (let i = group.first; i < group.first + group.count; i++)
      out.push(otlpEntry(request.record(i), request.scope(g), request.resource(group.resourceLogs), 0));
  });
  return out;
}

describe('OTLP severity → level', () => {
  it('maps the number ranges of the data model', () => {
    const expected: [number, string][] = [
      [1, 'debug'],
      [4, 'debug'],
      [5, 'debug'],
      [8, 'debug'],
      [9, 'info'],
      [12, 'info'],
      [13, 'warning'],
      [16, 'warning'],
      [17, 'error'],
      [20, 'error'],
      [21, 'critical'],
      [24, 'critical'],
    ];
    for (const [n, level] of expected) assert.equal(otlpLevel(n, 'ERROR'), level, `severity_number ${n}`);
  });

  it('reads the text, case ignored, when the number is unset or out of range; info otherwise', () => {
    const expected: [string, string][] = [
      ['trace', 'debug'],
      ['DEBUG', 'debug'],
      ['Info', 'info'],
      ['WARN', 'warning'],
      ['warning', 'warning'],
      ['WARN2', 'warning'],
      ['error', 'error'],
      ['FATAL', 'critical'],
      ['critical', 'critical'],
      ['', 'info'],
      ['verbose-ish', 'info'],
    ];
    for (const [text, level] of expected) assert.equal(otlpLevel(0, text), level, `severity_text ${text}`);
    assert.equal(otlpLevel(25, 'error'), 'error');
    assert.equal(otlpLevel(-1, ''), 'info');
  });
});

describe('OTLP LogRecord → entry', () => {
  it('takes the event from a string body, else a short JSON form of a structured one (kept whole under body), else the event name', () => {
    assert.equal(otlpEntry(record(), scope, resource, 0).event, 'hello');
    const structured = otlpEntry(record({ body: { user: 'ann', n: 2 } }), scope, resource, 0);
    assert.equal(structured.event, '{"user":"ann","n":2}');
    assert.deepEqual({ ...(structured.body as object) }, { user: 'ann', n: 2 });
    const long = otlpEntry(record({ body: ['x'.repeat(500)] }), scope, resource, 0);
    assert.equal((long.event as string).length, STRUCTURED_EVENT_CHARS);
    assert.equal(otlpEntry(record({ body: undefined, eventName: 'user.login' }), scope, resource, 0).event, 'user.login');
    assert.equal(otlpEntry(record({ body: undefined }), scope, resource, 0).event, NO_BODY_EVENT);
  });

  it('takes the time from time_unix_nano, else observed_time_unix_nano, else the time of receipt', () => {
    const at = Date.UTC(2024, 4, 1, 12, 0, 0, 123);
    assert.equal(otlpEntry(record({ timeMs: at, observedTimeMs: at + 5 }), scope, resource, 0).timestamp, '2024-05-01T12:00:00.123Z');
    assert.equal(otlpEntry(record({ observedTimeMs: at + 5 }), scope, resource, 0).timestamp, '2024-05-01T12:00:00.128Z');
    assert.equal(otlpEntry(record(), scope, resource, at).timestamp, '2024-05-01T12:00:00.123Z');
  });

  it('reads nanoseconds exactly, in both encodings', () => {
    assert.equal(jsonNanosToMillis('1714564800123999999', 'timeUnixNano'), 1714564800123);
    assert.equal(jsonNanosToMillis('0', 'timeUnixNano'), null);
    assert.equal(jsonNanosToMillis(1714564800123000000, 'timeUnixNano'), 1714564800123);
    const nanos = 1714564800123999999n;
    const long = { high: Number(nanos >> 32n), low: Number(nanos & 0xffffffffn) | 0, toNumber: () => 0, toString: () => '' };
    assert.equal(nanosToMillis(long), 1714564800123);
  });

  it('takes the scope name as logger, the correlation fields from attributes, and keeps the rest nested by their dots', () => {
    const entry = otlpEntry(
      record({
        attributes: [
          ['request_id', 'req-1'],
          ['session_id', 42],
          ['connection_generation', 3],
          ['operation_id', { not: 'text' }],
          ['http.method', 'GET'],
          ['http.status_code', 200],
        ],
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        flags: 1,
        severityNumber: 13,
        severityText: 'WARN',
      }),
      { name: 'checkout', version: '1.2.0', attributes: [['team', 'payments']], droppedAttributesCount: 0 },
      {
        attributes: [
          ['service.name', 'shop'],
          ['service.version', '3'],
        ],
        droppedAttributesCount: 2,
      },
      0,
    );
    assert.deepEqual(JSON.parse(JSON.stringify(entry)), {
      timestamp: '1970-01-01T00:00:00.000Z',
      level: 'warning',
      event: 'hello',
      logger: 'checkout',
      request_id: 'req-1',
      session_id: '42',
      connection_generation: 3,
      severity_text: 'WARN',
      severity_number: 13,
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      span_id: 'b7ad6b7169203331',
      flags: 1,
      attributes: { operation_id: { not: 'text' }, http: { method: 'GET', status_code: 200 } },
      resource: { service: { name: 'shop', version: '3' } },
      scope_version: '1.2.0',
      scope_attributes: { team: 'payments' },
      resource_dropped_attributes_count: 2,
    });
  });

  it('keeps a dotted key whole when its place is taken, and a key named __proto__ as a key', () => {
    const nested = nestAttributes([
      ['http', 'x'],
      ['http.method', 'GET'],
      ['a..b', 1],
      ['__proto__', 'p'],
    ]);
    assert.equal(JSON.stringify(nested), '{"http":"x","http.method":"GET","a..b":1,"__proto__":"p"}');
  });
});

describe('OTLP readers', () => {
  const nanos = '1714564800123000000';
  const exportObject = {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'shop' } }] },
        scopeLogs: [
          {
            scope: { name: 'checkout', version: '1.0' },
            logRecords: [
              {
                timeUnixNano: nanos,
                severityNumber: 17,
                body: {
                  kvlistValue: {
                    values: [
                      { key: 'n', value: { intValue: '9007199254740993' } },
                      { key: 'ok', value: { boolValue: true } },
                    ],
                  },
                },
                attributes: [
                  { key: 'request_id', value: { stringValue: 'r-1' } },
                  { key: 'sizes', value: { arrayValue: { values: [{ intValue: 1 }, { doubleValue: 2.5 }] } } },
                  { key: 'raw', value: { bytesValue: 'AQID' } },
                ],
                traceId: '0AF7651916CD43DD8448EB211C80319C',
                spanId: 'b7ad6b7169203331',
              },
              { observedTimeUnixNano: nanos, severityText: 'info', body: { stringValue: 'second' } },
            ],
          },
        ],
      },
    ],
  };

  it('read the same export to the same entries from protobuf and from OTLP/JSON', () => {
    const protoObject = structuredClone(exportObject) as any;
    const rec = protoObject.resourceLogs[0].scopeLogs[0].logRecords[0];
    rec.traceId = Buffer.from(rec.traceId, 'hex');
    rec.spanId = Buffer.from(rec.spanId, 'hex');
    rec.attributes[2].value.bytesValue = Buffer.from([1, 2, 3]);
    const bytes = OTLP.ExportLogsServiceRequest.encode(OTLP.ExportLogsServiceRequest.fromObject(protoObject)).finish();
    const fromProto = entriesOf(readProtobufRequest(bytes));
    const fromJson = entriesOf(readJsonRequest(Buffer.from(JSON.stringify(exportObject))));
    assert.deepEqual(JSON.parse(JSON.stringify(fromProto)), JSON.parse(JSON.stringify(fromJson)));
    assert.deepEqual(JSON.parse(JSON.stringify(fromJson[0])), {
      timestamp: '2024-05-01T12:00:00.123Z',
      level: 'error',
      event: '{"n":"9007199254740993","ok":true}',
      logger: 'checkout',
      request_id: 'r-1',
      body: { n: '9007199254740993', ok: true },
      severity_number: 17,
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      span_id: 'b7ad6b7169203331',
      attributes: { sizes: [1, 2.5], raw: 'AQID' },
      resource: { service: { name: 'shop' } },
      scope_version: '1.0',
    });
    assert.equal(fromJson[1]!.timestamp, '2024-05-01T12:00:00.123Z');
  });

  it('refuse a body that is not an export (400), and one with more records than the limit', () => {
    const isBadRequest = (err: unknown) => err instanceof LogServiceError && err.status === 400;
    assert.throws(() => readProtobufRequest(Buffer.from('{"not":"protobuf"}')), isBadRequest);
    assert.throws(() => readJsonRequest(Buffer.from('[1,2')), isBadRequest);
    assert.throws(() => readJsonRequest(Buffer.from('{"resourceLogs":{}}')), isBadRequest);
    const many = { resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: MAX_OTLP_RECORDS + 1 }, () => ({})) }] }] };
    assert.throws(() => readJsonRequest(Buffer.from(JSON.stringify(many))), /more than 100000 log records/);
  });

  it('refuse only the record whose body nests too deep, or whose field has the wrong type', async () => {
    let deep: any = { stringValue: 'bottom' };
    for (let i = 0; i < 120; i++) deep = { arrayValue: { values: [deep] } };
    const body = {
      resourceLogs: [
        { scopeLogs: [{ logRecords: [{ body: { stringValue: 'ok' } }, { body: deep }, { severityText: 7 }, { body: { stringValue: 'ok too' } }] }] },
      ],
    };
    const json = await batchFromOtlp(readJsonRequest(Buffer.from(JSON.stringify(body))), { projectId: 1, receivedAt: 0 });
    assert.deepEqual(json.positions, [0, 3]);
    assert.deepEqual(
      json.rejected.map((r) => [r.index, r.message]),
      [
        [1, 'The entry nests objects and arrays more than 100 levels deep.'],
        [2, "'severityText' must be a string."],
      ],
    );
    // protobufjs will not encode such a value: the bytes are written by hand, innermost first.
    let value = field(1, Buffer.from('bottom'));
    for (let i = 0; i < 60; i++) value = field(5, field(1, value));
    const okRecord = field(5, field(1, Buffer.from('ok')));
    const bytes = field(1, field(2, Buffer.concat([field(2, okRecord), field(2, field(5, value))])));
    const proto = await batchFromOtlp(readProtobufRequest(bytes), { projectId: 1, receivedAt: 0 });
    assert.deepEqual(proto.positions, [0]);
    assert.deepEqual(
      proto.rejected.map((r) => r.index),
      [1],
    );
  });
});
