/**
 * The only module that writes response bodies. Two error shapes exist: the
 * general `{error, message, details?}` and RFC 6749's `{error,
 * error_description}` for the token endpoint; 429 always uses the general one.
 */
import type { ServerResponse } from 'node:http';
import { LogServiceError } from '../core/errors.js';

export type Envelope = 'general' | 'oauth';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Sends pre-serialised JSON text (e.g. log entries assembled from stored text). */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers?: Record<string, string>): void {
  res.statusCode = status;
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Sends a body that is not JSON (e.g. an OTLP protobuf answer). */
export function sendBytes(res: ServerResponse, status: number, bytes: Uint8Array, contentType: string, headers?: Record<string, string>): void {
  res.statusCode = status;
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', bytes.byteLength);
  res.end(bytes);
}

export function sendEmpty(res: ServerResponse, status: number, headers?: Record<string, string>): void {
  res.statusCode = status;
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (status !== 204) res.setHeader('Content-Length', 0);
  res.end();
}

export function errorBody(err: LogServiceError, envelope: Envelope): Record<string, unknown> {
  if (envelope === 'oauth' && err.status !== 429) {
    return { error: err.code, error_description: err.message };
  }
  const body: Record<string, unknown> = { error: err.code, message: err.message };
  if (err.details !== undefined) body.details = err.details;
  return body;
}

export function sendError(res: ServerResponse, err: LogServiceError, envelope: Envelope, headers?: Record<string, string>): void {
  sendJson(res, err.status, errorBody(err, envelope), { ...headers, ...err.headers });
}

export const INTERNAL_ERROR = new LogServiceError('internal_error', 'The server could not complete the request.');
