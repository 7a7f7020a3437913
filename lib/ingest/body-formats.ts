/**
 * Every body format ingestion reads, and the one way each becomes a
 * prepared batch. The same function runs on the event loop and in the
 * preparation worker (preparation-worker.ts), so where a body is prepared never
 * changes what is stored or refused.
 */
import { batchFromPlainBody, type BodyFormat } from './plain-body.js';
import { readJsonRequest } from './otlp/otlp-json.js';
import { readProtobufRequest } from './otlp/otlp-protobuf.js';
import { batchFromOtlp } from './otlp/otlp-request.js';
import type { BatchTarget, PreparedBatch } from './prepared-batch.js';

/** A `POST /v1/logs` body (`json`, `ndjson`) or an OTLP logs export in either encoding. */
export type IngestFormat = BodyFormat | 'otlp-protobuf' | 'otlp-json';

/** Reads and prepares `raw`; a body that is not of its format is refused (400) as a whole. */
export async function batchFromBody(raw: Buffer, target: BatchTarget, format: IngestFormat): Promise<PreparedBatch> {
  switch (format) {
    case 'otlp-protobuf':
      return batchFromOtlp(readProtobufRequest(raw), target);
    case 'otlp-json':
      return batchFromOtlp(readJsonRequest(raw), target);
    default:
      return batchFromPlainBody(raw, target, { format });
  }
}
