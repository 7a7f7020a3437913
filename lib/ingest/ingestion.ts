/**
 * The ingestion pipeline a service owns, built once: the shared byte
 * budget, the spare body buffer, the preparation worker and the
 * group-commit queue. Each request runs through it in `ingestRequest`
 * (ingest-request.ts).
 */
import type { LogServiceConfig } from '../core/config.js';
import type { ServiceLogger } from '../core/logger.js';
import { NO_OBSERVER, type ServiceObserver } from '../core/observe.js';
import type { Storage } from '../storage/storage.js';
import type { SealDictionary } from '../storage/log-index/sealed-block.js';
import { ByteBudget } from './byte-budget.js';
import { SPARE_BODY_MIN_BYTES, SpareBodyBuffer } from './spare-body-buffer.js';
import { PreparationWorker } from './preparation-worker.js';
import { IngestQueue } from './ingest-queue.js';

/**
 * Bodies buffered, parsed or awaiting their commit at once are bounded to
 * one maximal body plus this much: a 10 MiB batch goes alone (with small
 * batches beside it), and four clients sending 10 MiB bodies take turns.
 * Prepared entries take about three times their body's bytes.
 */
export const INGEST_BUDGET_SLACK = 2 * 1024 * 1024;
/**
 * A body that sends nothing for this long is answered 408 and closed, so a
 * client that stops mid-body holds its share of the budget no longer.
 */
export const INGEST_BODY_IDLE_MS = 10_000;
const MAX_ENTRIES_PER_COMMIT = 20_000;
const MAX_BYTES_PER_COMMIT = 16 * 1024 * 1024;

/** What every ingestion request of a service shares; `ingestRequest` runs one request through it. */
export interface Ingestion {
  /** The group-commit queue: batches of several requests committed in one transaction. */
  readonly queue: IngestQueue;
  /** Largest body accepted, decoded (413 beyond): `--max-ingest-body-bytes`. */
  readonly maxBodyBytes: number;
  /** The bytes all bodies may hold at once, read, prepared or awaiting their commit. */
  readonly budget: ByteBudget;
  /** The reusable buffer large bodies are read into. */
  readonly spareBody: SpareBodyBuffer;
  /** A body idle this long is answered 408 (INGEST_BODY_IDLE_MS unless a test shortens it). */
  readonly bodyIdleMs: number;
  /** Prepares batches, off the event loop for the usual sizes. */
  readonly preparation: PreparationWorker;
  /** Told of bodies, batches and commits (metrics). */
  readonly observer: ServiceObserver;
  /** The project's newest dictionary, which large batches are sealed with as they are prepared (Storage `ingestDictionary`). */
  dictionaryOf(projectId: number): Promise<SealDictionary | null>;
  /** Whether batches are encoded as PostgreSQL binary arrays too (the server backend inserts those). */
  readonly columnArrays: boolean;
  /** A batch large enough to be sealed as it was prepared was not (Storage `presealMissed`). */
  presealMissed(projectId: number): void;
  /** Finishes every accepted request's commit, then refuses new ones. */
  close(): Promise<void>;
}

/** Builds a service's ingestion over `storage`; `close()` it before closing the storage. */
export function createIngestion(
  storage: Storage,
  config: LogServiceConfig,
  logger: ServiceLogger,
  options: { bodyIdleMs?: number; observer?: ServiceObserver } = {},
): Ingestion {
  const observer = options.observer ?? NO_OBSERVER;
  // One writer on SQLite; on PostgreSQL a few transactions at once, leaving
  // pool connections for queries.
  const concurrency = storage.backend === 'file' ? 1 : Math.max(1, Math.min(4, Math.floor(config.dbServerPoolSize / 2)));
  const queue = new IngestQueue(storage, {
    concurrency,
    maxEntriesPerCommit: MAX_ENTRIES_PER_COMMIT,
    maxBytesPerCommit: MAX_BYTES_PER_COMMIT,
    logger,
    observer,
  });
  const budget = new ByteBudget(config.maxIngestBodyBytes + INGEST_BUDGET_SLACK);
  const preparation = new PreparationWorker(SPARE_BODY_MIN_BYTES, logger);
  return {
    queue,
    maxBodyBytes: config.maxIngestBodyBytes,
    budget,
    bodyIdleMs: options.bodyIdleMs ?? INGEST_BODY_IDLE_MS,
    spareBody: new SpareBodyBuffer(config.maxIngestBodyBytes),
    preparation,
    observer,
    dictionaryOf: (projectId) => storage.ingestDictionary?.(projectId) ?? Promise.resolve(null),
    columnArrays: storage.backend === 'server',
    presealMissed: (projectId) => storage.presealMissed?.(projectId),
    close: async () => {
      await queue.close();
      await preparation.close();
    },
  };
}
