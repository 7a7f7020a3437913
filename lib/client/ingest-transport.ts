/**
 * One `POST /v1/logs` over an undici dispatcher, turned into what the
 * client does next: done (2xx), retry (network error, 5xx, 429) or give up
 * (any other status). Never throws. The answer is read only up to a bound
 * (`answerByteLimit`), and the whole exchange, headers and body, must end
 * within a total timeout besides undici's idle timeouts.
 */
import type { Dispatcher } from 'undici';
import { parseRetryAfter } from './backoff.js';
import type { EncodedBody } from './body-compression.js';
import { parseIngestionAnswer, type IngestionAnswer } from './ingest-answer.js';

export type PostOutcome =
  /**
   * 2xx. `body` is null when it was not the IngestionResponse shape (a
   * proxy's answer, say) or was longer than the bound (`tooLarge`).
   */
  | { kind: 'delivered'; status: number; body: IngestionAnswer | null; tooLarge: boolean }
  /** Worth another attempt: no answer at all (or none within the total timeout), 5xx or 429. */
  | { kind: 'retry'; status: number | null; retryAfterMs: number | null; reason: string; cause?: unknown }
  /** The server refused the batch; sending it again cannot help. */
  | { kind: 'refused'; status: number; code: string | null; reason: string };

export interface PostTarget {
  dispatcher: Dispatcher;
  origin: string;
  /** `/v1/logs`, after any base path. */
  path: string;
  secretKey: string;
  /** undici's headers and body timeouts: the longest silence, in ms. */
  timeoutMs: number;
  /** The longest one exchange may take in all, headers and body, in ms. */
  totalTimeoutMs: number;
  signal: AbortSignal;
  now: () => number;
}

const USER_AGENT = 'logkeep-ingest-client';

// setTimeout fires at once for delays past a signed 32-bit ms count; longer means never.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Sends one batch body. `maxAnswerBytes` bounds the answer read: past it
 * (declared or received) the client stops reading and the connection is
 * closed; the status still decides what happens, without the body.
 */
export async function postBatch(target: PostTarget, { body, encoding }: EncodedBody, maxAnswerBytes: number): Promise<PostOutcome> {
  let status: number;
  let text: string | null;
  let retryAfter: string | string[] | undefined;
  // One signal per exchange: the client's (close() gave up) or the total timeout.
  const exchange = new AbortController();
  let timedOut = false;
  const onClientAbort = () => exchange.abort(target.signal.reason);
  if (target.signal.aborted) onClientAbort();
  else target.signal.addEventListener('abort', onClientAbort, { once: true });
  const timer =
    target.totalTimeoutMs <= MAX_TIMER_MS
      ? setTimeout(() => {
          timedOut = true;
          exchange.abort(new Error(`no complete answer within ${target.totalTimeoutMs} ms`));
        }, target.totalTimeoutMs)
      : null;
  timer?.unref();
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
      signal: exchange.signal,
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    });
    status = res.statusCode;
    retryAfter = res.headers['retry-after'];
    // Reading the body is part of the exchange: a 202 whose body never
    // arrives (or not within the total timeout) is indistinguishable from
    // no answer, so it is retried too.
    text = await readAnswer(res.body, res.headers['content-length'], maxAnswerBytes);
  } catch (cause) {
    const reason = timedOut ? `no complete answer within ${target.totalTimeoutMs} ms` : describeNetworkError(cause);
    return { kind: 'retry', status: null, retryAfterMs: null, reason, cause };
  } finally {
    if (timer !== null) clearTimeout(timer);
    target.signal.removeEventListener('abort', onClientAbort);
  }
  const answer = text ?? '';
  if (status >= 200 && status < 300) {
    return { kind: 'delivered', status, body: text === null ? null : parseIngestionAnswer(text), tooLarge: text === null };
  }
  if (status === 429 || status >= 500) {
    return {
      kind: 'retry',
      status,
      retryAfterMs: parseRetryAfter(retryAfter, target.now()),
      reason: `HTTP ${status}${errorSuffix(answer)}${tooLargeSuffix(text, maxAnswerBytes)}`,
    };
  }
  return { kind: 'refused', status, code: errorCode(answer), reason: `HTTP ${status}${errorSuffix(answer)}${tooLargeSuffix(text, maxAnswerBytes)}` };
}

/**
 * The answer's text, or null when it declares or runs past `maxBytes`: the
 * body is then destroyed unread, which makes undici close the connection
 * rather than read the rest to reuse it.
 */
async function readAnswer(body: Dispatcher.ResponseData['body'], contentLength: string | string[] | undefined, maxBytes: number): Promise<string | null> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (declared > maxBytes) {
    body.destroy();
    return null;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLargeSuffix(text: string | null, maxBytes: number): string {
  return text === null ? ` (an answer over ${maxBytes} bytes, not read)` : '';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
