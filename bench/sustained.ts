/**
 * Sustained ingestion with sealing (docs/storage-format.md, "Bounded tail"):
 * 500 entries per batch into 10 projects from 8 connections, far past the
 * burst the tails take, while the tail is counted twice a second. Prints
 * the rate, the largest tail seen beside its bound (4,096 entries per
 * project, plus what requests already admitted add), and how long sealing
 * took to catch up once the load stopped. Both backends.
 *
 * Standalone: `node --import tsx bench/sustained.ts [--quick] [--backend file|server]`.
 */
import { createBatchPool } from './support/dataset.js';
import { backendsFromArgv, createOrg, fmt, load, onEachBackend, serviceSettings, startChild, verdict, type BackendChoice } from './support/harness.js';
import { shots } from './ingest.js';
import { countTail } from './support/seal.js';
import { MAX_TAIL_ENTRIES } from '../lib/storage/log-index/tail-room.js';
import { SEAL_MAX_ENTRIES } from '../lib/storage/log-index/sealed-block.js';

const PROJECTS = 10;
const CONNECTIONS = 8;
const BATCH = 500;

export async function benchSustained(options: { quick: boolean; backends?: readonly BackendChoice[] }): Promise<void> {
  const total = options.quick ? 200_000 : 600_000;
  // Each connection's request in flight may be admitted just before its project's tail reached the bound.
  const bound = PROJECTS * MAX_TAIL_ENTRIES + CONNECTIONS * BATCH;
  console.log(`Sustained ingestion with sealing (${fmt(total)} entries, ${BATCH}/batch, ${PROJECTS} projects, ${CONNECTIONS} connections)`);
  await onEachBackend(options.backends ?? ['file', 'server'], async (name, db) => {
    const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
    try {
      const org = await createOrg(child.url, PROJECTS);
      const pool = createBatchPool(40, BATCH, 21);
      let largest = 0;
      let loading = true;
      const sampler = (async () => {
        while (loading) {
          await new Promise((r) => setTimeout(r, 500));
          largest = Math.max(largest, (await countTail(db)).tail);
        }
      })();
      const result = await load({ url: child.url, next: shots(pool, org.keys), connections: CONNECTIONS, totalEntries: total });
      loading = false;
      await sampler;
      const stopped = performance.now();
      // Part-filled runs wait for their age; caught up = no full run left in any tail.
      const leftover = PROJECTS * SEAL_MAX_ENTRIES;
      let tail = (await countTail(db)).tail;
      while (tail >= leftover && performance.now() - stopped < 120_000) {
        await new Promise((r) => setTimeout(r, 200));
        tail = (await countTail(db)).tail;
      }
      const catchUp = (performance.now() - stopped) / 1000;
      console.log(
        `  ${name}: ${fmt(result.rate)} entries/s sustained; largest tail ${fmt(largest)} entries — bound ${fmt(bound)}: ${verdict(largest <= bound)}; caught up ${fmt(catchUp, 1)} s after the load stopped (${fmt(tail)} left in part-filled runs)`,
      );
    } finally {
      await child.stop();
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchSustained({ quick: process.argv.includes('--quick'), backends: backendsFromArgv(process.argv) });
}
