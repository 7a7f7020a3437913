/**
 * Benchmark batches: a pool of pre-serialised bodies (generating entries
 * while loading would tax the loader, which shares the 2 cores), replayed
 * in cycles. Each cycle moves every timestamp one day later (patched in
 * place at precomputed offsets), so time keeps increasing with ids, as it
 * does in real traffic, and time-range queries see realistic data.
 */
import { createEntryGenerator } from './entries.js';

export interface BatchPool {
  /** Pre-serialised batches. */
  bodies: Buffer[];
  entries: number[];
  /** A copy of batch `i` of cycle `cycle` (timestamps shifted by `cycle` days). */
  body(i: number, cycle: number): Buffer;
  /** Words and values the query benchmark can ask for. */
  vocabulary: string[];
  requestIds: string[];
  /** Epoch ms of the first entry (cycle 0). */
  startMs: number;
  /** Log-time span of one cycle, ms. */
  cycleSpanMs: number;
}

const DAY = 86_400_000;
const DATE_PREFIX = Buffer.from('"timestamp":"');

export function createBatchPool(batches: number, perBatch: number, seed = 1): BatchPool {
  const startMs = Date.UTC(2024, 0, 1);
  const gen = createEntryGenerator({ seed, startMs });
  const bodies: Buffer[] = [];
  const offsets: number[][] = [];
  const instants: number[][] = [];
  const requestIds: string[] = [];
  let lastTs = startMs;
  for (let b = 0; b < batches; b++) {
    const entries = Array.from({ length: perBatch }, () => gen.next());
    for (const e of entries) if (requestIds.length < 2000 && Math.random() < 0.01) requestIds.push(e.request_id as string);
    lastTs = Date.parse(entries[entries.length - 1]!.timestamp as string);
    const body = Buffer.from(JSON.stringify(entries));
    const at: number[] = [];
    for (let i = body.indexOf(DATE_PREFIX); i >= 0; i = body.indexOf(DATE_PREFIX, i + 1)) at.push(i + DATE_PREFIX.length);
    bodies.push(body);
    offsets.push(at);
    instants.push(at.map((o) => Date.parse(body.toString('latin1', o, o + 24))));
  }
  return {
    bodies,
    entries: bodies.map(() => perBatch),
    vocabulary: gen.vocabulary,
    requestIds,
    startMs,
    cycleSpanMs: lastTs - startMs,
    body(i, cycle) {
      const copy = Buffer.from(bodies[i]!);
      if (cycle === 0) return copy;
      // `YYYY-MM-DDTHH:MM:SS.mmmZ`: rewrite the whole instant, same length.
      offsets[i]!.forEach((at, k) => void copy.write(new Date(instants[i]![k]! + cycle * DAY).toISOString(), at, 24, 'latin1'));
      return copy;
    },
  };
}

export const CYCLE_SHIFT_MS = DAY;
