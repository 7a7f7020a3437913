/**
 * Request bodies: read with the size limit enforced while the bytes arrive
 * (413 as soon as it is crossed, nothing buffered beyond it), then parsed as
 * JSON (whatever the Content-Type) or as a form, and validated with superstruct.
 */
import type { IncomingMessage } from 'node:http';
import { type StructError, validate, type Struct } from 'superstruct';
import { type LogServiceError, invalidRequest, payloadTooLarge, type FieldReason } from '../core/errors.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Reads the whole body, failing with 413 the moment it grows past `limit`. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(payloadTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const onData = (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        // Keep draining (discarding) so the response can still be written.
        reject(payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.once('error', (err) => {
      if (!failed) {
        failed = true;
        reject(err);
      }
    });
  });
}

export function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidRequest('The request body is not valid JSON.');
  }
}

export function parseForm(raw: Buffer): URLSearchParams {
  const text = raw.toString('utf8');
  // URLSearchParams accepts anything; reject what is clearly not a form (invalid percent escapes).
  try {
    for (const part of text.split('&')) if (part) decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw invalidRequest('The request body is not a valid form.');
  }
  return new URLSearchParams(text);
}

/**
 * Validates `value` against `struct`; the first failure becomes 400
 * `invalid_request` with `details: {field, reason}`.
 */
export function validateBody<T, S>(value: unknown, struct: Struct<T, S>): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  // Masking (which needs coerce) drops unknown fields: they are ignored, never an error.
  const [error, result] = validate(value, struct, { coerce: true, mask: true });
  if (error) throw structErrorToInvalidRequest(error);
  return result as T;
}

export function structErrorToInvalidRequest(error: StructError): LogServiceError {
  const failure = error.failures()[0] ?? error;
  const field = failure.path.map(String).join('.') || undefined;
  const reason: FieldReason = failure.value === undefined ? 'required' : 'invalid';
  const message = field ? (reason === 'required' ? `The field '${field}' is required.` : `The field '${field}' is invalid.`) : 'The request body is invalid.';
  return invalidRequest(message, field, reason);
}
