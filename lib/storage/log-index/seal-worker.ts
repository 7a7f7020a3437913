/**
 * The sealing worker: one thread per process, started on first use and
 * restarted after a failure, that turns a run of tail entries into what a
 * seal transaction inserts (seal-run.ts `sealRun`). Sealing costs tens of
 * microseconds of CPU per entry (parsing, terms, filter, deflate); on its
 * own thread it leaves the event loop to requests, the same way the
 * preparation worker does for ingestion.
 */
import { Worker } from 'node:worker_threads';
import type { SealedRun } from './seal-run.js';
import type { SealDictionary, SealInput } from './sealed-block.js';
import type { SealJob } from './seal-thread.js';
import type { RememberedRun } from './tail-memory.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The worker's heap bounds: a run is at most 4 MiB of text (SEAL_MAX_BYTES), with its terms. */
const SEAL_WORKER_OLD_GENERATION_MB = 128;
const SEAL_WORKER_YOUNG_GENERATION_MB = 16;

/**
 * Sealing threads per process. With one, a saturated load left a third of
 * two cores idle while requests waited for room in the tails; two seal
 * faster for one more thread's heap (docs/measurements.md, "Sealing threads").
 */
export const SEAL_THREADS = 2;

/** What a seal gives: the run sealed, and the dictionary built for it (null: the one given, or none, was used). */
export interface SealResult {
  run: SealedRun;
  dictionary: SealDictionary | null;
}

type Answer = { id: number; run: SealedRun; dictionary: SealDictionary | null } | { id: number; failure: string };

/**
 * In development (`.ts` sources) the thread registers tsx first, as the
 * preparation worker does; built, it loads the compiled file.
 */
function startWorker(): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: SEAL_WORKER_OLD_GENERATION_MB, maxYoungGenerationSizeMb: SEAL_WORKER_YOUNG_GENERATION_MB };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./seal-thread.js', import.meta.url), { resourceLimits });
  const loader = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./seal-thread.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`, {
    eval: true,
    resourceLimits,
  });
}

export class SealWorker {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(r: SealResult): void; reject(e: unknown): void }>();

  /** Seals a run (ids increasing, one project, cut by `cutSealRuns`). */
  seal(entries: SealInput[], dictionary: SealDictionary | null, newDictionaryId: number | null): Promise<SealResult> {
    return this.post({ entries, dictionary, newDictionaryId });
  }

  /** Seals the first run of rows as ingestion committed them (tail-memory.ts), decoded on the thread; the result's `count` says how many. */
  sealRemembered(remembered: RememberedRun, dictionary: SealDictionary | null, newDictionaryId: number | null): Promise<SealResult> {
    return this.post({ remembered, dictionary, newDictionaryId });
  }

  private post(job: DistributiveOmit<SealJob, 'id'>): Promise<SealResult> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<SealResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, ...job } as SealJob);
    });
  }

  /** Stops the thread; pending seals fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failAll(new Error('the sealing worker was closed'));
  }

  private failAll(err: unknown): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker();
    worker.unref();
    worker.on('message', (answer: Answer) => {
      const waiting = this.waiting.get(answer.id);
      if (!waiting) return;
      this.waiting.delete(answer.id);
      if ('failure' in answer) waiting.reject(new Error(`sealing failed in the worker: ${answer.failure}`));
      else waiting.resolve({ run: answer.run, dictionary: answer.dictionary });
    });
    worker.on('error', (err) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(err);
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = null;
      this.failAll(new Error('the sealing worker stopped'));
    });
    this.worker = worker;
    return worker;
  }
}

/** The process's sealing threads (each started on first use). */
export function sealWorkers(): SealWorker[] {
  return Array.from({ length: SEAL_THREADS }, () => new SealWorker());
}
