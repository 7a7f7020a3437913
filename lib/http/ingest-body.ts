/**
 * Reads an ingestion body with the least memory: with a Content-Length the
 * bytes are copied into one buffer of that size as they arrive (no chunk
 * list plus a concatenated copy), and no reference to the chunks outlives
 * the read, so a 10 MiB body costs 10 MiB while its entries wait for their
 * commit. The size limit is enforced while reading (413), as in `body.ts`.
 */
import type { IncomingMessage } from 'node:http';
import { payloadTooLarge, readBody } from './body.js';

export function readIngestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const header = req.headers['content-length'];
  const declared = Number(header);
  if (header === undefined || !Number.isSafeInteger(declared) || declared < 0 || declared > limit) return readBody(req, limit);
  return new Promise((resolve, reject) => {
    let target: Buffer | null = Buffer.allocUnsafe(declared);
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
