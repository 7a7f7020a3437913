import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_ENTRY_DEPTH, readBatch, validateEntry } from '../../lib/ingest/entry-validation.js';
import { parseIsoTimestamp } from '../../lib/core/timestamps.js';
import { LEVELS, levelNumber } from '../../lib/search/levels.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { LogServiceError } from '../../lib/core/errors.js';

const good = { level: 'info', event: 'user logged in', timestamp: '2024-05-06T07:08:09.123Z' };

function message(value: unknown): string {
  const r = validateEntry(value);
  assert.equal(r.ok, false, `expected a rejection for ${JSON.stringify(value)}`);
  return (r as { message: string }).message;
}

describe('entry validation', () => {
  it('accepts a minimal entry and reports its level number and instant', () => {
    const r = validateEntry({ ...good });
    assert.ok(r.ok);
    assert.equal(r.level, 1);
    assert.equal(r.timestamp, Date.UTC(2024, 4, 6, 7, 8, 9, 123));
  });

  it('refuses what is not an object', () => {
    for (const v of [null, 1, 'x', true, [], [good]]) assert.match(message(v), /not a JSON object/);
  });

  it('refuses server-assigned keys, even when they are null', () => {
    for (const key of ['id', 'project_id', 'received_at']) {
      assert.match(message({ ...good, [key]: null }), new RegExp(`'${key}'`));
    }
  });

  it('checks level, then event, then timestamp, then the nullable fields, reporting the first failure', () => {
    // Everything wrong at once: the server key wins, then level, and so on.
    const all = { id: 1, level: 'INFO', timestamp: 'yesterday', category: 5 };
    assert.match(message(all), /'id'/);
    const { id: _id, ...noId } = all;
    assert.match(message(noId), /'level'/);
    assert.match(message({ ...noId, level: 'warning' }), /'event'/);
    assert.match(message({ ...noId, level: 'warning', event: 'e' }), /'timestamp'/);
    assert.match(message({ ...noId, level: 'warning', event: 'e', timestamp: good.timestamp }), /'category'/);
  });

  it('accepts exactly the five lowercase level names', () => {
    for (const l of LEVELS) assert.ok(validateEntry({ ...good, level: l }).ok, l);
    for (const l of ['INFO', 'warn', 'fatal', '', null, 1, undefined]) assert.match(message({ ...good, level: l }), /'level'/);
    assert.deepEqual(LEVELS.map(levelNumber), [0, 1, 2, 3, 4]);
  });

  it('requires event to be a non-empty string', () => {
    for (const e of ['', undefined, null, 3, {}, ['x']]) assert.match(message({ ...good, event: e }), /'event'/);
    assert.ok(validateEntry({ ...good, event: ' ' }).ok);
  });

  it('checks category, logger and the correlation fields: string or null, connection_generation also an integer', () => {
    const fields = ['category', 'logger', 'session_id', 'request_id', 'connection_generation', 'tool_call_id', 'message_id', 'operation_id'];
    for (const f of fields) {
      assert.ok(validateEntry({ ...good, [f]: 'x' }).ok, f);
      assert.ok(validateEntry({ ...good, [f]: null }).ok, f);
      assert.match(message({ ...good, [f]: true }), new RegExp(`'${f}'`));
      assert.match(message({ ...good, [f]: { a: 1 } }), new RegExp(`'${f}'`));
      assert.match(message({ ...good, [f]: 1.5 }), new RegExp(`'${f}'`));
    }
    assert.ok(validateEntry({ ...good, connection_generation: 7 }).ok);
    assert.ok(validateEntry({ ...good, connection_generation: -7 }).ok);
    assert.match(message({ ...good, category: 7 }), /'category'/);
  });

  it('reads keys as own properties only, so __proto__ and friends are plain keys', () => {
    const parsed = JSON.parse('{"__proto__":{"level":"info"},"event":"e","timestamp":"2024-01-01 00:00"}');
    assert.match(message(parsed), /'level'/);
    const withProto = JSON.parse('{"level":"info","event":"e","timestamp":"2024-01-01 00:00","__proto__":{"id":1},"constructor":1}');
    assert.ok(validateEntry(withProto).ok);
  });
});

describe('ISO 8601 timestamps', () => {
  it('accepts the allowed shapes', () => {
    const cases: [string, number][] = [
      ['2024-02-29T23:59:59Z', Date.UTC(2024, 1, 29, 23, 59, 59)],
      ['2024-02-29 23:59', Date.UTC(2024, 1, 29, 23, 59)],
      ['2024-01-01T00:00:00.5', Date.UTC(2024, 0, 1, 0, 0, 0, 500)],
      ['2024-01-01T00:00:00.123456789+02:00', Date.UTC(2023, 11, 31, 22, 0, 0, 123)],
      ['2024-01-01T00:00-05:30', Date.UTC(2024, 0, 1, 5, 30)],
      ['2000-02-29T12:00:00-00:00', Date.UTC(2000, 1, 29, 12)],
      ['0050-06-01T00:00:00Z', Date.parse('0050-06-01T00:00:00Z')],
    ];
    for (const [text, ms] of cases) assert.equal(parseIsoTimestamp(text), ms, text);
  });

  it('refuses impossible dates and other shapes', () => {
    const bad = [
      '2023-02-29T00:00:00Z',
      '2100-02-29T00:00Z',
      '2024-04-31T00:00Z',
      '2024-13-01T00:00Z',
      '2024-00-10T00:00Z',
      '2024-01-00T00:00Z',
      '2024-01-01T24:00Z',
      '2024-01-01T23:60Z',
      '2024-01-01T23:59:60Z',
      '2024-01-01',
      '2024-01-01T10',
      '2024-01-01T10:00:00.Z',
      '2024-01-01T10:00+0200',
      '2024-01-01T10:00+02',
      '2024-01-01T10:00+24:00',
      '2024-01-01t10:00Z',
      '2024-01-01T10:00z',
      ' 2024-01-01T10:00Z',
      '2024-01-01T10:00Z ',
      '24-01-01T10:00Z',
      '2024-1-01T10:00Z',
      '١٢٣٤-01-01T10:00Z',
      '2024-01-01T10:00:00.000ZZ',
      '',
    ];
    for (const text of bad) assert.equal(parseIsoTimestamp(text), null, text);
  });

  it('agrees with Date for every valid UTC instant (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
        assert.equal(parseIsoTimestamp(d.toISOString()), d.getTime());
      }),
    );
  });
});

describe('batches and preparation', () => {
  it('accepts only a JSON array', () => {
    assert.deepEqual(readBatch([]), []);
    for (const v of [{}, null, 'x', 1])
      assert.throws(
        () => readBatch(v),
        (e: unknown) => e instanceof LogServiceError && e.status === 400,
      );
  });

  it('prepares valid entries (compact JSON, UTF-8 size, level, instant) and lists rejections by index', () => {
    const submitted = JSON.parse(
      `[${JSON.stringify({ ...good, event: 'héllo wörld', b: { c: [1, 2] } }, null, 2)}, 5, {"level":"info"}, ${JSON.stringify(good)}]`,
    );
    const batch = entriesFromValues(submitted);
    assert.deepEqual(batch.positions, [0, 3]);
    assert.deepEqual(
      batch.rejected.map((r) => [r.index, r.error]),
      [
        [1, 'validation_error'],
        [2, 'validation_error'],
      ],
    );
    const first = batch.entries[0]!;
    assert.equal(first.body, '{"level":"info","event":"héllo wörld","timestamp":"2024-05-06T07:08:09.123Z","b":{"c":[1,2]}}');
    assert.equal(first.bytes, Buffer.byteLength(first.body));
    assert.equal(first.bytes, first.body.length + 2);
    assert.equal(first.level, 1);
  });

  it('keeps __proto__-named keys in the stored text', () => {
    const submitted = JSON.parse('[{"level":"info","event":"e","timestamp":"2024-01-01 00:00","__proto__":{"x":1}}]');
    const body = entriesFromValues(submitted).entries[0]!.body;
    assert.equal(body, '{"level":"info","event":"e","timestamp":"2024-01-01 00:00","__proto__":{"x":1}}');
  });
});

describe('nesting depth', () => {
  /** `good` whose objects and arrays nest `depth` levels, the entry itself included. */
  function nested(depth: number, kind: 'array' | 'object'): Record<string, unknown> {
    let inner: unknown = 'bottom';
    for (let i = 1; i < depth; i++) inner = kind === 'array' ? [inner] : { k: inner };
    return { ...good, inner };
  }

  it('accepts an entry nesting 100 levels and refuses one nesting 101, objects or arrays', () => {
    assert.equal(MAX_ENTRY_DEPTH, 100);
    for (const kind of ['array', 'object'] as const) {
      assert.ok(validateEntry(nested(100, kind)).ok, kind);
      assert.match(message(nested(101, kind)), /more than 100 levels deep/);
    }
    // Depth counts levels on one path, not containers side by side.
    assert.ok(validateEntry({ ...good, wide: Array.from({ length: 500 }, () => ({ a: [1] })) }).ok);
  });

  it('refuses entries far deeper than the call stack allows, without throwing', () => {
    const batch = entriesFromValues([nested(100, 'object'), nested(101, 'array'), nested(200_000, 'array'), nested(200_000, 'object'), good]);
    assert.deepEqual(batch.positions, [0, 4]);
    assert.deepEqual(
      batch.rejected.map((r) => r.index),
      [1, 2, 3],
    );
    for (const r of batch.rejected) assert.match(r.message, /more than 100 levels deep/);
  });
});
