/**
 * One `POST /v1/logs` over an undici dispatcher, turned into what the
 * client does next: done (2xx), retry (network error, 5xx, 429) or give up
 * (any other status). Never throws.
 */
import type { Dispatcher } from 'undici';
import { parseRetryAfter } from './backoff.js';
import type { EncodedBody } from './body-compression.js';

/** One rejected entry as the 202 body lists it. */
export interface WireRejection {
  index: number;
  error: string;
  message: string;
}

export type PostOutcome =
  /** 2xx. `body` is null when it was not the IngestionResponse shape (a proxy's answer, say). */
  | { kind: 'delivered'; status: number; body: { accepted: number; rejected: WireRejection[] } | null }
  /** Worth another attempt: no answer at all, 5xx or 429. */
  | { kind: 'retry'; status: number | null; retryAfterMs: number | null; reason: string; cause?: unknown }
  /** The server refused the batch; sending it again cannot help. */
  | { kind: 'refused'; status: number; code: string | null; reason: string };

export interface PostTarget {
  dispatcher: Dispatcher;
  origin: string;
  /** `/v1/logs`, after any base path. */
  path: string;
  secretKey: string;
  timeoutMs: number;
  signal: AbortSignal;
  now: () => number;
}

const USER_AGENT = 'logkeep-ingest-client';

export async function postBatch(target: PostTarget, { body, encoding }: EncodedBody): Promise<PostOutcome> {
  let status: number;
  let text: string;
  let retryAfter: string | string[] | undefined;
  try {
    const res = await target.dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers: {
        authorization: `Bearer ${target.secretKey}`,
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...(encoding === null ? {} : { 'content-encoding': encoding }),
      },
      body,
      signal: target.signal,
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    });
    status = res.statusCode;
    retryAfter = res.headers['retry-after'];
    // Reading the body is part of the exchange: a 202 whose body never
    // arrives is indistinguishable from no answer, so it is retried too.
    text = await res.body.text();
  } catch (cause) {
    return { kind: 'retry', status: null, retryAfterMs: null, reason: describeNetworkError(cause), cause };
  }
  if (status >= 200 && status < 300) return { kind: 'delivered', status, body: parseIngestionResponse(text) };
  if (status === 429 || status >= 500) {
    return { kind: 'retry', status, retryAfterMs: parseRetryAfter(retryAfter, target.now()), reason: `HTTP ${status}${errorSuffix(text)}` };
  }
  return { kind: 'refused', status, code: errorCode(text), reason: `HTTP ${status}${errorSuffix(text)}` };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseIngestionResponse(text: string): { accepted: number; rejected: WireRejection[] } | null {
  const body = parseJson(text) as { accepted?: unknown; rejected?: unknown } | undefined;
  if (!body || typeof body.accepted !== 'number' || !Array.isArray(body.rejected)) return null;
  const rejected = body.rejected.filter(
    (r): r is WireRejection => typeof r === 'object' && r !== null && Number.isInteger((r as WireRejection).index),
  );
  return { accepted: body.accepted, rejected };
}

/** The `error` code of a logkeep error envelope, if that is what the body is. */
function errorCode(text: string): string | null {
  const body = parseJson(text) as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? body.error : null;
}

function errorSuffix(text: string): string {
  const body = parseJson(text) as { error?: unknown; message?: unknown } | undefined;
  if (typeof body?.error !== 'string') return '';
  return typeof body.message === 'string' ? ` ${body.error}: ${body.message}` : ` ${body.error}`;
}

function describeNetworkError(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}
