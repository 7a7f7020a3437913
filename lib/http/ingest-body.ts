/**
 * Reads an ingestion body with the least memory: with a Content-Length the
 * bytes are copied into one buffer of that size as they arrive (no chunk
 * list plus a concatenated copy), and no reference to the chunks outlives
 * the read, so a 10 MiB body costs 10 MiB while its entries wait for their
 * commit. The size limit is enforced while reading (413), as in `body.ts`.
 *
 * A large body is read into the service's spare buffer when it is free
 * (`SpareBodyBuffer`): large bodies mostly come one at a time (the ingest
 * byte budget), and a fresh 10 MiB buffer per request is memory only a
 * full garbage collection gives back, which V8 runs late (four clients
 * sending 10 MiB bodies left ~40 MB of dead buffers waiting here).
 */
import type { IncomingMessage } from 'node:http';
import { payloadTooLarge, readBody } from './body.js';

/**
 * Reads the body. With `into` (exactly Content-Length bytes, see
 * SpareBodyBuffer) the bytes land there; the result is then a view of it,
 * valid until the buffer is given back.
 */
export function readIngestBody(req: IncomingMessage, limit: number, into?: Buffer): Promise<Buffer> {
  const header = req.headers['content-length'];
  const declared = Number(header);
  if (header === undefined || !Number.isSafeInteger(declared) || declared < 0 || declared > limit) return readBody(req, limit);
  return new Promise((resolve, reject) => {
    let target: Buffer | null = into !== undefined && into.length === declared ? into : Buffer.allocUnsafe(declared);
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const fail = (err: unknown) => {
      target = null;
      cleanup();
      // Keep draining (discarding) so the response can still be written.
      req.resume();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (target === null) return;
      if (size + chunk.length > declared) {
        // More bytes than declared: Node's parser normally refuses this; treat it as over the limit.
        fail(payloadTooLarge(limit));
        return;
      }
      chunk.copy(target, size);
      size += chunk.length;
    };
    const onEnd = () => {
      const body = target;
      cleanup();
      if (body !== null) resolve(size === declared ? body : body.subarray(0, size));
    };
    const onError = (err: unknown) => fail(err);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}
