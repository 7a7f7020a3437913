/**
 * `GET /metrics`: the service's Prometheus metrics in the text exposition
 * format, when `--metrics-enabled` is on; otherwise the path answers 404
 * exactly like a path no route serves. With a metrics token set, the
 * request must carry it as a bearer token (401 otherwise).
 */
import { LogServiceError, unauthorized } from '../core/errors.js';
import { STREAMED, type PublicContext, type Reply } from './route.js';

export async function getMetrics(ctx: PublicContext): Promise<Reply> {
  const metrics = ctx.deps.metrics;
  if (metrics === undefined) throw new LogServiceError('not_found', 'No such route.');
  if (!metrics.authorized(ctx.req.headers.authorization)) throw unauthorized();
  const text = await metrics.render();
  // Text, not JSON: the route writes its own response.
  ctx.res.writeHead(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' });
  ctx.res.end(text);
  return STREAMED;
}
