/**
 * The histogram plan's paging of candidate entries (lib/storage/log-index/histogram-plan.ts)
 * against scripted reads: each page continues after the last row of the
 * one before, every candidate is checked and counted in its bucket, and a
 * histogram that gives up (too many candidates) leaves no failure of the
 * page it had already asked for behind.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  HISTOGRAM_MAX_CHECKED,
  planHistogram,
  type CandidatePosition,
  type HistogramCandidate,
  type HistogramReads,
} from '../../lib/storage/log-index/histogram-plan.js';
import { DictionaryCache, type SealedReads } from '../../lib/storage/log-index/sealed-reads.js';

const PAGE = 2000;
/** Sealed reads of no block at all. */
const noBlocks = { blocks: async () => [] } as unknown as SealedReads;
const grid = { origin: 0, stepMs: 1000, count: 10 };
const selection = { projectIds: [7], minLevel: null, from: 0, to: 9999, words: ['disk'], prefixes: [], exact: [] };

/** Reads serving the project's tail as candidate pages made by `page(n, after)`; no sealed block. */
function scripted(page: (n: number, after: CandidatePosition | null) => Promise<HistogramCandidate[]>): {
  reads: HistogramReads;
  afters: (CandidatePosition | null)[];
} {
  const afters: (CandidatePosition | null)[] = [];
  const unused = () => Promise.reject(new Error('not used by a text filter'));
  return {
    afters,
    reads: {
      anyInRange: async () => true,
      sealed: { reads: noBlocks, cache: new DictionaryCache(), countTail: unused },
      candidates: (_project, _filter, after) => {
        afters.push(after);
        return page(afters.length - 1, after);
      },
    },
  };
}

const row = (id: number, body: string): HistogramCandidate => ({ id, ts: id % 10_000, level: id % 5, body });

describe('histogram plan: candidate pages', () => {
  it('reads page after page from the last row of the one before, and counts the entries that match', async () => {
    const sizes = [PAGE, PAGE, 5];
    let next = 1;
    const { reads, afters } = scripted(async (n) =>
      Array.from({ length: sizes[n] ?? 0 }, () => {
        const id = next++;
        return row(id, JSON.stringify({ event: id % 2 === 0 ? 'disk full' : 'diskette' }));
      }),
    );
    const counts = await planHistogram(reads, selection, grid);
    assert.equal(afters.length, 3);
    assert.equal(afters[0], null);
    assert.deepEqual(afters[1], { ts: PAGE % 10_000, level: PAGE % 5, id: PAGE });
    assert.deepEqual(afters[2], { ts: (2 * PAGE) % 10_000, level: (2 * PAGE) % 5, id: 2 * PAGE });
    const expected = Array.from({ length: 10 }, () => [0, 0, 0, 0, 0]);
    for (let id = 2; id <= 2 * PAGE + 5; id += 2) expected[Math.floor((id % 10_000) / 1000)]![id % 5]! += 1;
    assert.deepEqual(counts, expected);
  });

  it('gives up past the most entries it checks, and a failed read of the next page is not left unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const full = Array.from({ length: PAGE }, (_, i) => row(i + 1, '{"event":"disk"}'));
      const lastFull = Math.ceil(HISTOGRAM_MAX_CHECKED / PAGE);
      const { reads, afters } = scripted((n) => (n <= lastFull ? Promise.resolve(full) : Promise.reject(new Error('connection lost'))));
      assert.equal(await planHistogram(reads, selection, grid), null);
      assert.ok(afters.length <= lastFull + 2, `read ${afters.length} pages`);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('fails when a page it counts on cannot be read', async () => {
    const { reads } = scripted((n) =>
      n === 0 ? Promise.resolve(Array.from({ length: PAGE }, (_, i) => row(i + 1, '{"event":"disk"}'))) : Promise.reject(new Error('connection lost')),
    );
    await assert.rejects(planHistogram(reads, selection, grid), /connection lost/);
  });
});
