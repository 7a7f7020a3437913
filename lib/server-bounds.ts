/**
 * The limits a `node:http` server mounting logkeep should run with, from
 * the service's configuration. The bin, the tests and embedders apply the
 * same ones:
 *
 *   const server = createServer(serverOptions(logs.config), logs.handler);
 *   applyServerBounds(server, logs.config);
 *
 * What a connection that dribbles its headers can hold: the header bytes
 * received so far (at most `httpMaxHeaderBytes`, which includes the request
 * line) plus a few KiB of socket and parser state, for at most
 * `httpHeadersTimeoutSeconds` plus one check interval; and at most
 * `httpMaxConnections` of them at once. With the defaults: about 70 KiB for
 * 11 s each, about 70 MiB in all.
 */
import type { Server, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import type { LogServiceConfig } from './core/config.js';
import type { ErrorCode } from './core/errors.js';

/** The settings these bounds are made of. */
export type ServerBoundsConfig = Pick<
  LogServiceConfig,
  'httpMaxHeaderBytes' | 'httpHeadersTimeoutSeconds' | 'httpRequestTimeoutSeconds' | 'httpKeepAliveTimeoutSeconds' | 'httpMaxConnections'
>;

/**
 * How often Node looks for connections past their header or request
 * timeout. Its default of 30 s would let a slow client keep its
 * connection three times as long as a 10 s header timeout says.
 */
export const CONNECTION_CHECK_INTERVAL_MS = 1000;

/**
 * Options for `http.createServer`. The header limit can only be set here;
 * the rest is also what `applyServerBounds` sets.
 *
 * `requestTimeout` counts until the request (headers and body) has been
 * received, never while the response is written: a live stream, whose
 * request is a bare GET, is never cut by it.
 */
export function serverOptions(config: ServerBoundsConfig): ServerOptions {
  return {
    maxHeaderSize: config.httpMaxHeaderBytes,
    headersTimeout: config.httpHeadersTimeoutSeconds * 1000,
    requestTimeout: config.httpRequestTimeoutSeconds * 1000,
    keepAliveTimeout: config.httpKeepAliveTimeoutSeconds * 1000,
    connectionsCheckingInterval: CONNECTION_CHECK_INTERVAL_MS,
  };
}

/**
 * Applies the bounds that are server properties (the connection cap, the
 * timeouts) to a server already created, before it listens, and answers
 * what the HTTP parser refuses in the general envelope. The header
 * limit is not among them: pass `serverOptions(config)` to `createServer`.
 */
export function applyServerBounds(server: Server, config: ServerBoundsConfig): void {
  answerClientErrors(server);
  server.maxConnections = config.httpMaxConnections;
  server.headersTimeout = config.httpHeadersTimeoutSeconds * 1000;
  server.requestTimeout = config.httpRequestTimeoutSeconds * 1000;
  server.keepAliveTimeout = config.httpKeepAliveTimeoutSeconds * 1000;
}

/**
 * What Node's HTTP parser refuses before any handler runs (broken framing,
 * headers too slow) is answered in the service's general envelope, so
 * clients see the same shape of error as everywhere else; Node's own
 * answer is a bare status line. Headers over the limit get a bare 431: the
 * parser stops mid-request, so the method is unknown, and a response to
 * HEAD must not carry a body.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    const refusal = parserRefusal(err.code);
    if (refusal === null || !socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    const head = err.rawPacket?.subarray(0, 5).toString('latin1');
    const body = refusal.error === null || head === 'HEAD ' ? '' : JSON.stringify({ error: refusal.error, message: refusal.message });
    socket.end(
      `HTTP/1.1 ${refusal.status} ${refusal.reason}\r\n` +
        (body ? 'Content-Type: application/json; charset=utf-8\r\n' : '') +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}

/**
 * Whether a response is already under way on this connection (then no
 * other answer can be written). Node's own default handler reads the same
 * field; it has no public equivalent.
 */
function responseStarted(socket: Duplex): boolean {
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  return Boolean(current?.headersSent);
}

interface ParserRefusal {
  status: number;
  reason: string;
  /** The envelope's code, or null for a bare answer. */
  error: ErrorCode | null;
  message: string;
}

/** The answer for a parser error code, or null when the connection is simply gone. */
export function parserRefusal(code: string | undefined): ParserRefusal | null {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return null;
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', error: null, message: '' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', error: 'request_timeout', message: 'The request did not arrive in time.' };
    default:
      return { status: 400, reason: 'Bad Request', error: 'invalid_request', message: 'The request is not valid HTTP.' };
  }
}
