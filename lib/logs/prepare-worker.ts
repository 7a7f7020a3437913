/**
 * The worker side of `prepare-pool.ts`: reads and prepares ingestion bodies
 * (parse, validate, serialise, compute search terms) off the event loop.
 */
import { parentPort } from 'node:worker_threads';
import { LogServiceError } from '../errors.js';
import { prepareBody } from './batch-body.js';

interface Job {
  id: number;
  body: Uint8Array;
}

parentPort!.on('message', (job: Job) => {
  prepareBody(Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength)).then(
    (batch) => parentPort!.postMessage({ id: job.id, batch }),
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
