/**
 * Compresses a batch's JSON body once, before its first attempt, when it is
 * at least `compressAboveBytes` long: retries send the same bytes. gzip at
 * the fastest level: log batches are repetitive JSON, so even that level
 * shrinks them several times over, for little of the application's CPU
 * (zlib runs on libuv's thread pool, off the event loop).
 */
import { constants, gzip } from 'node:zlib';
import { promisify } from 'node:util';

const gzipAsync = promisify(gzip);

export interface EncodedBody {
  body: string | Buffer;
  /** The `Content-Encoding` to send, or null for the JSON text as it is. */
  encoding: 'gzip' | null;
}

export async function encodeBatchBody(json: string, compressAboveBytes: number): Promise<EncodedBody> {
  // The character count bounds the byte count from below: only long bodies pay for measuring.
  if (json.length * 3 < compressAboveBytes || Buffer.byteLength(json, 'utf8') < compressAboveBytes) return { body: json, encoding: null };
  return { body: await gzipAsync(json, { level: constants.Z_BEST_SPEED }), encoding: 'gzip' };
}
