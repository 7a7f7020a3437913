/**
 * Following a query live over `GET /v1/logs/stream`. EventSource cannot send
 * the Authorization header the stream needs, so this reads the response
 * body with fetch and parses the few SSE fields the service sends. A dropped
 * connection is retried with `Last-Event-ID` (the last id received), so
 * nothing is missed or delivered twice; an `end` event stops for good.
 */
import { BASE, currentAccessToken, refresh } from './api';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'closed';

export interface LiveHandlers {
  onEntries(entries: Record<string, unknown>[]): void;
  onState(state: LiveState, detail?: string): void;
}

/** What an `end` event's reason means, for a person. */
export const END_REASONS: Record<string, string> = {
  token_revoked: 'Your access to these logs changed (signed out elsewhere, password changed, or a grant revoked). Sign in again to follow.',
  project_blocked: 'This project has been blocked by an administrator.',
  server_shutdown: 'The service is shutting down.',
};

export interface LiveStream {
  close(): void;
  /** Drops the current connection as a network failure would (reconnects). */
  drop(): void;
  lastId(): number;
}

/** `sinceId`: the newest entry already shown; the stream sends entries after it. */
export function followLive(params: URLSearchParams, sinceId: number, handlers: LiveHandlers): LiveStream {
  let last = sinceId;
  let closed = false;
  let controller: AbortController | null = null;
  let attempt = 0;

  async function connect(first: boolean): Promise<void> {
    while (!closed) {
      controller = new AbortController();
      handlers.onState(first && attempt === 0 ? 'connecting' : 'reconnecting');
      let ended = false;
      try {
        const res = await fetch(`${BASE}/v1/logs/stream?${params.toString()}`, {
          headers: { Authorization: `Bearer ${currentAccessToken() ?? ''}`, Accept: 'text/event-stream', 'Last-Event-ID': String(last) },
          signal: controller.signal,
          cache: 'no-store',
          credentials: 'omit',
        });
        if (res.status === 401) {
          if (!(await refresh())) return;
          continue;
        }
        if (!res.ok || !res.body) {
          let message = `The service answered ${res.status}.`;
          try {
            message = ((await res.json()) as { message: string }).message;
          } catch {
            // keep the status line
          }
          handlers.onState('ended', message);
          return;
        }
        attempt = 0;
        handlers.onState('live');
        ended = await read(res.body);
      } catch {
        // A network failure or drop(): retry below.
      }
      if (ended || closed) return;
      attempt++;
      handlers.onState('reconnecting');
      await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** Math.min(attempt, 5))));
    }
  }

  /** Reads frames until the body ends; true when an `end` event arrived. */
  async function read(body: ReadableStream<Uint8Array>): Promise<boolean> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let cut: number;
      const batch: Record<string, unknown>[] = [];
      while ((cut = buffer.indexOf('\n\n')) !== -1) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        let id: string | null = null;
        const data: string[] = [];
        for (const line of frame.split('\n')) {
          if (line.startsWith(':') || line === '') continue;
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const v = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = v;
          else if (field === 'id') id = v;
          else if (field === 'data') data.push(v);
        }
        if (event === 'log') {
          const entry = JSON.parse(data.join('\n')) as Record<string, unknown>;
          const entryId = Number(id ?? entry.id);
          // Never twice, even if a resumed stream overlapped.
          if (entryId > last) {
            last = entryId;
            batch.push(entry);
          }
        } else if (event === 'end') {
          if (batch.length) handlers.onEntries(batch);
          let reason = '';
          try {
            reason = (JSON.parse(data.join('\n')) as { reason: string }).reason;
          } catch {
            reason = data.join('\n');
          }
          handlers.onState('ended', END_REASONS[reason] ?? `The stream ended (${reason || 'no reason given'}).`);
          return true;
        }
      }
      if (batch.length) handlers.onEntries(batch);
    }
  }

  void connect(true);
  return {
    close() {
      closed = true;
      controller?.abort();
      handlers.onState('closed');
    },
    drop() {
      controller?.abort();
    },
    lastId: () => last,
  };
}
