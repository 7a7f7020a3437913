/**
 * Handlers for ingestion (`POST /v1/logs`, secret-key auth) and the log
 * query (`GET /v1/logs`, `GET /v1/logs/histogram`). The live stream has
 * its own handler.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { BodyFormat } from '../ingest/plain-body.js';
import { CommitFailedError, ingestRequest, ingestionResponse, type BatchOutcome } from '../ingest/ingest-request.js';
import { requireLogScope } from '../logs/log-access.js';
import { LOG_CURSOR_LIST, readLogListQuery, readLogScope } from '../logs/log-query-params.js';
import { rowsToFetch } from '../core/pagination.js';
import { readLogsPage } from '../logs/log-reader.js';
import { logPageJson } from '../logs/present-log.js';
import { histogramJson, readHistogram, readHistogramQuery } from '../logs/log-histogram.js';
import type { KeyContext, Reply, UserContext } from './route.js';

/**
 * The key has already been checked (401 for a missing, unknown or revoked
 * key, then 403 `project_blocked`, before a byte of the body is read); then
 * 415 for a Content-Encoding not understood → 413 while reading (the
 * decompressed size) → 400 for a body that is not a JSON array or does not
 * decompress → 202.
 */
export async function postLogs(ctx: KeyContext): Promise<Reply> {
  const format = readBodyFormat(ctx.req.headers);
  let outcome: BatchOutcome;
  try {
    outcome = await ingestRequest(ctx.deps.ingestion, { req: ctx.req, format, projectId: ctx.key.projectId, now: ctx.deps.now });
  } catch (err) {
    // A failed commit is an unexpected error here (logged, 500), as it was thrown.
    throw err instanceof CommitFailedError ? err.cause : err;
  }
  return { status: 202, body: ingestionResponse(outcome) };
}

/** NDJSON for `application/x-ndjson` (or `application/ndjson`), whatever the parameters; a JSON array otherwise. */
function readBodyFormat(headers: IncomingHttpHeaders): BodyFormat {
  const type = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/x-ndjson' || type === 'application/ndjson' ? 'ndjson' : 'json';
}

/** Checks in this order: scope shape → 404 → 403 → 403 `project_blocked` → the other parameters → the page. */
export async function getLogs(ctx: UserContext): Promise<Reply> {
  const scope = readLogScope(ctx.query);
  await requireLogScope(ctx.deps.storage, ctx.principal, scope);
  const { filter, page } = readLogListQuery(ctx.query, ctx.deps.cursors);
  const rows = await readLogsPage(ctx.deps.storage, scope, filter, rowsToFetch(page));
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  const nextCursor = more ? ctx.deps.cursors.encode(LOG_CURSOR_LIST, kept[kept.length - 1]!.id) : null;
  return { status: 200, jsonText: logPageJson(kept, nextCursor) };
}

/** The checks of `GET /v1/logs` in the same order, then `cursor`/`limit` refused, `buckets`, the range → the counts. */
export async function getLogsHistogram(ctx: UserContext): Promise<Reply> {
  const scope = readLogScope(ctx.query);
  await requireLogScope(ctx.deps.storage, ctx.principal, scope);
  const query = readHistogramQuery(ctx.query, ctx.deps.now());
  const counts = await readHistogram(ctx.deps.storage, scope, query);
  return { status: 200, body: histogramJson(query.grid, counts) };
}
