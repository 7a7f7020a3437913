/**
 * The worker side of `preparation-worker.ts`: reads and prepares ingestion bodies
 * (parse or decode, map OTLP records, validate, serialise) off the event loop.
 */
import { parentPort } from 'node:worker_threads';
import { LogServiceError } from '../core/errors.js';
import { transferList } from '../storage/log-index/encoded-entries.js';
import { batchFromBody, type IngestFormat } from './body-formats.js';
import { entryFromText, type BatchTarget } from './prepared-batch.js';

interface Job {
  id: number;
  body: Uint8Array;
  target: BatchTarget;
  format: IngestFormat;
}

/** One element of a batch prepared on the event loop, too long to prepare there. */
interface ElementJob {
  id: number;
  element: string;
}

parentPort!.on('message', (job: Job | ElementJob) => {
  if ('element' in job) {
    try {
      parentPort!.postMessage({ id: job.id, element: entryFromText(job.element) });
    } catch (err) {
      parentPort!.postMessage({ id: job.id, failure: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
    return;
  }
  batchFromBody(Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength), job.target, job.format).then(
    // The encoded chunks move to the event loop's thread without a copy.
    (batch) => parentPort!.postMessage({ id: job.id, batch }, transferList(batch.request)),
    (err: unknown) =>
      parentPort!.postMessage(
        err instanceof LogServiceError
          ? { id: job.id, error: { code: err.code, status: err.status, message: err.message, details: err.details } }
          : // Not an answer for the client: PreparationWorker turns it into an unexpected error (logged, generic 500).
            { id: job.id, failure: err instanceof Error ? (err.stack ?? err.message) : String(err) },
      ),
  );
});
