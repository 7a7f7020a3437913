/**
 * Route rows for ingestion (`POST /v1/logs`, secret-key auth) and the log
 * query (`GET /v1/logs`). The live stream has its own rows.
 */
import { unauthorized } from '../core/errors.js';
import { payloadTooLarge } from './body.js';
import { readIngestBody } from './ingest-body.js';
import { hashSecretKey } from '../admin/secret-keys.js';
import { ingestBatch } from '../logs/ingestion.js';
import { projectBlocked, requireLogScope } from '../logs/log-access.js';
import { LOG_CURSOR_LIST, readLogListQuery, readLogScope } from '../logs/log-query.js';
import { readLogsPage } from '../logs/log-reader.js';
import { logPageJson } from '../logs/present-log.js';
import type { RequestContext, Route } from './route.js';

/**
 * D22's order: 401 (missing, unknown or revoked key; an access token is
 * never a key) → 403 `project_blocked` before a byte of the body is read →
 * 413 while reading → 400 for a body that is not a JSON array → 202.
 */
async function postLogs(ctx: RequestContext) {
  const secret = ctx.bearer;
  if (secret === null || !secret.startsWith('slk_')) throw unauthorized();
  const key = await ctx.deps.storage.findSecretKeyByHash(hashSecretKey(secret));
  if (!key || key.revokedAt !== null) throw unauthorized();
  if (key.projectBlocked) throw projectBlocked();

  const { budget, queue, spareBody, preparer, bodyIdleMs } = ctx.deps.ingestion;
  const limit = ctx.deps.config.maxIngestBodyBytes;
  const declared = Number(ctx.req.headers['content-length']);
  const known = ctx.req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared >= 0;
  if (known && declared > limit) throw payloadTooLarge(limit);
  // The body takes budget only as its bytes arrive, and holds them until its entries are committed.
  const hold = budget.open(known ? declared : limit);
  try {
    const loan = known ? spareBody.lend(declared) : null;
    let batch;
    try {
      const raw = await readIngestBody(ctx.req, { limit, hold, idleMs: bodyIdleMs, ...(loan ? { into: loan.buffer } : {}) });
      hold.finishReading();
      // Prepared entries hold copies of what they need: the raw bytes can go back.
      batch = await preparer.prepare(raw, { projectId: key.projectId, receivedAt: ctx.deps.now() });
    } finally {
      loan?.giveBack();
    }
    const body = await ingestBatch(queue, batch);
    return { status: 202, body };
  } finally {
    hold.release();
  }
}

/** D20's order: scope shape → 404 → 403 → 403 project_blocked → the other parameters → the page. */
async function getLogs(ctx: RequestContext) {
  const scope = readLogScope(ctx.query);
  await requireLogScope(ctx.deps.storage, ctx.principal!.grants, scope);
  const { filter, page } = readLogListQuery(ctx.query, ctx.deps.cursors);
  const rows = await readLogsPage(ctx.deps.storage, scope, filter, {
    limit: page.limit + 1,
    ...(page.beforeId === undefined ? {} : { beforeId: page.beforeId }),
  });
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  const nextCursor = more ? ctx.deps.cursors.encode(LOG_CURSOR_LIST, kept[kept.length - 1]!.id) : null;
  return { status: 200, jsonText: logPageJson(kept, nextCursor) };
}

export const logRoutes: Route[] = [
  { method: 'POST', path: '/v1/logs', auth: 'project-key', envelope: 'general', bodyLimit: 'ingest', handle: postLogs },
  { method: 'GET', path: '/v1/logs', auth: 'user', envelope: 'general', handle: getLogs },
];
