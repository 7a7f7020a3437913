/**
 * Handlers for ingestion (`POST /v1/logs`, secret-key auth) and the log
 * query (`GET /v1/logs`, `GET /v1/logs/histogram`). The live stream has
 * its own handler.
 */
import { payloadTooLarge } from './body.js';
import { createDecoder, readBodyFormat, readContentEncoding } from './body-encoding.js';
import { readIngestBody } from './ingest-body.js';
import { ingestBatch } from '../logs/ingestion.js';
import { requireLogScope } from '../logs/log-access.js';
import { LOG_CURSOR_LIST, readLogListQuery, readLogScope } from '../logs/log-query.js';
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
  const { budget, queue, spareBody, preparer, bodyIdleMs } = ctx.deps.ingestion;
  const limit = ctx.deps.config.maxIngestBodyBytes;
  const encoding = readContentEncoding(ctx.req.headers);
  const format = readBodyFormat(ctx.req.headers);
  const declared = Number(ctx.req.headers['content-length']);
  const known = ctx.req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared >= 0;
  if (known && declared > limit) throw payloadTooLarge(limit);
  // A compressed body's declared length says nothing of its decoded size.
  const decodedLength = known && encoding === 'identity' ? declared : null;
  // The body takes budget only as its bytes arrive, and holds them until its entries are committed.
  const hold = budget.open(decodedLength ?? limit);
  try {
    const loan = decodedLength !== null ? spareBody.lend(decodedLength) : null;
    let batch;
    try {
      const decoder = createDecoder(encoding);
      const raw = await readIngestBody(ctx.req, { limit, hold, idleMs: bodyIdleMs, decoder, ...(loan ? { into: loan.buffer } : {}) });
      hold.finishReading();
      ctx.deps.ingestion.observer.bodyRead(raw.length);
      // Prepared entries hold copies of what they need: the raw bytes can go back.
      batch = await preparer.prepare(raw, { projectId: ctx.key.projectId, receivedAt: ctx.deps.now() }, format);
    } finally {
      loan?.giveBack();
    }
    const body = await ingestBatch(queue, batch);
    return { status: 202, body };
  } finally {
    hold.release();
  }
}

/** Checks in this order: scope shape → 404 → 403 → 403 `project_blocked` → the other parameters → the page. */
export async function getLogs(ctx: UserContext): Promise<Reply> {
  const scope = readLogScope(ctx.query);
  await requireLogScope(ctx.deps.storage, ctx.principal.grants, scope);
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
  await requireLogScope(ctx.deps.storage, ctx.principal.grants, scope);
  const query = readHistogramQuery(ctx.query, ctx.deps.now());
  const counts = await readHistogram(ctx.deps.storage, scope, query);
  return { status: 200, body: histogramJson(query.grid, counts) };
}
