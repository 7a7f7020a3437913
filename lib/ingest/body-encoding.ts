/**
 * How an ingestion body is encoded on the wire: its Content-Encoding
 * (identity, gzip, deflate or br; anything else is 415), and the stream
 * that decodes it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';
import { LogServiceError } from '../core/errors.js';

export type BodyEncoding = 'identity' | 'gzip' | 'deflate' | 'br';

const ENCODINGS: Record<string, BodyEncoding> = { '': 'identity', identity: 'identity', gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'br' };

function unsupportedEncoding(value: string): LogServiceError {
  return new LogServiceError(
    'unsupported_media_type',
    `The Content-Encoding ${JSON.stringify(value)} is not supported: send identity, gzip, deflate or br (one of them, not stacked).`,
  );
}

/** The body's one encoding; 415 for an unknown one or several stacked (Node joins repeated headers with commas). */
export function readContentEncoding(headers: IncomingHttpHeaders): BodyEncoding {
  const value = headers['content-encoding'] ?? '';
  const encoding = ENCODINGS[value.trim().toLowerCase()];
  if (encoding === undefined) throw unsupportedEncoding(value);
  return encoding;
}

/** Decoded bytes per chunk: fewer, larger chunks to count and join than zlib's 16 KiB default. */
const DECODED_CHUNK_BYTES = 64 * 1024;

/**
 * A stream turning the encoded body back into its bytes, or null for
 * identity. `deflate` is the zlib format, as HTTP defines it.
 */
export function createDecoder(encoding: BodyEncoding): Transform | null {
  const options = { chunkSize: DECODED_CHUNK_BYTES };
  switch (encoding) {
    case 'identity':
      return null;
    case 'gzip':
      return createGunzip(options);
    case 'deflate':
      return createInflate(options);
    case 'br':
      return createBrotliDecompress(options);
  }
}
