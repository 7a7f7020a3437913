import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { absentFieldsAsNull, logEntryJson, logPageJson } from '../../lib/logs/present-log.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { NULLABLE_FIELDS } from '../../lib/ingest/entry-validation.js';

const RECEIVED = Date.UTC(2024, 0, 2, 3, 4, 5, 6);

function stored(entryText: string): string {
  const batch = entriesFromValues(JSON.parse(`[${entryText}]`));
  assert.equal(batch.entries.length, 1, batch.rejected[0]?.message);
  return batch.entries[0]!.body;
}

describe('LogEntry output', () => {
  it('puts the server fields first, the submitted keys in order, then absent nullable fields as null', () => {
    const body = stored('{"timestamp":"2024-01-01T00:00:00Z","level":"info","event":"e","request_id":"r","zeta":1,"alpha":{"category":"nested"}}');
    const text = logEntryJson({ id: 9, projectId: 4, receivedAt: RECEIVED, body });
    assert.equal(
      text,
      '{"id":9,"project_id":4,"received_at":"2024-01-02T03:04:05.006Z","timestamp":"2024-01-01T00:00:00Z","level":"info","event":"e","request_id":"r","zeta":1,"alpha":{"category":"nested"},' +
        '"category":null,"logger":null,"session_id":null,"connection_generation":null,"tool_call_id":null,"message_id":null,"operation_id":null}',
    );
  });

  it('does not add a null for a field submitted as null, nor mistake a string for a key', () => {
    const body = stored(
      '{"level":"info","event":"\\"category\\": is not a key","timestamp":"2024-01-01 00:00","logger":null,"category":"c","session_id":"s","request_id":"q","connection_generation":3,"tool_call_id":"t","message_id":"m","operation_id":"o"}',
    );
    assert.equal(absentFieldsAsNull(body), '');
    const other = stored('{"level":"info","event":"\\"category\\"","timestamp":"2024-01-01 00:00"}');
    assert.ok(absentFieldsAsNull(other).startsWith(',"category":null'));
  });

  it('round-trips __proto__, unicode and deep nesting exactly', () => {
    const submitted = '{"level":"debug","event":"ünï😀","timestamp":"2024-01-01 00:00","__proto__":{"polluted":true},"deep":{"a":[1,{"b":[null,"x"]}]}}';
    const out = JSON.parse(logEntryJson({ id: 1, projectId: 2, receivedAt: RECEIVED, body: stored(submitted) }));
    assert.ok(Object.hasOwn(out, '__proto__'));
    assert.deepEqual(out.__proto__, { polluted: true });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(out.event, 'ünï😀');
    assert.deepEqual(out.deep, { a: [1, { b: [null, 'x'] }] });
  });

  it('is always valid JSON carrying the submitted object plus the server fields (property)', () => {
    const extra = fc.dictionary(
      fc.string({ maxLength: 8 }).filter((k) => !['id', 'project_id', 'received_at', 'level', 'event', 'timestamp', ...NULLABLE_FIELDS].includes(k)),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 5 },
    );
    fc.assert(
      fc.property(extra, fc.subarray([...NULLABLE_FIELDS]), (custom, present) => {
        const entry: Record<string, unknown> = { level: 'info', event: 'e', timestamp: '2024-01-01 00:00' };
        for (const [k, v] of Object.entries(custom)) Object.defineProperty(entry, k, { value: v, enumerable: true, configurable: true, writable: true });
        for (const f of present) entry[f] = 'v';
        const body = stored(JSON.stringify(entry));
        const text = logEntryJson({ id: 5, projectId: 6, receivedAt: RECEIVED, body });
        assert.ok(text.startsWith(`{"id":5,"project_id":6,"received_at":"2024-01-02T03:04:05.006Z",${body.slice(1, -1)}`));
        const out = JSON.parse(text);
        for (const f of NULLABLE_FIELDS) assert.equal(out[f], present.includes(f) ? 'v' : null);
        const expected = JSON.parse(body);
        for (const k of Object.keys(expected)) assert.deepEqual(out[k], expected[k]);
      }),
    );
  });

  it('assembles a page', () => {
    const body = stored('{"level":"info","event":"e","timestamp":"2024-01-01 00:00"}');
    const page = JSON.parse(
      logPageJson(
        [
          { id: 2, projectId: 1, receivedAt: RECEIVED, body },
          { id: 1, projectId: 1, receivedAt: RECEIVED, body },
        ],
        'c1',
      ),
    );
    assert.deepEqual(
      page.items.map((i: { id: number }) => i.id),
      [2, 1],
    );
    assert.equal(page.next_cursor, 'c1');
    assert.deepEqual(JSON.parse(logPageJson([], null)), { items: [], next_cursor: null });
  });
});
