/**
 * Every body format ingestion reads, and the one way each becomes a
 * prepared batch. The same function runs on the event loop and in the
 * preparation worker (prepare-pool.ts), so where a body is prepared never
 * changes what is stored or refused.
 */
import { prepareBody, type BodyFormat } from './batch-body.js';
import { readJsonRequest } from './otlp-json.js';
import { readProtobufRequest } from './otlp-protobuf.js';
import { prepareOtlpRequest } from './otlp-request.js';
import type { BatchTarget, PreparedBatch } from './prepare-entries.js';

/** A `POST /v1/logs` body (`json`, `ndjson`) or an OTLP logs export in either encoding. */
export type IngestFormat = BodyFormat | 'otlp-protobuf' | 'otlp-json';

/** Reads and prepares `raw`; a body that is not of its format is refused (400) as a whole. */
export async function prepareIngestBody(raw: Buffer, target: BatchTarget, format: IngestFormat): Promise<PreparedBatch> {
  switch (format) {
    case 'otlp-protobuf':
      return prepareOtlpRequest(readProtobufRequest(raw), target);
    case 'otlp-json':
      return prepareOtlpRequest(readJsonRequest(raw), target);
    default:
      return prepareBody(raw, target, { format });
  }
}
