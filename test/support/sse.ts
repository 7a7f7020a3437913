/**
 * Clients for the live stream in tests: a raw reader over fetch that keeps
 * every byte and parses frames itself (for exact framing, header and order
 * assertions), and the real `eventsource` package with an Authorization
 * header passed through its `fetch` option (what applications use).
 */
import { EventSource } from 'eventsource';

/** One parsed event-stream frame (comments are kept apart). */
export interface SseFrame {
  id: string | null;
  event: string;
  data: string;
}

export interface RawStream {
  status: number;
  headers: Headers;
  /** Every byte received so far, decoded. */
  text: string;
  frames: SseFrame[];
  comments: string[];
  /** `event: log` frames, data parsed. */
  logs(): any[];
  /** The `end` frame's reason, once received. */
  endReason(): string | null;
  /** True once the server closed the body. */
  closed: boolean;
  /** Resolves when `predicate` holds (checked on every chunk); rejects after `timeoutMs`. */
  waitFor(predicate: (s: RawStream) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Waits until `count` log frames arrived. */
  waitForLogs(count: number, timeoutMs?: number): Promise<any[]>;
  /** Resolves once the server closed the body. */
  waitClosed(timeoutMs?: number): Promise<void>;
  close(): void;
}

export interface RejectedStream {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * Opens `GET {path}`. A non-200 answer is read whole and returned as a
 * RejectedStream; a 200 answer is read in the background.
 */
export async function openRawStream(
  baseUrl: string,
  path: string,
  options: { token?: string; headers?: Record<string, string> } = {},
): Promise<RawStream | RejectedStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(baseUrl + path, { headers, signal: controller.signal });
  if (res.status !== 200) {
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body, text };
  }
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  let pending = '';
  const stream: RawStream = {
    status: res.status,
    headers: res.headers,
    text: '',
    frames: [],
    comments: [],
    closed: false,
    logs: () => stream.frames.filter((f) => f.event === 'log').map((f) => JSON.parse(f.data)),
    endReason() {
      const end = stream.frames.find((f) => f.event === 'end');
      return end ? (JSON.parse(end.data) as { reason: string }).reason : null;
    },
    waitFor(predicate, timeoutMs = 10_000, what = 'condition') {
      if (predicate(stream)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(stream)) {
            cleanup();
            resolve();
          } else if (stream.closed) {
            cleanup();
            reject(new Error(`stream closed before ${what}; received:\n${stream.text.slice(-2000)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${what}; received:\n${stream.text.slice(-2000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
      });
    },
    async waitForLogs(count, timeoutMs) {
      await stream.waitFor((s) => s.frames.filter((f) => f.event === 'log').length >= count, timeoutMs, `${count} log frames`);
      return stream.logs();
    },
    waitClosed(timeoutMs) {
      return stream.waitFor((s) => s.closed, timeoutMs, 'the end of the body');
    },
    close: () => controller.abort(),
  };
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        stream.text += text;
        pending += text;
        let cut: number;
        while ((cut = pending.indexOf('\n\n')) !== -1) {
          parseBlock(pending.slice(0, cut), stream);
          pending = pending.slice(cut + 2);
        }
        wake();
      }
    } catch {
      // aborted by close(), or the connection dropped
    }
    stream.closed = true;
    wake();
  })();
  return stream;
}

function parseBlock(block: string, into: RawStream): void {
  let id: string | null = null;
  let event = 'message';
  const data: string[] = [];
  let isFrame = false;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) {
      into.comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    isFrame = true;
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (isFrame) into.frames.push({ id, event, data: data.join('\n') });
}

/** Narrows an open result: fails the test when the stream was refused. */
export function assertOpen(result: RawStream | RejectedStream): RawStream {
  if (!('frames' in result)) throw new Error(`stream refused: ${result.status} ${result.text}`);
  return result;
}

/** The real `eventsource` client, authenticating with a bearer token. */
export function authedEventSource(url: string, token: string, extraHeaders: Record<string, string> = {}): EventSource {
  return new EventSource(url, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, ...extraHeaders, Authorization: `Bearer ${token}` } }),
  });
}
