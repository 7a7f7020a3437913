/**
 * The block walk of query-plan.ts against an in-memory index: it keeps
 * stepping while a step says blocks may remain, even when that step
 * returned fewer blocks than asked for (a step read in two parts whose
 * parts overlapped), and stops when one says none remain. A read after an
 * id with a time range walks only the projects holding an entry of the range.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { planLogsAfter, planQuery, type LogBlockRef, type QueryPlanReads } from '../../lib/storage/log-index/query-plan.js';
import type { LogRow, LogSelection } from '../../lib/storage/types-logs.js';

const BLOCKS = 100;
/** Block i (1-based) holds the one entry with id i; every third entry matches `q=hit`. */
const rows: LogRow[] = Array.from({ length: BLOCKS }, (_, i) => ({
  id: i + 1,
  projectId: 1,
  receivedAt: 0,
  body: JSON.stringify({ m: (i + 1) % 3 === 0 ? 'hit' : 'miss' }),
}));
const blocks: LogBlockRef[] = rows.map((r) => ({ projectId: 1, firstId: r.id, lastId: r.id, key: r.id }));

function reads(shortBy: number): QueryPlanReads & { steps: number } {
  const unused = () => Promise.reject(new Error('not used by a word query'));
  const fake = {
    steps: 0,
    countInRange: unused,
    newestEntryTime: unused,
    newestIdInRange: unused,
    inRange: unused,
    newest: unused,
    oldest: unused,
    async blockStep(
      direction: 'newest' | 'oldest',
      _projects: readonly number[],
      _match: unknown,
      _filter: unknown,
      position: number,
      after: number | null,
      limit: number,
    ) {
      assert.equal(direction, 'newest');
      fake.steps += 1;
      const candidates = blocks.filter((b) => b.firstId < position && (after === null || b.key < after)).reverse();
      // Returns fewer blocks than asked for while more remain, as parts that overlapped would.
      const taken = candidates.slice(0, candidates.length > limit ? Math.max(1, limit - shortBy) : limit);
      return { blocks: taken, rows: taken.map((b) => rows[b.lastId - 1]!), more: candidates.length > taken.length };
    },
  };
  return fake as QueryPlanReads & { steps: number };
}

const selection: LogSelection = { projectIds: [1], minLevel: null, from: null, to: null, words: ['hit'], prefixes: [], exact: [] };
const expected = rows
  .filter((r) => r.id % 3 === 0)
  .map((r) => r.id)
  .reverse();

it('walks on past a short step that says blocks remain, to the end of the index', async () => {
  for (const shortBy of [0, 1]) {
    const fake = reads(shortBy);
    assert.deepEqual(
      (await planQuery(fake, selection, { limit: 50 })).map((r) => r.id),
      expected,
      `short by ${shortBy}`,
    );
    assert.ok(fake.steps > 1);
  }
});

it('fills a page from several steps and stops once it is decided', async () => {
  const fake = reads(1);
  assert.deepEqual(
    (await planQuery(fake, selection, { limit: 10 })).map((r) => r.id),
    expected.slice(0, 10),
  );
  const page2 = await planQuery(fake, selection, { limit: 10, beforeId: expected[9]! });
  assert.deepEqual(
    page2.map((r) => r.id),
    expected.slice(10, 20),
  );
});

it('reads after an id only in the projects holding an entry of the time range', async () => {
  const walked: (readonly number[])[] = [];
  const probes: [number, number, number, number][] = [];
  const inRange = new Set([2]);
  const fake = {
    ...reads(0),
    async countInRange(projectId: number, from: number, to: number, cap: number) {
      probes.push([projectId, from, to, cap]);
      return inRange.has(projectId) ? cap : 0;
    },
    async oldest(projectIds: readonly number[]) {
      walked.push(projectIds);
      return [];
    },
  } as unknown as QueryPlanReads;
  const ranged: LogSelection = { ...selection, projectIds: [1, 2, 3], words: [], from: 1000, to: null };
  assert.deepEqual(await planLogsAfter(fake, ranged, 0, 10), []);
  assert.deepEqual(walked, [[2]], 'only the project with entries in the range is walked');
  assert.deepEqual(
    probes.map((p) => p[0]),
    [1, 2, 3],
  );
  assert.ok(
    probes.every((p) => p[1] === 1000 && p[2] >= Number.MAX_SAFE_INTEGER && p[3] === 1),
    'one probe each, up to one entry',
  );
  inRange.clear();
  assert.deepEqual(await planLogsAfter(fake, ranged, 0, 10), []);
  assert.equal(walked.length, 1, 'a range no project holds anything of reads nothing more');
});
