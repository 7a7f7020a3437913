/**
 * The sealing worker thread (seal-worker.ts): runs `sealRun` (and builds a
 * project's dictionary when it needs a new one) off the event loop, and
 * hands the block and its filter's shards back without a copy.
 */
import { parentPort } from 'node:worker_threads';
import { sealRun } from './seal-run.js';
import { buildDictionary } from './sealed-block.js';
import type { SealDictionary, SealInput } from './sealed-block.js';

/** A job for the thread. `newDictionaryId` set: build a dictionary from the run with that id and seal with it. */
export interface SealJob {
  id: number;
  entries: SealInput[];
  dictionary: SealDictionary | null;
  newDictionaryId: number | null;
}

parentPort!.on('message', (job: SealJob) => {
  try {
    const dictionary = job.newDictionaryId === null ? job.dictionary : { id: job.newDictionaryId, bytes: buildDictionary(job.entries.map((e) => e.body)) };
    const run = sealRun(job.entries, dictionary);
    const transfer = [run.block.buffer as ArrayBuffer, ...run.shards.map((s) => s.buffer as ArrayBuffer)];
    parentPort!.postMessage({ id: job.id, run, dictionary: job.newDictionaryId === null ? null : dictionary }, [...new Set(transfer)]);
  } catch (err) {
    parentPort!.postMessage({ id: job.id, failure: err instanceof Error ? err.message : String(err) });
  }
});
