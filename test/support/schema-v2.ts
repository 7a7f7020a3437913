/**
 * A schema-version-2 database holding entries (written with plain SQL, as
 * that version's ingestion left them), and what its histograms must count
 * once it is migrated: the rollup (minutes and hours) filled by the migration must
 * give the counts the entries give, on both backends.
 */
import assert from 'node:assert/strict';
import { histogramGrid } from '../../lib/logs/log-histogram.js';
import type { HistogramCounts, HistogramGrid } from '../../lib/storage/types-logs.js';
import type { ReadOps } from '../../lib/storage/storage.js';

export interface V2Entry {
  /** 0 or 1: the first or second project created. */
  project: number;
  ts: number;
  level: number;
}

/** Entries of two projects over three hours (at scattered milliseconds), plus a few on either side of 1970-01-01 (minutes before the epoch floor downwards). */
export function v2Entries(): V2Entry[] {
  let s = 17;
  const rnd = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const base = Date.UTC(2025, 6, 1, 9, 0);
  const out: V2Entry[] = [];
  for (let i = 0; i < 600; i++) out.push({ project: i % 3 === 0 ? 1 : 0, ts: base + Math.floor(rnd() * 3 * 3_600_000), level: Math.floor(rnd() * 5) });
  for (const ts of [-90_001, -60_000, -59_999, -1, 0, 59_999, 60_000]) out.push({ project: 0, ts, level: 2 });
  return out;
}

/** The histogram of one project's entries over [from, to] for `buckets`, computed here. */
function expectedCounts(entries: readonly V2Entry[], project: number, from: number, to: number, grid: HistogramGrid, minLevel: number): HistogramCounts {
  const counts = Array.from({ length: grid.count }, () => [0, 0, 0, 0, 0]);
  for (const e of entries) {
    if (e.project !== project || e.ts < from || e.ts > to || e.level < minLevel) continue;
    counts[Math.floor((e.ts - grid.origin) / grid.stepMs)]![e.level]! += 1;
  }
  return counts;
}

/** Ranges whose buckets hold whole hours, whole minutes, partial minutes, or are under a minute wide, and around the epoch. */
const CASES: { from: number; to: number; buckets: number; minLevel: number }[] = [
  { from: Date.UTC(2025, 6, 1, 8), to: Date.UTC(2025, 6, 1, 13), buckets: 60, minLevel: 0 },
  { from: Date.UTC(2025, 6, 1, 9, 10, 30, 250), to: Date.UTC(2025, 6, 1, 11, 47, 12, 999), buckets: 7, minLevel: 0 },
  { from: Date.UTC(2025, 6, 1, 9, 10, 30, 250), to: Date.UTC(2025, 6, 1, 11, 47, 12, 999), buckets: 500, minLevel: 3 },
  { from: Date.UTC(2025, 6, 1, 10, 0, 5), to: Date.UTC(2025, 6, 1, 10, 6, 55), buckets: 100, minLevel: 0 },
  { from: Date.UTC(2025, 6, 1, 8), to: Date.UTC(2025, 6, 1, 13), buckets: 5, minLevel: 0 },
  { from: Date.UTC(2025, 6, 1, 9, 10, 30, 250), to: Date.UTC(2025, 6, 1, 11, 47, 12, 999), buckets: 3, minLevel: 1 },
  { from: -120_000, to: 120_000, buckets: 4, minLevel: 0 },
  { from: -7_200_000, to: 7_199_999, buckets: 4, minLevel: 0 },
  { from: -100_000, to: 59_999, buckets: 500, minLevel: 0 },
];

/** Checks every case's histogram against the entries, for both projects. */
export async function assertV2Histograms(storage: ReadOps, projectIds: readonly [number, number], entries: readonly V2Entry[]): Promise<void> {
  let counted = 0;
  for (const { from, to, buckets, minLevel } of CASES) {
    const grid = histogramGrid(from, to, buckets);
    for (const project of [0, 1]) {
      const selection = { projectIds: [projectIds[project]!], minLevel, from, to, words: [], prefixes: [], exact: [] };
      const expected = expectedCounts(entries, project, from, to, grid, minLevel);
      assert.deepEqual(
        await storage.logHistogram(selection, grid),
        expected,
        `${new Date(from).toISOString()} ${new Date(to).toISOString()} ${buckets} ≥${minLevel} project ${project}`,
      );
      counted += expected.flat().reduce((a, b) => a + b, 0);
    }
  }
  assert.ok(counted > 500, `only ${counted} entries counted`);
}
