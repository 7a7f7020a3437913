/**
 * `POST /v1/logs` below the HTTP layer: the ingestion pipeline a service
 * owns (body budget + group-commit queue) and the turning of a parsed batch
 * into an IngestionResponse.
 *
 * An answer lists at most MAX_LISTED_REJECTIONS rejections (the first by
 * index) and counts them all in `rejected_count`, so it stays under
 * ~150 KB whatever the body: with the cap, how long the body's budget is
 * held while the answer is built no longer matters.
 */
import type { LogServiceConfig } from '../core/config.js';
import type { ServiceLogger } from '../core/logger.js';
import { NO_OBSERVER, type ServiceObserver } from '../core/observe.js';
import type { Storage } from '../storage/storage.js';
import { ByteBudget } from './byte-budget.js';
import { SPARE_BODY_MIN_BYTES, SpareBodyBuffer } from './spare-body-buffer.js';
import { PreparePool } from './prepare-pool.js';
import { IngestQueue } from './ingest-queue.js';
import { MAX_LISTED_REJECTIONS, RejectionList, type PreparedBatch, type Rejection } from './prepare-entries.js';

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

/**
 * The largest 202 answer of `POST /v1/logs`: MAX_LISTED_REJECTIONS
 * rejections of at most ~145 bytes of JSON each (an index of up to eight
 * digits and the longest message), plus the counts. Each listed rejection
 * stands for at least one element of at least one byte and its separator,
 * so an answer is also never more than ~75 times its decoded body.
 */
export const MAX_INGESTION_ANSWER_BYTES = 150_000;

/** What storing a batch came to: the answer's facts, before they are presented. */
export interface BatchOutcome {
  /** Entries stored (and committed). */
  accepted: number;
  /** The first MAX_LISTED_REJECTIONS rejections of either kind, by ascending index. */
  rejected: Rejection[];
  /** Every element refused: accepted + rejectedCount is the number of elements sent. */
  rejectedCount: number;
  /** Of those, the ones refused for a quota. */
  quotaRejectedCount: number;
}

/** The 202 body: `{accepted, rejected, rejected_count}`. */
export interface IngestionResponse {
  accepted: number;
  /** At most MAX_LISTED_REJECTIONS, the first by index. */
  rejected: Rejection[];
  rejected_count: number;
}

/** The 202 body of `POST /v1/logs` for `outcome`. */
export function ingestionResponse(outcome: BatchOutcome): IngestionResponse {
  return { accepted: outcome.accepted, rejected: outcome.rejected, rejected_count: outcome.rejectedCount };
}

const QUOTA_MESSAGES = {
  max_entries: "Accepting this entry would exceed the project's max_entries quota.",
  max_bytes: "Accepting this entry would exceed the project's max_bytes quota.",
} as const;

/**
 * Stores a prepared batch's valid entries under the project with quotas
 * checked entry by entry, and resolves once they are committed. Quota
 * rejections join the validation ones under the same cap: the first
 * MAX_LISTED_REJECTIONS of each kind are all the merged list can need.
 */
export async function ingestBatch(queue: IngestQueue, batch: PreparedBatch): Promise<BatchOutcome> {
  const outcomes = await queue.submit(batch.request);
  let accepted = 0;
  let acceptedBytes = 0;
  const quota = new RejectionList();
  outcomes.forEach((outcome, i) => {
    if ('id' in outcome) {
      accepted += 1;
      acceptedBytes += batch.request.sizes[i]!;
    } else quota.add(batch.positions[i]!, 'quota_exceeded', QUOTA_MESSAGES[outcome.quota]);
  });
  queue.observer.batchIngested(batch.request.projectId, accepted, acceptedBytes, { validation: batch.rejectedCount, quota: quota.count });
  return {
    accepted,
    rejected: quota.count === 0 ? batch.rejected : mergeByIndex(batch.rejected, quota.listed, MAX_LISTED_REJECTIONS),
    rejectedCount: batch.rejectedCount + quota.count,
    quotaRejectedCount: quota.count,
  };
}

/** The first `max` of two lists sorted by index, merged in index order (no index is in both). */
function mergeByIndex(a: readonly Rejection[], b: readonly Rejection[], max: number): Rejection[] {
  const out: Rejection[] = [];
  let i = 0;
  let j = 0;
  while (out.length < max && (i < a.length || j < b.length)) {
    if (j >= b.length || (i < a.length && a[i]!.index < b[j]!.index)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}
