/**
 * Reads an ingestion body against the shared byte budget
 * (byte-budget.ts): each chunk is taken from the budget as it
 * arrives; when the budget cannot grant it yet, the request is paused
 * (TCP backpressure holds the client) until it can. The size limit is
 * enforced while reading (413), as in `http/body.ts`.
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
 *
 * A compressed body goes through its decoder first, and the limit and the
 * budget count the DECODED bytes as the decoder produces them: a small body
 * that inflates past the limit is stopped (413) the moment it does, having
 * cost the limit at most. The bytes as sent count against the limit too, so
 * a stream that decodes to little cannot run on for ever. Pausing the
 * decoder's output for the budget holds back the request through the pipe.
 */
import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { LogServiceError, invalidRequest, payloadTooLarge } from '../core/errors.js';
import type { BodyHold } from './byte-budget.js';

export interface RequestBodyOptions {
  /** Largest body accepted (413 beyond). */
  limit: number;
  /** This body's share of the shared budget; every byte read is taken from it first. */
  hold: BodyHold;
  /** Answer 408 after this long without a byte from the client. */
  idleMs: number;
  /** Exactly Content-Length bytes to read into (see SpareBodyBuffer); the result is then a view of it. */
  into?: Buffer;
  /** Decodes a compressed body (see body-encoding.ts); never with `into`. */
  decoder?: Transform | null;
}

function corruptBody(): LogServiceError {
  return invalidRequest('The request body could not be decompressed with its Content-Encoding.');
}

function requestTimeout(idleMs: number): LogServiceError {
  // Connection: close: the rest of a stalled body is never read.
  return new LogServiceError('request_timeout', `The request body sent nothing for ${idleMs / 1000} s.`, { headers: { Connection: 'close' } });
}

export function readRequestBody(req: IncomingMessage, options: RequestBodyOptions): Promise<Buffer> {
  const { limit, hold, idleMs } = options;
  const decoder = options.decoder ?? null;
  // Where the body's bytes come from: the request, or its decoder.
  const source = decoder ?? req;
  let into = decoder === null ? (options.into ?? null) : null;
  const chunks: Buffer[] = [];
  let size = 0;
  let sentSize = 0;
  let sent = false;
  let waiting = false;
  let done = false;
  let timer: NodeJS.Timeout | null = null;

  return new Promise((resolve, reject) => {
    const stopTimer = () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    };
    // Called for every chunk: an armed timer is pushed back (refresh), not replaced.
    const startTimer = () => {
      if (timer !== null) timer.refresh();
      else timer = setTimeout(() => fail(requestTimeout(idleMs)), idleMs);
    };
    const cleanup = () => {
      done = true;
      stopTimer();
      source.off('data', onData);
      source.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (decoder !== null) {
        req.off('data', onSent);
        req.off('end', onSentEnd);
        decoder.off('error', onDecoderError);
        req.unpipe(decoder);
        // Stops inflating at once; a late error from it is ignored.
        decoder.on('error', () => {});
        decoder.destroy();
      }
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
      source.pause();
      waiting = true;
      stopTimer();
      void hold.wait(chunk.length).then(() => {
        if (done) return;
        waiting = false;
        startTimer();
        source.resume();
      });
    };
    // The compressed bytes as they arrive: the client is sending.
    const onSent = (chunk: Buffer) => {
      if (done) return;
      sentSize += chunk.length;
      if (sentSize > limit) {
        fail(payloadTooLarge(limit));
        return;
      }
      if (!waiting) startTimer();
    };
    const onSentEnd = () => {
      sent = true;
    };
    const onDecoderError = () => fail(corruptBody());
    const onEnd = () => {
      if (done) return;
      const target = into;
      cleanup();
      if (target !== null) resolve(size === target.length ? target : target.subarray(0, size));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: unknown) => fail(err);
    // The client went away before the end (no 'error' on every Node version).
    // With a decoder the request may close after its end, before the decoder ends.
    const onClose = () => {
      if (!sent) fail(new Error('the client closed the connection before the body ended'));
    };
    if (decoder !== null) {
      req.on('data', onSent);
      req.once('end', onSentEnd);
      decoder.once('error', onDecoderError);
      req.pipe(decoder);
    }
    source.on('data', onData);
    source.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
    startTimer();
  });
}
