/**
 * The worker side of `prepare-pool.ts`: reads and prepares ingestion bodies
 * (parse, validate, serialise, compute search terms) off the event loop.
 */
import { parentPort } from 'node:worker_threads';
import { LogServiceError } from '../errors.js';
import { transferList } from '../storage/encoded-entries.js';
import { prepareBody } from './batch-body.js';
import type { BatchTarget } from './prepare-entries.js';

interface Job {
  id: number;
  body: Uint8Array;
  target: BatchTarget;
}

parentPort!.on('message', (job: Job) => {
  prepareBody(Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength), job.target).then(
    // The encoded chunks move to the event loop's thread without a copy.
    (batch) => parentPort!.postMessage({ id: job.id, batch }, transferList(batch.request)),
    (err: unknown) =>
      parentPort!.postMessage({
        id: job.id,
        error:
          err instanceof LogServiceError
            ? { code: err.code, status: err.status, message: err.message, details: err.details }
            : { code: 'internal', status: 500, message: String(err) },
      }),
  );
});
