/**
 * `POST /v1/logs` below the HTTP layer: the ingestion pipeline a service
 * owns (body budget + group-commit queue) and the turning of a parsed batch
 * into an IngestionResponse.
 */
import type { LogServiceConfig } from '../core/config.js';
import type { ServiceLogger } from '../core/logger.js';
import { NO_OBSERVER, type ServiceObserver } from '../core/observe.js';
import type { Storage } from '../storage/storage.js';
import { ByteBudget } from './byte-budget.js';
import { SPARE_BODY_MIN_BYTES, SpareBodyBuffer } from './spare-body-buffer.js';
import { PreparePool } from './prepare-pool.js';
import { IngestQueue } from './ingest-queue.js';
import type { PreparedBatch, Rejection } from './prepare-entries.js';

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

export interface Ingestion {
  readonly queue: IngestQueue;
  readonly budget: ByteBudget;
  /** The reusable buffer large bodies are read into. */
  readonly spareBody: SpareBodyBuffer;
  /** A body idle this long is answered 408 (INGEST_BODY_IDLE_MS unless a test shortens it). */
  readonly bodyIdleMs: number;
  /** Prepares batches, off the event loop for the usual sizes. */
  readonly preparer: PreparePool;
  /** Told of bodies, batches and commits (metrics). */
  readonly observer: ServiceObserver;
  /** Finishes every accepted request's commit, then refuses new ones. */
  close(): Promise<void>;
}

export function createIngestion(storage: Storage, config: LogServiceConfig, logger: ServiceLogger, options: { bodyIdleMs?: number; observer?: ServiceObserver } = {}): Ingestion {
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
  const preparer = new PreparePool(SPARE_BODY_MIN_BYTES, logger);
  return {
    queue,
    budget,
    bodyIdleMs: options.bodyIdleMs ?? INGEST_BODY_IDLE_MS,
    spareBody: new SpareBodyBuffer(config.maxIngestBodyBytes),
    preparer,
    observer,
    close: async () => {
      await queue.close();
      await preparer.close();
    },
  };
}

/** The 202 body: `{accepted, rejected}`. */
export interface IngestionResponse {
  accepted: number;
  rejected: Rejection[];
}

const QUOTA_MESSAGES = {
  max_entries: "Accepting this entry would exceed the project's max_entries quota.",
  max_bytes: "Accepting this entry would exceed the project's max_bytes quota.",
} as const;

/**
 * Stores a prepared batch's valid entries under the project with quotas
 * checked entry by entry, and resolves once they are committed
 * with the response listing every rejection by index.
 */
export async function ingestBatch(queue: IngestQueue, batch: PreparedBatch): Promise<IngestionResponse> {
  const outcomes = await queue.submit(batch.request);
  let accepted = 0;
  let acceptedBytes = 0;
  const quotaRejections: Rejection[] = [];
  outcomes.forEach((outcome, i) => {
    if ('id' in outcome) {
      accepted += 1;
      acceptedBytes += batch.request.sizes[i]!;
    } else quotaRejections.push({ index: batch.positions[i]!, error: 'quota_exceeded', message: QUOTA_MESSAGES[outcome.quota] });
  });
  queue.observer.batchIngested(batch.request.projectId, accepted, acceptedBytes, { validation: batch.rejected.length, quota: quotaRejections.length });
  const rejected = quotaRejections.length === 0 ? batch.rejected : [...batch.rejected, ...quotaRejections].sort((a, b) => a.index - b.index);
  return { accepted, rejected };
}
