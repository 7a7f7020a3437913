import { sealRun } from '../lib/storage/log-index/seal-run.js';
import { buildDictionary, cutSealRuns, type SealInput } from '../lib/storage/log-index/sealed-block.js';
import { createVariedGenerator } from './support/varied-entries.js';
const gen = createVariedGenerator(1);
const entries: SealInput[] = [];
for (let i = 0; i < 100_000; i++) {
  const e = gen.next();
  entries.push({ id: i + 1, receivedAt: 1_750_000_000_000 + i, ts: Date.parse(e.timestamp as string), level: 1, body: JSON.stringify(e) });
}
const runs = cutSealRuns(entries, true);
const dictionary = { id: 1, bytes: buildDictionary(runs[0]!.map((e) => e.body)) };
for (let round = 0; round < 2; round++) {
  const t0 = performance.now();
  let bytes = 0;
  for (const run of runs) bytes += sealRun(run, dictionary).block.length;
  const ms = performance.now() - t0;
  console.log(`round ${round}: ${((ms * 1000) / entries.length).toFixed(1)} µs/entry, ${(bytes / entries.length).toFixed(1)} B/entry block`);
}
