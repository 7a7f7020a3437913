/**
 * What the service answers outside `/v1`: its health check, and the web
 * console with the redirect from `/` to it. The console's paths answer 404
 * exactly like a path no route serves when the console is off or was never
 * built.
 */
import { LogServiceError } from '../core/errors.js';
import { STREAMED, type PublicContext, type Reply } from './route.js';
import { CONSOLE_SECURITY_HEADERS } from './console-assets.js';

/** `GET /healthz`: the process answers; nothing else is checked (no credentials, no database). */
export async function getHealthz(ctx: PublicContext): Promise<Reply> {
  ctx.req.resume();
  return { status: 200, body: { status: 'ok' } };
}

/** `GET /`: to the console when it is served. */
export async function getRoot(ctx: PublicContext): Promise<Reply> {
  if (ctx.deps.consoleAssets === undefined) throw notServed();
  return { status: 302, headers: { ...CONSOLE_SECURITY_HEADERS, Location: `${ctx.basePath}/console/` } };
}

/** `/console` and everything under it: the console's files for `GET` and `HEAD`, and its own 404 (with its headers) for anything else. */
export async function getConsoleFile(ctx: PublicContext): Promise<Reply> {
  const assets = ctx.deps.consoleAssets;
  if (assets === undefined) throw notServed();
  assets.serve(ctx.req, ctx.res, ctx.path, ctx.basePath);
  return STREAMED;
}

function notServed(): LogServiceError {
  return new LogServiceError('not_found', 'No such route.');
}
