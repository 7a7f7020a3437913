/**
 * The query plan (query-plan.ts) against scripted reads: a read after an
 * id with a time range walks only the projects holding an entry of the range.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { planLogsAfter, type QueryPlanReads } from '../../lib/storage/log-index/query-plan.js';
import { DictionaryCache, type SealedReads } from '../../lib/storage/log-index/sealed-reads.js';
import type { LogSelection } from '../../lib/storage/types-logs.js';

/** Sealed reads of no block at all. */
const noBlocks = {
  horizon: async () => Number.MAX_SAFE_INTEGER,
  blocks: async () => [],
} as unknown as SealedReads;

const selection: LogSelection = { projectIds: [1], minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] };

it('reads after an id only in the projects holding an entry of the time range', async () => {
  const walked: (readonly number[])[] = [];
  const probes: [number, number, number, number][] = [];
  const inRange = new Set([2]);
  const fake = {
    sealed: { reads: noBlocks, cache: new DictionaryCache() },
    async countInRange(projectId: number, from: number, to: number, cap: number) {
      probes.push([projectId, from, to, cap]);
      return inRange.has(projectId) ? cap : 0;
    },
    async oldest(projectIds: readonly number[]) {
      walked.push(projectIds);
      return [];
    },
  } as unknown as QueryPlanReads;
  const ranged: LogSelection = { ...selection, projectIds: [1, 2, 3], from: 1000, to: null };
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
