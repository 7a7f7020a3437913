/**
 * Reads an ingestion body against the shared byte budget
 * (logs/byte-budget.ts): each chunk is taken from the budget as it
 * arrives; when the budget cannot grant it yet, the request is paused
 * (TCP backpressure holds the client) until it can. The size limit is
 * enforced while reading (413), as in `body.ts`.
 *
 * A body that sends nothing for `idleMs` is answered 408 and its connection
 * closed, giving its bytes back: a client that stops sending can hold the
 * budget only that long. Time spent paused for the budget is not idle time
 * (the client is not at fault then).
 *
 * Nothing is allocated ahead of the bytes: a body declaring 10 MiB and
 * sending one byte costs one byte. A large body with a Content-Length is
 * copied into the service's spare buffer when it is free (SpareBodyBuffer):
 * a fresh 10 MiB buffer per request is memory only a full garbage
 * collection gives back, which V8 runs late. Otherwise chunks are kept and
 * joined once at the end.
 */
import type { IncomingMessage } from 'node:http';
import { LogServiceError } from '../core/errors.js';
import type { BodyHold } from '../logs/byte-budget.js';
import { payloadTooLarge } from './body.js';

export interface IngestBodyOptions {
  /** Largest body accepted (413 beyond). */
  limit: number;
  /** This body's share of the shared budget; every byte read is taken from it first. */
  hold: BodyHold;
  /** Answer 408 after this long without a byte from the client. */
  idleMs: number;
  /** Exactly Content-Length bytes to read into (see SpareBodyBuffer); the result is then a view of it. */
  into?: Buffer;
}

export function requestTimeout(idleMs: number): LogServiceError {
  // Connection: close: the rest of a stalled body is never read.
  return new LogServiceError('request_timeout', `The request body sent nothing for ${idleMs / 1000} s.`, { headers: { Connection: 'close' } });
}

export function readIngestBody(req: IncomingMessage, options: IngestBodyOptions): Promise<Buffer> {
  const { limit, hold, idleMs } = options;
  let into = options.into ?? null;
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  let timer: NodeJS.Timeout | null = null;

  return new Promise((resolve, reject) => {
    const stopTimer = () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    };
    const startTimer = () => {
      stopTimer();
      timer = setTimeout(() => fail(requestTimeout(idleMs)), idleMs);
    };
    const cleanup = () => {
      done = true;
      stopTimer();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const fail = (err: unknown) => {
      if (done) return;
      cleanup();
      chunks.length = 0;
      into = null;
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (done) return;
      if (size + chunk.length > limit || (into !== null && size + chunk.length > into.length)) {
        fail(payloadTooLarge(limit));
        return;
      }
      if (into !== null) chunk.copy(into, size);
      else chunks.push(chunk);
      size += chunk.length;
      if (hold.take(chunk.length)) {
        startTimer();
        return;
      }
      req.pause();
      stopTimer();
      void hold.wait(chunk.length).then(() => {
        if (done) return;
        startTimer();
        req.resume();
      });
    };
    const onEnd = () => {
      if (done) return;
      const target = into;
      cleanup();
      if (target !== null) resolve(size === target.length ? target : target.subarray(0, size));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: unknown) => fail(err);
    // The client went away before the end (no 'error' on every Node version).
    const onClose = () => fail(new Error('the client closed the connection before the body ended'));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
    startTimer();
  });
}
