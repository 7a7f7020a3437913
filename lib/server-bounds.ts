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
import type { LogServiceConfig } from './config.js';

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
 * timeouts) to a server already created, before it listens. The header
 * limit is not among them: pass `serverOptions(config)` to `createServer`.
 */
export function applyServerBounds(server: Server, config: ServerBoundsConfig): void {
  server.maxConnections = config.httpMaxConnections;
  server.headersTimeout = config.httpHeadersTimeoutSeconds * 1000;
  server.requestTimeout = config.httpRequestTimeoutSeconds * 1000;
  server.keepAliveTimeout = config.httpKeepAliveTimeoutSeconds * 1000;
}
