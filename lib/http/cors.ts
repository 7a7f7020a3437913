/**
 * CORS in four rules: off unless origins are configured;
 * exact, case-sensitive matches only; preflights answered 204 with fixed
 * values before rate limiting and authentication.
 */
import type { IncomingMessage } from 'node:http';

const ALLOW_METHODS = 'GET, POST, PATCH, DELETE, OPTIONS';
const ALLOW_HEADERS = 'Authorization, Content-Type';

export interface CorsDecision {
  /** Headers every response to this request carries. */
  headers: Record<string, string>;
  /** The request is a preflight to answer 204 with `headers`. */
  preflight: boolean;
}

export function createCors(allowedOrigins: readonly string[]) {
  const allowed = new Set(allowedOrigins.filter((o) => o.length > 0));
  return function decide(req: IncomingMessage): CorsDecision {
    const origin = req.headers.origin;
    if (allowed.size === 0 || typeof origin !== 'string' || !allowed.has(origin)) {
      return { headers: {}, preflight: false };
    }
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    const headers: Record<string, string> = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
    if (preflight) {
      headers['Access-Control-Allow-Methods'] = ALLOW_METHODS;
      headers['Access-Control-Allow-Headers'] = ALLOW_HEADERS;
    }
    return { headers, preflight };
  };
}
