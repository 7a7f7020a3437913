/**
 * `GET /v1/logs/stream`: the live stream. Every check is `GET /v1/logs`'s,
 * in the same order and with the same code, so a refused subscription
 * answers exactly the same plain JSON error and never opens a stream. Only then does the hub take the response over, or answer 429
 * (general envelope, `Retry-After`) when the service or the caller already
 * has as many live streams open as allowed.
 */
import type { IncomingMessage } from 'node:http';
import { createCors } from './cors.js';
import { requireLogScope } from '../logs/log-access.js';
import { parseSinceId, readLogScope, readLogStreamQuery } from '../logs/log-query-params.js';
import type { LiveScope } from '../live/live-scope.js';
import { STREAMED, type Reply, type UserContext } from './route.js';

/** Checks in this order: scope shape → 404 → 403 forbidden → 403 project_blocked → filters → since_id (→ Last-Event-ID). */
export async function streamLogs(ctx: UserContext): Promise<Reply> {
  const principal = ctx.principal;
  const checked = await requireLogScope(ctx.deps.storage, principal, readLogScope(ctx.query));
  const { filter, sinceId } = readLogStreamQuery(ctx.query);
  // since_id wins; without it a reconnecting client's Last-Event-ID means the same.
  const start = sinceId ?? lastEventId(ctx.req);
  const scope: LiveScope =
    checked.kind === 'project'
      ? { kind: 'project', projectId: checked.project.id, groupId: checked.project.groupId }
      : { kind: 'group', groupId: checked.group.id };
  await ctx.deps.liveStreams.open({
    res: ctx.res,
    scope,
    filter,
    sinceId: start,
    // An access key outlives password changes (token_version), so its stream is re-checked by the key instead.
    caller: principal.accessKey
      ? { userId: principal.user.id, tokenVersion: null, accessKeyId: principal.accessKey.id }
      : { userId: principal.user.id, tokenVersion: principal.claims!.tv, accessKeyId: null },
    // The handler adds CORS headers only to replies it writes itself.
    headers: createCors(ctx.deps.config.corsAllowedOrigins)(ctx.req).headers,
  });
  return STREAMED;
}

/** The `Last-Event-ID` header as a catch-up position; absent or empty means none. */
function lastEventId(req: IncomingMessage): number | null {
  const raw = req.headers['last-event-id'];
  if (typeof raw !== 'string' || raw.trim() === '') return null;
  return parseSinceId(raw.trim(), 'Last-Event-ID');
}
