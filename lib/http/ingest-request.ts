/**
 * The body of an ingestion request (`POST /v1/logs`, the OTLP export), read
 * the one way both take: 415 for a Content-Encoding not understood, 413 as
 * soon as the declared or decoded size passes the limit, bytes taken from
 * the shared budget as they arrive and held until the batch is committed.
 * Only how the bytes become a batch, and how it is committed, differ.
 */
import { payloadTooLarge } from './body.js';
import { createDecoder, readContentEncoding } from './body-encoding.js';
import { readIngestBody } from './ingest-body.js';
import type { PreparedBatch } from '../logs/prepare-entries.js';
import type { KeyContext } from './route.js';

export async function receiveBatch<T>(
  ctx: KeyContext,
  prepare: (raw: Buffer) => Promise<PreparedBatch>,
  commit: (batch: PreparedBatch) => Promise<T>,
): Promise<T> {
  const { budget, spareBody, bodyIdleMs, observer } = ctx.deps.ingestion;
  const limit = ctx.deps.config.maxIngestBodyBytes;
  const encoding = readContentEncoding(ctx.req.headers);
  const declared = Number(ctx.req.headers['content-length']);
  const known = ctx.req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared >= 0;
  if (known && declared > limit) throw payloadTooLarge(limit);
  // A compressed body's declared length says nothing of its decoded size.
  const decodedLength = known && encoding === 'identity' ? declared : null;
  // The body takes budget only as its bytes arrive, and holds them until its entries are committed.
  const hold = budget.open(decodedLength ?? limit);
  try {
    const loan = decodedLength !== null ? spareBody.lend(decodedLength) : null;
    let batch: PreparedBatch;
    try {
      const decoder = createDecoder(encoding);
      const raw = await readIngestBody(ctx.req, { limit, hold, idleMs: bodyIdleMs, decoder, ...(loan ? { into: loan.buffer } : {}) });
      hold.finishReading();
      observer.bodyRead(raw.length);
      // Prepared entries hold copies of what they need: the raw bytes can go back.
      batch = await prepare(raw);
    } finally {
      loan?.giveBack();
    }
    return await commit(batch);
  } finally {
    hold.release();
  }
}
