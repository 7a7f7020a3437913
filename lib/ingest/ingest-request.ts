/**
 * One ingestion request, from its unread body to what was stored: the one
 * way `POST /v1/logs` and the OTLP export both take. In order:
 *
 * 1. the Content-Encoding (415 for one not understood) and the declared
 *    size (413 past the limit), before a byte is read;
 * 2. the body, read against the shared byte budget and decoded as it
 *    arrives (request-body.ts; 413 as soon as the decoded size passes the
 *    limit, 408 for a body that stops);
 * 3. the batch, prepared from the body in its format (body-formats.ts, on
 *    the preparation worker for the usual sizes; 400 for a body that is
 *    not of its format);
 * 4. the commit: the valid entries stored under the project's quotas by
 *    the group-commit queue, resolved once they are committed.
 *
 * The body's bytes stay taken from the budget until the commit is done.
 * Only the route's reading of its headers and its answer differ.
 *
 * An answer lists at most MAX_LISTED_REJECTIONS rejections (the first by
 * index) and counts them all in `rejected_count`, so it stays under
 * ~150 KB whatever the body: with the cap, how long the body's budget is
 * held while the answer is built no longer matters.
 */
import type { IncomingMessage } from 'node:http';
import { LogServiceError, payloadTooLarge } from '../core/errors.js';
import { createDecoder, readContentEncoding } from './body-encoding.js';
import type { IngestFormat } from './body-formats.js';
import type { IngestQueue } from './ingest-queue.js';
import type { Ingestion } from './ingestion.js';
import { MAX_LISTED_REJECTIONS, RejectionList, type BatchTarget, type PreparedBatch, type Rejection } from './prepared-batch.js';
import { readRequestBody } from './request-body.js';
import { PRESEAL_MIN_ENTRIES } from '../storage/log-index/presealed.js';

/** An ingestion request as its route has read it: the body is still unread. */
export interface IngestRequest {
  /** The request; its Content-Length and Content-Encoding are read here. */
  req: IncomingMessage;
  /** How the body is written (the route reads it from the Content-Type). */
  format: IngestFormat;
  /** The project of the request's key: where the entries go. */
  projectId: number;
  /** The clock; read once the body is in, for the entries' `received_at`. */
  now: () => number;
}

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

/**
 * The commit failed with an error that is not a refusal for the client
 * (the database went away, say): its `cause`. Refusals (LogServiceError)
 * pass through as they are. Lets a route answer a failed commit its own
 * way (the OTLP export: 503, retry later) without mistaking a failure to
 * read or prepare the body for one.
 */
export class CommitFailedError extends Error {
  constructor(cause: unknown) {
    super('the batch could not be committed', { cause });
    this.name = 'CommitFailedError';
  }
}

/** Reads, prepares and commits one ingestion request (steps above); refusals are LogServiceErrors. */
export async function ingestRequest(ingestion: Ingestion, request: IngestRequest): Promise<BatchOutcome> {
  const { budget, spareBody, bodyIdleMs, observer, maxBodyBytes: limit } = ingestion;
  const { req } = request;
  const encoding = readContentEncoding(req.headers);
  const declared = Number(req.headers['content-length']);
  const known = req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared >= 0;
  if (known && declared > limit) throw payloadTooLarge(limit);
  // A compressed body's declared length says nothing of its decoded size.
  const decodedLength = known && encoding === 'identity' ? declared : null;
  // The body takes budget only as its bytes arrive, and holds them until its entries are committed.
  const hold = budget.open(decodedLength ?? limit);
  try {
    const loan = decodedLength !== null ? spareBody.lend(decodedLength) : null;
    let batch: PreparedBatch;
    try {
      const decoder = createDecoder(encoding);
      const raw = await readRequestBody(req, { limit, hold, idleMs: bodyIdleMs, decoder, ...(loan ? { into: loan.buffer } : {}) });
      hold.finishReading();
      observer.bodyRead(raw.length);
      // Prepared entries hold copies of what they need: the raw bytes can go back.
      // A batch prepared on the preparation thread is also sealed there, with the project's dictionary.
      const onThread = ingestion.preparation.onThread(raw);
      const dictionary = onThread ? await ingestion.dictionaryOf(request.projectId) : null;
      const target: BatchTarget = { projectId: request.projectId, receivedAt: request.now(), dictionary, columnArrays: ingestion.columnArrays };
      batch = await ingestion.preparation.batchFromBody(raw, target, request.format);
      // Large enough for blocks of its own, but the project's tail was not empty: have it emptied for the next one.
      if (onThread && batch.request.blocks === undefined && batch.request.sizes.length >= PRESEAL_MIN_ENTRIES) {
        ingestion.presealMissed(request.projectId);
      }
    } finally {
      loan?.giveBack();
    }
    try {
      return await commitBatch(ingestion.queue, batch);
    } catch (err) {
      throw err instanceof LogServiceError ? err : new CommitFailedError(err);
    }
  } finally {
    hold.release();
  }
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
async function commitBatch(queue: IngestQueue, batch: PreparedBatch): Promise<BatchOutcome> {
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

/**
 * The largest 202 answer of `POST /v1/logs`: MAX_LISTED_REJECTIONS
 * rejections of at most ~145 bytes of JSON each (an index of up to eight
 * digits and the longest message), plus the counts. Each listed rejection
 * stands for at least one element of at least one byte and its separator,
 * so an answer is also never more than ~75 times its decoded body.
 */
export const MAX_INGESTION_ANSWER_BYTES = 150_000;

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
