/**
 * The bounds of the OTLP readers and of preparing an export, without HTTP:
 * the byte-level JSON reader agrees with JSON.parse on what is JSON and
 * counts values as it goes; groups, records and each record's values are
 * counted before anything is built, in both encodings; what an export
 * stores is held to its budget, records past it refused in order; dotted
 * keys and times out of range cannot break an entry; and preparing yields
 * to the event loop.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { LogServiceError } from '../../lib/core/errors.js';
import { JsonText } from '../../lib/ingest/otlp/otlp-json-scan.js';
import { jsonNanosToMillis, readJsonRequest } from '../../lib/ingest/otlp/otlp-json.js';
import { readProtobufRequest } from '../../lib/ingest/otlp/otlp-protobuf.js';
import { MAX_ENTRY_TIME_MS, MAX_KEY_SEGMENTS, OtlpRecordError, nestAttributes, otlpEntry, otlpShared } from '../../lib/ingest/otlp/otlp-mapping.js';
import { MAX_OTLP_GROUPS, MAX_OTLP_RECORD_VALUES, batchFromOtlp, storedBytesBudget, type OtlpRequest } from '../../lib/ingest/otlp/otlp-request.js';
import { OTLP } from '../../lib/ingest/otlp/otlp-schema.js';

const target = { projectId: 1, receivedAt: Date.UTC(2025, 0, 1) };
const isBadRequest = (pattern: RegExp) => (err: unknown) => err instanceof LogServiceError && err.status === 400 && pattern.test(err.message);

/** Whether the scanner reads `text` as exactly one JSON value, and how many values it counted. */
function scan(text: string): { ok: boolean; values: number } {
  const json = new JsonText(Buffer.from(text));
  try {
    const end = json.value(json.space(0));
    return { ok: json.space(end) === json.raw.length, values: json.values };
  } catch (err) {
    if (err instanceof LogServiceError) return { ok: false, values: 0 };
    throw err;
  }
}

function countValues(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((n: number, v) => n + countValues(v), 0);
  if (typeof value === 'object' && value !== null) return 1 + Object.values(value).reduce((n: number, v) => n + countValues(v), 0);
  return 1;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
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

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function proto(value: Record<string, unknown>): Uint8Array {
  return OTLP.ExportLogsServiceRequest.encode(OTLP.ExportLogsServiceRequest.fromObject(value)).finish();
}

async function prepare(request: OtlpRequest) {
  const batch = await batchFromOtlp(request, target);
  return { ...batch, stored: batch.request.sizes.reduce((a, b) => a + b, 0) };
}

describe('the OTLP/JSON byte reader', () => {
  it('takes exactly what JSON.parse takes, and counts every value written in it', () => {
    // JSON texts, then the same with one byte changed, dropped or added where JSON is strict.
    const tricky = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', '-', '.', 'e', '0', '1', ' ', '\n', 't', 'n', 'u', '\u0001', 'é', '+');
    const text = fc.oneof(
      fc.json(),
      fc.tuple(fc.json(), fc.nat(), tricky, fc.constantFrom(0, 1, 2)).map(([t, at, c, how]) => {
        const i = at % (t.length + 1);
        return how === 0 ? t.slice(0, i) + c + t.slice(i + 1) : how === 1 ? t.slice(0, i) + t.slice(i + 1) : t.slice(0, i) + c + t.slice(i);
      }),
      fc.string(),
    );
    fc.assert(
      fc.property(text, (t) => {
        const scanned = scan(t);
        assert.equal(scanned.ok, parses(t), JSON.stringify(t));
        if (!scanned.ok) return;
        // Every value in the text is counted, a duplicated key's too (JSON.parse keeps only the last):
        // never fewer than the parsed values, and exactly those for a text without duplicated keys.
        const parsed = JSON.parse(t);
        assert.ok(scanned.values >= countValues(parsed), t);
        assert.equal(scan(JSON.stringify(parsed)).values, countValues(parsed), t);
      }),
      { numRuns: 3000 },
    );
    for (const t of ['"\\u00e9"', '"\\uZZZZ"', '01', '-', '1.', '1e', '-0.5E+3', 'nul', 'true ', ' [ ] ', '{"a" 1}', '{"a":1,}', '[1,]', '"\t"', '\ufeff{}']) {
      assert.equal(scan(t).ok, parses(t), t);
    }
  });

  it('walks a body nested a million levels deep without the call stack', () => {
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    assert.deepEqual(scan(deep), { ok: true, values: 1_000_000 });
    assert.equal(scan(deep.slice(0, -1)).ok, false);
  });

  it('reads a duplicated key as JSON.parse does: the last one', async () => {
    const body =
      '{"resourceLogs":[{"resource":{"attributes":[{"key":"r","value":{"stringValue":"first"}}]},"resource":{"attributes":[{"key":"r","value":{"stringValue":"last"}}]},' +
      '"scopeLogs":[{"logRecords":[{}]},{"logRecords":[{}]}],"scopeLogs":[{"scope":{"name":"a"},"scope":{"name":"b"},"logRecords":[{},{}],"logRecords":[{"body":{"stringValue":"kept"}}]}]}],' +
      '"resourceLogs":[]}';
    assert.equal(readJsonRequest(Buffer.from(body)).count, 0);
    const lastWins = body.replace(/,"resourceLogs":\[\]\}$/, '}');
    const request = readJsonRequest(Buffer.from(lastWins));
    assert.equal(request.count, 1);
    assert.equal(request.groups.length, 1);
    const batch = await prepare(request);
    const entry = JSON.parse(new TextDecoder().decode(batch.request.chunks[0]!.rows))[0][5];
    assert.deepEqual(JSON.parse(entry), { timestamp: '2025-01-01T00:00:00.000Z', level: 'info', event: 'kept', logger: 'b', resource: { r: 'last' } });
  });

  it('refuses what is not JSON, or not the shape of an export, with 400 before reading further', () => {
    assert.throws(() => readJsonRequest(Buffer.from('{"resourceLogs":[{"scopeLogs":[{"logRecords":[{},]}]}]}')), isBadRequest(/not valid JSON/));
    assert.throws(() => readJsonRequest(Buffer.from('{"resourceLogs":[{}]} x')), isBadRequest(/not valid JSON/));
    assert.throws(() => readJsonRequest(Buffer.from('[]')), isBadRequest(/must be a JSON object/));
    assert.throws(() => readJsonRequest(Buffer.from('{"resourceLogs":[{"scopeLogs":[1]}]}')), isBadRequest(/'scopeLogs' must be an array of objects/));
    assert.throws(
      () => readJsonRequest(Buffer.from('{"resourceLogs":[{"scopeLogs":[{"logRecords":{}}]}]}')),
      isBadRequest(/'logRecords' must be an array of objects/),
    );
    assert.equal(readJsonRequest(Buffer.from(' {"resourceLogs":null,"other":[1,{"x":[true,false,null]}]} ')).count, 0);
  });
});

describe('OTLP counts, before anything is decoded', () => {
  const emptyScopes = (n: number) => `{"resourceLogs":[{"scopeLogs":[${'{},'.repeat(n - 1)}{}]}]}`;

  it(`allow ${MAX_OTLP_GROUPS} ResourceLogs and ScopeLogs together and refuse one more, in both encodings`, () => {
    assert.equal(readJsonRequest(Buffer.from(emptyScopes(MAX_OTLP_GROUPS - 1))).groups.length, MAX_OTLP_GROUPS - 1);
    assert.throws(() => readJsonRequest(Buffer.from(emptyScopes(MAX_OTLP_GROUPS))), isBadRequest(/more than 100000 ResourceLogs and ScopeLogs/));
    assert.throws(() => readJsonRequest(Buffer.from(`{"resourceLogs":[${'{},'.repeat(MAX_OTLP_GROUPS)}{}]}`)), isBadRequest(/ResourceLogs and ScopeLogs/));
    const scopes = (n: number) => field(1, Buffer.alloc(n * 2, Buffer.from([(2 << 3) | 2, 0])));
    assert.equal(readProtobufRequest(scopes(MAX_OTLP_GROUPS - 1)).groups.length, MAX_OTLP_GROUPS - 1);
    assert.throws(() => readProtobufRequest(scopes(MAX_OTLP_GROUPS)), isBadRequest(/ResourceLogs and ScopeLogs/));
    assert.throws(
      () => readProtobufRequest(Buffer.alloc((MAX_OTLP_GROUPS + 1) * 2, Buffer.from([(1 << 3) | 2, 0]))),
      isBadRequest(/ResourceLogs and ScopeLogs/),
    );
  });

  it(`refuse only a record holding more than ${MAX_OTLP_RECORD_VALUES} values, or a group whose resource does, in both encodings`, async () => {
    const manyJson = `[${'{},'.repeat(MAX_OTLP_RECORD_VALUES)}{}]`;
    const ok = '{"body":{"stringValue":"ok"}}';
    const jsonBody = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[${ok},{"attributes":${manyJson}},${ok}]}]},{"resource":{"attributes":${manyJson}},"scopeLogs":[{"logRecords":[${ok}]}]}]}`;
    const fromJson = await prepare(readJsonRequest(Buffer.from(jsonBody)));
    assert.deepEqual(fromJson.positions, [0, 2]);
    assert.deepEqual(
      fromJson.rejected.map((r) => [r.index, r.message]),
      [
        [1, `The record holds more than ${MAX_OTLP_RECORD_VALUES} values.`],
        [3, `The record holds more than ${MAX_OTLP_RECORD_VALUES} values.`],
      ],
    );

    const emptyKeyValues = (n: number) => Buffer.alloc(n * 2, Buffer.from([(6 << 3) | 2, 0]));
    const okRecord = field(5, field(1, Buffer.from('ok')));
    const scope = (records: Buffer[]) => field(2, Buffer.concat(records.map((r) => field(2, r))));
    const bytes = Buffer.concat([
      field(1, scope([okRecord, emptyKeyValues(MAX_OTLP_RECORD_VALUES + 1), emptyKeyValues(MAX_OTLP_RECORD_VALUES)])),
      field(1, Buffer.concat([field(1, Buffer.alloc((MAX_OTLP_RECORD_VALUES + 1) * 2, Buffer.from([(1 << 3) | 2, 0]))), scope([okRecord])])),
    ]);
    const fromProto = await prepare(readProtobufRequest(bytes));
    assert.deepEqual(fromProto.positions, [0, 2]);
    assert.deepEqual(
      fromProto.rejected.map((r) => [r.index, r.message]),
      [
        [1, `The record holds more than ${MAX_OTLP_RECORD_VALUES} values.`],
        [3, `The record holds more than ${MAX_OTLP_RECORD_VALUES} values.`],
      ],
    );
  });
});

describe('what an export stores', () => {
  it('is held to its budget: records are taken in order, and the first that would pass it and all after it are refused', async () => {
    const resource = { attributes: [{ key: 'big', value: { stringValue: 'r'.repeat(100_000) } }] };
    const value = {
      resourceLogs: [{ resource, scopeLogs: [{ logRecords: Array.from({ length: 200 }, (_, i) => ({ body: { stringValue: `record ${i}` } })) }] }],
    };
    for (const request of [readJsonRequest(json(value)), readProtobufRequest(proto(value))]) {
      const budget = storedBytesBudget(request.bodyBytes);
      const batch = await prepare(request);
      assert.ok(batch.stored <= budget && batch.stored > budget - 101_000, `${batch.stored} of ${budget}`);
      const first = batch.positions.length;
      assert.deepEqual(
        batch.positions,
        Array.from({ length: first }, (_, i) => i),
      );
      assert.deepEqual(
        batch.rejected.map((r) => r.index),
        Array.from({ length: 200 - first }, (_, i) => first + i),
      );
      assert.match(
        batch.rejected[0]!.message,
        new RegExp(`^The export would store more than ${budget} bytes of entries \\(16 × its ${request.bodyBytes} bytes \\+ 524288\\)`),
      );
    }
  });

  it('counts exactly what is stored, and leaves an export of ordinary size whole', async () => {
    const value = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'shop' } }], droppedAttributesCount: 2 },
          scopeLogs: [
            { scope: { name: 'a', version: '1', attributes: [{ key: 'k', value: { intValue: 1 } }] }, logRecords: [{ body: { stringValue: 'x' } }, {}] },
          ],
        },
        { scopeLogs: [{ logRecords: [{ body: { stringValue: 'é' } }] }] },
      ],
    };
    const batch = await prepare(readJsonRequest(json(value)));
    assert.equal(batch.positions.length, 3);
    const rows = JSON.parse(new TextDecoder().decode(batch.request.chunks[0]!.rows)) as unknown[][];
    assert.deepEqual(
      batch.request.sizes,
      rows.map((row) => Buffer.byteLength(row[5] as string)),
    );
    const shared = otlpShared(
      { name: 'a', version: '1', attributes: [['k', 1]], droppedAttributesCount: 0 },
      { attributes: [['service.name', 'shop']], droppedAttributesCount: 2 },
    );
    const own = JSON.stringify({ timestamp: '2025-01-01T00:00:00.000Z', level: 'info', event: 'x' }).length;
    assert.equal(batch.request.sizes[0], own + shared.bytes);
  });
});

describe('a large resource over many scopes', () => {
  it('is made into its part of the entries once, and no scope of a group past the budget is read: 50,000 one-record scopes under a 1 MiB resource', async () => {
    // Once, 50,000 copies of the resource were made and measured (minutes of CPU for a 1.2 MB gzip export).
    let serialised = 0;
    const padding = {
      value: 'x'.repeat(1024 * 1024),
      toJSON() {
        serialised += 1;
        return this.value;
      },
    };
    let scopesRead = 0;
    const groups = Array.from({ length: 50_000 }, (_, g) => ({ resourceLogs: 0, first: g, count: 1 }));
    const request: OtlpRequest = {
      bodyBytes: 1_200_000,
      groups,
      count: groups.length,
      resource: () => ({ attributes: [['padding', padding as unknown as string]], droppedAttributesCount: 0 }),
      scope: () => {
        scopesRead += 1;
        return { name: '', version: '', attributes: [], droppedAttributesCount: 0 };
      },
      record: () => ({
        timeMs: null,
        observedTimeMs: null,
        severityNumber: 0,
        severityText: '',
        body: 'r',
        attributes: [],
        droppedAttributesCount: 0,
        flags: 0,
        traceId: '',
        spanId: '',
        eventName: '',
      }),
    };
    const batch = await batchFromOtlp(request, target);
    const kept = batch.positions.length;
    assert.ok(kept >= 1 && kept * 1024 * 1024 <= storedBytesBudget(1_200_000), `${kept} entries kept`);
    assert.equal(kept + batch.rejectedCount, 50_000);
    // Once for the resource's part, once per stored entry, and once for the entry that found the budget spent.
    assert.ok(serialised <= kept + 2, `the resource was serialised ${serialised} times`);
    assert.ok(scopesRead <= kept + 1, `${scopesRead} scopes read`);
  });
});

describe('mapping edges', () => {
  it(`nests a key by at most ${MAX_KEY_SEGMENTS} segments: one with more stays whole (it could never be stored nested)`, () => {
    const deepest = Array.from({ length: MAX_KEY_SEGMENTS }, (_, i) => `k${i}`).join('.');
    const tooMany = Array.from({ length: 200_000 }, () => 'a').join('.');
    const nested = nestAttributes([
      [deepest, 1],
      [tooMany, 2],
    ]);
    assert.equal(nested[tooMany], 2);
    let level: any = nested;
    for (let i = 0; i < MAX_KEY_SEGMENTS - 1; i++) level = level[`k${i}`];
    assert.equal(level[`k${MAX_KEY_SEGMENTS - 1}`], 1);
  });

  it('reads OTLP/JSON times as fixed64 values: up to 2^64 − 1 nanoseconds, anything else is the wrong type', () => {
    assert.equal(jsonNanosToMillis('18446744073709551615', 't'), 18446744073709);
    assert.equal(jsonNanosToMillis(1.8e19, 't'), 18000000000000);
    for (const bad of ['18446744073709551616', '99999999999999999999', '9000000000000000000000', 9e21, 2 ** 64, -1, Infinity, NaN, '-1', '1e3']) {
      assert.throws(() => jsonNanosToMillis(bad, 'timeUnixNano'), OtlpRecordError, String(bad));
    }
  });

  it('refuses a record whose time an entry cannot hold instead of failing', () => {
    const record = {
      timeMs: MAX_ENTRY_TIME_MS + 1,
      observedTimeMs: null,
      severityNumber: 0,
      severityText: '',
      body: 'x',
      attributes: [],
      droppedAttributesCount: 0,
      flags: 0,
      traceId: '',
      spanId: '',
      eventName: '',
    };
    const shared = otlpShared({ name: '', version: '', attributes: [], droppedAttributesCount: 0 }, { attributes: [], droppedAttributesCount: 0 });
    assert.throws(() => otlpEntry(record, shared, 0), OtlpRecordError);
    assert.equal(otlpEntry({ ...record, timeMs: MAX_ENTRY_TIME_MS }, shared, 0).timestamp, '9999-12-31T23:59:59.999Z');
  });
});

describe('preparing an export', () => {
  it('yields to the event loop while it works, whatever each record costs', async () => {
    for (const records of [Array.from({ length: 20_000 }, () => ({ body: { stringValue: 'small' } })), Array.from({ length: 40 }, () => ({}))]) {
      const resource = records.length > 100 ? undefined : { attributes: [{ key: 'big', value: { stringValue: 'r'.repeat(200_000) } }] };
      const request = readJsonRequest(json({ resourceLogs: [{ resource, scopeLogs: [{ logRecords: records }] }] }));
      const order: string[] = [];
      setImmediate(() => order.push('another turn'));
      await batchFromOtlp(request, target).then(() => order.push('prepared'));
      assert.deepEqual(order, ['another turn', 'prepared'], `${records.length} records`);
    }
  });
});
