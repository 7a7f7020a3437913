/**
 * The `node:http` request handler: CORS, routing, the IP bucket of
 * rate-limited routes, credentials, the forced-password-change gate, path
 * ids, then the route; one try/catch maps every failure to an envelope and
 * hides internals behind 500. On authenticated routes a caller learns
 * nothing (not even whether an id exists) before their credentials pass.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LogServiceError, invalidRequest } from '../core/errors.js';
import { parseId } from '../core/ids.js';
import { secondsSince } from '../core/observe.js';
import type { ServiceDeps } from './service-deps.js';
import { createCors } from './cors.js';
import { clientIp } from '../core/client-ip.js';
import { DEFAULT_BODY_LIMIT, parseForm, parseJson, readBody, validateBody } from './body.js';
import { INTERNAL_ERROR, sendBytes, sendEmpty, sendError, sendJson, sendJsonText, type Envelope } from './envelopes.js';
import { createRouter } from './router.js';
import { authenticateIngestAccessKey, authenticateProjectKey, authenticateUser, bearerOf, requireKeyPermission } from './authenticate.js';
import { isAccessKey } from '../auth/access-keys.js';
import type { Reply, RequestInfo, Route } from './route.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HandlerOptions {
  /** Served under this prefix (e.g. `/logs`): `/logs/v1/users`, `/logs/healthz`. */
  basePath?: string;
  /** Hook for the IP bucket of rate-limited routes; throws (or rejects with) 429. Awaited, so an audit row can be written first. */
  beforeRateLimitedRoute?: (request: RequestInfo) => void | Promise<void>;
}

/** Added to every response of a `noStore` route (RFC 6749 asks it of token responses). */
const NO_STORE_HEADERS = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;
/** Added to every answer of a route that takes credentials: what a caller may read is never kept by a cache on the way. */
const PRIVATE_HEADERS = { 'Cache-Control': 'no-store' } as const;

export function createHandler(deps: ServiceDeps, routes: readonly Route[], options: HandlerOptions = {}): RequestHandler {
  const router = createRouter(routes);
  const cors = createCors(deps.config.corsAllowedOrigins);
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // What the request counts under in metrics: a route's path, never the raw one.
    const counted = { route: UNMATCHED };
    logRequestWhenDone(deps, req, res, counted);
    const corsDecision = cors(req);
    const corsHeaders = corsDecision.headers;
    if (corsDecision.preflight) {
      counted.route = PREFLIGHT;
      sendEmpty(res, 204, corsHeaders);
      req.resume();
      return;
    }

    let envelope: Envelope = 'general';
    let headers = corsHeaders;
    try {
      // Node refuses non-ASCII bytes in the request target, so its length is its size in bytes.
      if ((req.url ?? '').length > deps.config.httpMaxUrlBytes) {
        throw invalidRequest(`The request URL is longer than ${deps.config.httpMaxUrlBytes} bytes.`);
      }
      const url = requestUrl(req.url ?? '/');
      let path = url.pathname;
      if (basePath) {
        if (path !== basePath && !path.startsWith(`${basePath}/`)) throw notServed();
        path = path.slice(basePath.length) || '/';
      }

      const match = router.match(req.method ?? 'GET', path);
      if (match.kind === 'none') throw notServed();
      const route = match.route;
      counted.route = route.path;
      envelope = route.envelope;
      if (route.noStore) headers = { ...corsHeaders, ...NO_STORE_HEADERS };
      else if (route.auth !== 'none') headers = { ...corsHeaders, ...PRIVATE_HEADERS };
      const request = requestInfo(deps, req, res, route, { path, basePath, query: url.searchParams });
      if (route.rateLimited) await options.beforeRateLimitedRoute?.(request);
      const reply = await serveRoute(deps, route, request, match.rawParams);
      writeReply(res, reply, headers);
    } catch (err) {
      if (res.headersSent) {
        if (!(err instanceof LogServiceError)) deps.logger.error('request failed after the response started', { error: describe(err) });
        res.destroy();
        return;
      }
      if (err instanceof LogServiceError) {
        const extra = err.status === 413 ? { ...headers, Connection: 'close' } : headers;
        sendError(res, err, envelope, extra);
      } else {
        deps.logger.error('unexpected error', { method: req.method, path: req.url?.split('?')[0], error: describe(err) });
        sendError(res, INTERNAL_ERROR, 'general', headers);
      }
    } finally {
      // A body nobody read is drained so the connection stays usable.
      if (!req.readableEnded && req.listenerCount('data') === 0) req.resume();
    }
  }

  return (req, res) => {
    serve(req, res).catch((err) => {
      deps.logger.error('handler crashed', { error: describe(err) });
      if (!res.headersSent) sendError(res, INTERNAL_ERROR, 'general');
      else res.destroy();
    });
  };
}

/**
 * One line per request at `info`: method, path (never the query string,
 * which may carry filters worth keeping private), status, duration and the
 * kind of caller. Never a header value, token or body.
 */
function logRequestWhenDone(deps: ServiceDeps, req: IncomingMessage, res: ServerResponse, counted: { route: string }): void {
  const started = process.hrtime.bigint();
  res.once('close', () => {
    deps.observer?.requestDone(countedMethod(req.method), counted.route, res.statusCode, secondsSince(started));
    const auth = req.headers.authorization;
    const caller = typeof auth !== 'string' ? 'anonymous' : /^Bearer\s+slk_/i.test(auth) ? 'project-key' : /^Bearer\s+lka_/i.test(auth) ? 'access-key' : 'user';
    deps.logger.info('request', {
      method: req.method,
      path: (req.url ?? '/').split('?')[0],
      status: res.statusCode,
      duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
      // Not `caller`: log formatters read that key as a source location.
      caller_kind: caller,
    });
  });
}

/** Methods counted by name in metrics; any other counts as `OTHER`. */
const COUNTED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Metrics' route label for requests no route matched, and for CORS preflights. */
const UNMATCHED = 'unmatched';
const PREFLIGHT = 'preflight';

function countedMethod(method: string | undefined): string {
  return method !== undefined && COUNTED_METHODS.has(method) ? method : 'OTHER';
}

/**
 * The request target as a URL. A target starting with `/` is always a path,
 * so `//host/x` or `/\host/x` never names a host (and never reaches the route
 * `/x`); an absolute one (`http://host/x`, which proxies may send) is parsed
 * as such; a target that does not parse answers 400 instead of crashing.
 */
function requestUrl(target: string): URL {
  try {
    return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target, 'http://localhost');
  } catch {
    throw invalidRequest('The request target is not a valid URL.');
  }
}

function notServed(): LogServiceError {
  return new LogServiceError('not_found', 'No such route.');
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

function requestInfo(
  deps: ServiceDeps,
  req: IncomingMessage,
  res: ServerResponse,
  route: Route,
  target: { path: string; basePath: string; query: URLSearchParams },
): RequestInfo {
  const limit = route.bodyLimit === 'ingest' ? deps.config.maxIngestBodyBytes : DEFAULT_BODY_LIMIT;
  const ua = req.headers['user-agent'];
  return {
    req,
    res,
    deps,
    route,
    ...target,
    clientIp: clientIp(req, deps.config.trustedProxyHops),
    userAgent: typeof ua === 'string' ? ua : null,
    async json(struct) {
      return validateBody(parseJson(await readBody(req, limit)), struct);
    },
    async rawJson() {
      return parseJson(await readBody(req, limit));
    },
    async form() {
      return parseForm(await readBody(req, limit));
    },
  };
}

/**
 * Checks the route's credential, then its path ids, and calls it with the
 * context its credential kind promises.
 */
async function serveRoute(deps: ServiceDeps, route: Route, request: RequestInfo, rawParams: Record<string, string>): Promise<Reply> {
  switch (route.auth) {
    case 'none':
      return route.handle({ ...request, params: pathIds(rawParams) });
    case 'user': {
      const principal = await authenticateUser(deps, request.req);
      requireKeyPermission(principal, route.accessKey);
      if (principal.user.mustChangePassword && !route.allowDuringPasswordChange) {
        throw new LogServiceError('must_change_password', 'You must change your password before using this endpoint.');
      }
      return route.handle({ ...request, principal, params: pathIds(rawParams) });
    }
    case 'project-key': {
      const bearer = bearerOf(request.req);
      const key =
        bearer !== null && isAccessKey(bearer)
          ? await authenticateIngestAccessKey(deps, request.req, request.query, route.accessKey)
          : await authenticateProjectKey(deps, request.req);
      return route.handle({ ...request, key, params: pathIds(rawParams) });
    }
  }
}

/** The path's ids as numbers; 400 naming the first one that is not a positive integer. */
function pathIds(rawParams: Record<string, string>): Record<string, number> {
  const ids: Record<string, number> = {};
  for (const [name, raw] of Object.entries(rawParams)) {
    const id = parseId(raw);
    if (id === null) throw invalidRequest(`The path parameter '${name}' must be a positive integer.`, name, 'invalid');
    ids[name] = id;
  }
  return ids;
}

function writeReply(res: ServerResponse, reply: Reply, corsHeaders: Record<string, string>): void {
  if ('streamed' in reply) return;
  const headers = { ...corsHeaders, ...reply.headers };
  if ('jsonText' in reply) sendJsonText(res, reply.status, reply.jsonText, headers);
  else if ('bytes' in reply) sendBytes(res, reply.status, reply.bytes, reply.contentType, headers);
  else if (reply.body === undefined) sendEmpty(res, reply.status, headers);
  else sendJson(res, reply.status, reply.body, headers);
}
