/**
 * The sealing worker thread (seal-worker.ts): runs `sealRun` (and builds a
 * project's dictionary when it needs a new one) off the event loop, and
 * hands the block and its filter's shards back without a copy.
 */
import { parentPort } from 'node:worker_threads';
import { sealRun } from './seal-run.js';
import { buildDictionary, cutSealRuns } from './sealed-block.js';
import type { SealDictionary, SealInput } from './sealed-block.js';
import type { RememberedRun } from './tail-memory.js';
import type { EntryRow } from './encoded-entries.js';

/**
 * A job for the thread: a run, or rows as ingestion committed them
 * (tail-memory.ts), of which the first run is sealed. `newDictionaryId`
 * set: build a dictionary from the run with that id and seal with it.
 */
export type SealJob = { id: number; dictionary: SealDictionary | null; newDictionaryId: number | null } & (
  | { entries: SealInput[] }
  | { remembered: RememberedRun }
);

const fromUtf8 = new TextDecoder();

/** The remembered rows as entries with their ids, cut to their first run (a short one when their bytes were overestimated). */
function rememberedEntries(run: RememberedRun): SealInput[] {
  const entries: SealInput[] = [];
  for (const piece of run.pieces) {
    const rows = JSON.parse(fromUtf8.decode(piece.rows)) as EntryRow[];
    for (let i = piece.skip; i < rows.length && entries.length < run.ids.length; i++) {
      const [, receivedAt, ts, level, , body] = rows[i]!;
      entries.push({ id: run.ids[entries.length]!, receivedAt, ts, level, body });
    }
  }
  return cutSealRuns(entries, true)[0] ?? [];
}

parentPort!.on('message', (job: SealJob) => {
  try {
    const entries = 'entries' in job ? job.entries : rememberedEntries(job.remembered);
    const dictionary = job.newDictionaryId === null ? job.dictionary : { id: job.newDictionaryId, bytes: buildDictionary(entries.map((e) => e.body)) };
    const run = sealRun(entries, dictionary);
    const transfer = [run.block.buffer as ArrayBuffer, ...run.shards.map((s) => s.buffer as ArrayBuffer)];
    parentPort!.postMessage({ id: job.id, run, dictionary: job.newDictionaryId === null ? null : dictionary }, [...new Set(transfer)]);
  } catch (err) {
    parentPort!.postMessage({ id: job.id, failure: err instanceof Error ? err.message : String(err) });
  }
});
