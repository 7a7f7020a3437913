/**
 * Preparing a batch (JSON.parse, entry validation, serialising each entry) is most of the event loop's work while
 * ingesting, about as much as the SQLite writer's on its own thread
 * (docs/measurements.md). Worker threads take it for the usual batch sizes, so the
 * event loop, the writer and the workers use both cores.
 *
 * Small bodies are prepared inline (a round trip to the worker would cost
 * more than it saves), and so are large ones: those are read into the
 * reusable body buffer, which cannot be handed to another thread, and are
 * prepared in slices that yield to the event loop anyway (plain-body.ts).
 * An element of such a body that is too long to prepare on the event loop
 * in one go (OFFLOAD_MIN_BYTES) goes to the worker on its own, as text.
 */
import { Worker } from 'node:worker_threads';
import { LogServiceError, type ErrorCode } from '../core/errors.js';
import type { ServiceLogger } from '../core/logger.js';
import { batchFromBody, type IngestFormat } from './body-formats.js';
import { batchFromPlainBody } from './plain-body.js';
import { entryFromText, type BatchTarget, type PreparedBatch, type TextOutcome } from './prepared-batch.js';

/** Bodies from this size up to (not including) `maxBytes` go to the worker. */
export const WORKER_MIN_BYTES = 32 * 1024;
/** The worker's heap bounds (a 1 MiB batch of tiny invalid entries needs ~20 MB). */
const WORKER_OLD_GENERATION_MB = 96;
const WORKER_YOUNG_GENERATION_MB = 16;

interface Waiting {
  resolve(result: PreparedBatch | TextOutcome): void;
  reject(err: unknown): void;
}

/** What the worker thread posts back for one job (preparation-thread.ts). */
type WorkerAnswer =
  | { id: number; batch: PreparedBatch }
  /** One element prepared on its own (`entryFromText`). */
  | { id: number; element: TextOutcome }
  /** A refusal meant for the client (e.g. 400 for a body that is not JSON). */
  | { id: number; error: { code: ErrorCode; status: number; message: string; details?: Record<string, unknown> } }
  /** Anything else that went wrong in the worker: its description, for the service's log only. */
  | { id: number; failure: string };

/**
 * The worker runs preparation-thread.js next to this module when compiled
 * (dist/lib/ingest). Run from source under tsx (tests, benches), the worker
 * registers tsx's loader itself first (worker threads do not inherit it on
 * Node 20), then loads the .ts source; tsx is a development dependency and
 * is only looked up then.
 */
function startWorker(): Worker {
  // The worker holds at most a few 1 MiB batches at once; a small heap makes
  // V8 collect its garbage early instead of letting it pile up (RSS).
  const resourceLimits = { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./preparation-thread.js', import.meta.url), { resourceLimits });
  const loader = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./preparation-thread.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`, {
    eval: true,
    resourceLimits,
  });
}

/** Threads batches are prepared on: large requests are also sealed there (storage/log-index/presealed.ts), about twice a batch's preparation. */
export const PREPARATION_THREADS = 2;

/** One preparation thread and the jobs it has not answered yet. */
class PreparationThread {
  private worker: Worker | null = null;
  readonly waiting = new Map<number, Waiting>();

  constructor(private readonly logger: ServiceLogger) {}

  post(id: number, job: Record<string, unknown>, transfer: ArrayBuffer[], waiting: Waiting): void {
    const worker = this.start();
    this.waiting.set(id, waiting);
    worker.postMessage({ id, ...job }, transfer);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failAll(new Error('the batch preparation worker stopped'));
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker();
    worker.unref();
    worker.on('message', (answer: WorkerAnswer) => {
      const waiting = this.waiting.get(answer.id);
      if (!waiting) return;
      this.waiting.delete(answer.id);
      if ('batch' in answer) waiting.resolve(answer.batch);
      else if ('element' in answer) waiting.resolve(answer.element);
      else if ('error' in answer)
        waiting.reject(new LogServiceError(answer.error.code, answer.error.message, { status: answer.error.status, details: answer.error.details }));
      // A plain Error: the HTTP edge logs it and answers the generic 500, never this text.
      else waiting.reject(new Error(`preparing a batch failed in the worker: ${answer.failure}`));
    });
    worker.on('error', (err) => {
      this.logger.error('the batch preparation worker failed; starting another', { error: String(err) });
      if (this.worker === worker) this.worker = null;
      this.failAll(err);
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = null;
      this.failAll(new Error('the batch preparation worker exited'));
    });
    this.worker = worker;
    return worker;
  }

  private failAll(err: unknown): void {
    for (const waiting of this.waiting.values()) waiting.reject(err);
    this.waiting.clear();
  }
}

/**
 * The preparation threads (PREPARATION_THREADS, each started on first use
 * and restarted after a failure), with the same two functions as the event
 * loop (`batchFromBody`, `entryFromText`): each call runs on a thread or
 * inline, by size, with the same result. A job goes to the thread with the
 * fewest jobs in hand.
 */
export class PreparationWorker {
  private readonly threads: PreparationThread[];
  private nextId = 1;
  private closed = false;

  /** `maxBytes`: bodies this large or larger are prepared inline. */
  constructor(
    private readonly maxBytes: number,
    logger: ServiceLogger,
  ) {
    this.threads = Array.from({ length: PREPARATION_THREADS }, () => new PreparationThread(logger));
  }

  /**
   * Prepares `body` (in `format`: a plain batch or an OTLP export) for
   * `target`, as `batchFromBody` in body-formats.ts does. A body sent to the
   * worker is transferred, so the caller must not use it afterwards (it must
   * own its whole ArrayBuffer).
   */
  batchFromBody(body: Buffer, target: BatchTarget, format: IngestFormat = 'json'): Promise<PreparedBatch> {
    if (!this.onThread(body)) {
      // Inline: a plain batch sends its long elements to the worker one by one. Nothing is sealed on the event loop.
      const inline = { projectId: target.projectId, receivedAt: target.receivedAt, ...(target.columnArrays ? { columnArrays: true } : {}) };
      if (format === 'json' || format === 'ndjson') return batchFromPlainBody(body, inline, { format, offload: this.entryFromText });
      return batchFromBody(body, inline, format);
    }
    return this.send<PreparedBatch>({ body, target, format }, [body.buffer as ArrayBuffer]);
  }

  /** Whether `batchFromBody` prepares this body on a preparation thread (else inline). */
  onThread(body: Buffer): boolean {
    const owned = body.byteOffset === 0 && body.buffer.byteLength === body.length;
    return !this.closed && owned && body.length >= WORKER_MIN_BYTES && body.length < this.maxBytes;
  }

  /** Prepares one element's JSON text as `entryFromText` does, on a thread (inline once closed). */
  readonly entryFromText = (text: string): Promise<TextOutcome> => {
    if (this.closed) return Promise.resolve(entryFromText(text));
    return this.send<TextOutcome>({ element: text }, []);
  };

  private send<T extends PreparedBatch | TextOutcome>(job: Record<string, unknown>, transfer: ArrayBuffer[]): Promise<T> {
    const thread = this.threads.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      thread.post(id, job, transfer, { resolve: resolve as (result: PreparedBatch | TextOutcome) => void, reject });
    });
  }

  /** Stops the threads; batches in flight fail (the service closes after its requests). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.close()));
  }
}
