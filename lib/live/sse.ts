/**
 * Server-Sent Events framing (the WHATWG event-stream format) for
 * `GET /v1/logs/stream`: the response head and the three frames (`log`,
 * `end`, comments). Pure string building; writing and backpressure are
 * the subscription's business.
 */
import type { ServerResponse } from 'node:http';

/** Why a stream ended: the `reason` of the terminal `end` frame. */
export type StreamEndReason = 'token_revoked' | 'project_blocked' | 'server_shutdown';

/** The stream's response headers (CORS headers are added by the caller). */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  // Event streams are always UTF-8 (WHATWG), so no charset parameter.
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  // nginx and similar proxies buffer responses unless told not to.
  'X-Accel-Buffering': 'no',
};

/** Sent at once on open, so clients and proxies see the stream is live before any entry exists. */
export const OPEN_FRAME = ': connected\n\n';

/** The heartbeat: a comment line, ignored by every SSE client. */
export const PING_FRAME = ': ping\n\n';

/**
 * One log entry: `id:` (so a reconnecting client sends `Last-Event-ID`),
 * `event: log`, and the LogEntry JSON. Compact JSON never contains a raw line
 * break (JSON.stringify escapes CR and LF), so `data` is always one line;
 * `dataLines` still splits defensively.
 */
export function logFrame(id: number, entryJson: string): string {
  return `id: ${id}\nevent: log\n${dataLines(entryJson)}\n`;
}

/** The terminal frame; it carries no `id`, so the client's last event id stays the last entry's. */
export function endFrame(reason: StreamEndReason): string {
  return `event: end\n${dataLines(JSON.stringify({ reason }))}\n`;
}

/** `data:` lines for a payload; a line break inside the payload starts a new `data:` line (SSE joins them with LF). */
function dataLines(payload: string): string {
  if (!/[\r\n]/.test(payload)) return `data: ${payload}\n`;
  return payload
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('');
}

/**
 * Takes over the response: writes the event-stream head and the opening
 * comment frame, and flushes them at once.
 */
export function openEventStream(res: ServerResponse, extraHeaders: Readonly<Record<string, string>> = {}): void {
  // The connection is the stream's alone: it closes when the stream ends
  // (`Connection: close`), so a stopping server never waits on it idling.
  res.shouldKeepAlive = false;
  res.writeHead(200, { ...extraHeaders, ...EVENT_STREAM_HEADERS });
  // Every frame should leave at once: no Nagle delay on the socket.
  res.socket?.setNoDelay(true);
  res.write(OPEN_FRAME);
}
