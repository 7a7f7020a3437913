/**
 * Entries encoded as PostgreSQL binary arrays (lib/storage/log-index/column-arrays.ts)
 * are stored exactly as those encoded as JSON rows, on both backends (the
 * file backend reads the rows; the server backend the arrays, or arrays
 * made from the rows where a chunk has none, or a quota cut its request
 * short): every column, byte for byte, with ids ascending in submitted
 * order, for arbitrary entries and in transactions that mix the three.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { silentLogger } from '../../lib/core/logger.js';
import { openStorage } from '../../lib/storage/open-storage.js';
import type { Storage } from '../../lib/storage/storage.js';
import type { LogIngestRequest, LogSelection, PreparedEntry } from '../../lib/storage/types-logs.js';
import { CHUNK_ENTRIES, RequestEncoder } from '../../lib/storage/log-index/encoded-entries.js';
import { columnArrays, encodeColumns } from '../../lib/storage/log-index/column-arrays.js';
import { entriesFromValues } from '../support/prepared-entries.js';
import { logEntry } from '../support/arbitraries.js';
import { describeEachBackend, newTestDatabase, type TestDatabase } from '../support/backends.js';

const T0 = Date.UTC(2025, 3, 1);

function request(projectId: number, receivedAt: number, entries: readonly PreparedEntry[], columns: boolean): LogIngestRequest {
  const encoder = new RequestEncoder(projectId, receivedAt, null, columns);
  for (const e of entries) encoder.add(e);
  return encoder.finish();
}

it('joins chunks of column elements under each array header', () => {
  const a = encodeColumns(7, 1000, [
    { timestamp: -5, level: 4, bytes: 2, body: '{}' },
    { timestamp: 2 ** 52, level: 0, bytes: 4, body: '"é"' },
  ]);
  const b = encodeColumns(8, 2000, [{ timestamp: 1, level: 2, bytes: 3, body: '[1]' }]);
  const [project, received, ts, level, bytes, body] = columnArrays([a, b]);
  const ints = (buf: Buffer, size: 2 | 4 | 8) => {
    assert.deepEqual([buf.readInt32BE(0), buf.readInt32BE(4), buf.readInt32BE(12), buf.readInt32BE(16)], [1, 0, 3, 1], 'one dimension of 3 from 1, no nulls');
    return [0, 1, 2].map((i) => {
      const at = 20 + i * (4 + size);
      assert.equal(buf.readInt32BE(at), size);
      return size === 8 ? Number(buf.readBigInt64BE(at + 4)) : size === 4 ? buf.readInt32BE(at + 4) : buf.readInt16BE(at + 4);
    });
  };
  assert.deepEqual(ints(project!, 8), [7, 7, 8]);
  assert.deepEqual(ints(received!, 8), [1000, 1000, 2000]);
  assert.deepEqual(ints(ts!, 8), [-5, 2 ** 52, 1]);
  assert.deepEqual(ints(level!, 2), [4, 0, 2]);
  assert.deepEqual(ints(bytes!, 4), [2, 4, 3]);
  assert.deepEqual(
    [project, received, ts, level, bytes, body].map((a) => a!.readInt32BE(8)),
    [20, 20, 20, 21, 23, 25],
    'element types: int8, int2, int4, text',
  );
  const texts: string[] = [];
  for (let at = 20; at < body!.length; ) {
    const n = body!.readInt32BE(at);
    texts.push(body!.toString('utf8', at + 4, at + 4 + n));
    at += 4 + n;
  }
  assert.deepEqual(texts, ['{}', '"é"', '[1]']);
});

describeEachBackend('entries encoded as binary arrays', (backend) => {
  let db: TestDatabase;
  let storage: Storage;
  let projects: number[];

  before(async () => {
    db = await newTestDatabase(backend);
    storage = await openStorage(db.config, { logger: silentLogger });
    const group = (await storage.write((tx) => tx.insertGroup('columns', T0))).id;
    projects = [];
    for (const [name, maxEntries] of [
      ['a', null],
      ['b', null],
      ['capped', 3],
    ] as const) {
      projects.push((await storage.write((tx) => tx.insertProject({ groupId: group, name, retentionDays: 30, maxEntries, maxBytes: null, createdAt: T0 }))).id);
    }
  });

  after(async () => {
    await storage.close();
    await db.cleanup();
  });

  it('stores every column byte for byte, whatever the entries, mixed with rows and cut requests', async () => {
    const [a, b, capped] = projects as [number, number, number];
    let capRoom = 3;
    await fc.assert(
      fc.asyncProperty(
        fc.array(logEntry, { minLength: 1, maxLength: 12 }),
        fc.array(logEntry, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (first, second, firstColumns) => {
          const one = entriesFromValues(first).entries;
          const two = entriesFromValues(second).entries;
          if (one.length === 0 || two.length === 0) return;
          const cut = entriesFromValues(second).entries;
          const requests = [request(a, T0 + 1, one, firstColumns), request(b, T0 + 2, two, true), request(capped, T0 + 3, cut, true)];
          const outcomes = await storage.write((tx) => tx.ingestLogs(requests));
          const stored = outcomes.flatMap((o, r) =>
            o.flatMap((x, i) => ('id' in x ? [{ id: x.id, projectId: requests[r]!.projectId, receivedAt: T0 + 1 + r, entry: [one, two, cut][r]![i]! }] : [])),
          );
          assert.equal(outcomes[2]!.filter((x) => 'id' in x).length, Math.min(capRoom, cut.length));
          capRoom -= Math.min(capRoom, cut.length);
          const ids = stored.map((s) => s.id);
          assert.deepEqual(
            ids,
            [...ids].sort((x, y) => x - y),
            'ids ascend in submitted order',
          );
          for (const s of stored) {
            const selection: LogSelection = { projectIds: [s.projectId], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };
            const [row] = await storage.logsAfter(selection, s.id - 1, 1);
            assert.deepEqual(row, { id: s.id, projectId: s.projectId, receivedAt: s.receivedAt, body: s.entry.body });
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('stores a request of several chunks in one insert part, in order', async () => {
    const values = Array.from({ length: CHUNK_ENTRIES + 7 }, (_, i) => ({ level: 'warning', event: `n ${i} ✓`, timestamp: new Date(T0 + i).toISOString() }));
    const { entries } = entriesFromValues(values);
    const [outcomes] = await storage.write((tx) => tx.ingestLogs([request(projects[1]!, T0 + 9, entries, true)]));
    const selection: LogSelection = { projectIds: [projects[1]!], minLevel: 2, from: T0, to: T0 + entries.length, words: [], prefixes: [], exact: [] };
    const firstId = (outcomes![0] as { id: number }).id;
    const rows = await storage.logsAfter(selection, firstId - 1, entries.length + 1);
    assert.deepEqual(
      rows.map((r) => r.body),
      entries.map((e) => e.body),
    );
  });
});
