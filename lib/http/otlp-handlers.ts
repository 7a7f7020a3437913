/**
 * `POST /v1/otlp/v1/logs`: OTLP/HTTP logs export, so an OpenTelemetry SDK
 * or Collector configured with the endpoint `{base}/v1/otlp` ships to the
 * project of its `slk_…` key. The body is read exactly as on
 * `POST /v1/logs` (same encodings, size limit, byte budget, idle timeout,
 * group commit); only its format and the answer differ.
 *
 * Checks, in order: the key (401, then 403 `project_blocked`, before a
 * byte of the body is read) → 415 for a Content-Type other than
 * `application/x-protobuf` or `application/json`, or an unknown
 * Content-Encoding → 413 → 400 for a body that is not an
 * ExportLogsServiceRequest in its Content-Type (or does not decompress) →
 * 200 with an ExportLogsServiceResponse in the request's encoding, once the
 * accepted records are committed. A commit that fails is 503 with
 * Retry-After: OTLP clients retry it. Errors use the general JSON envelope.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { LogServiceError } from '../core/errors.js';
import { CommitFailedError, ingestRequest, type BatchOutcome } from '../ingest/ingest-request.js';
import { OTLP } from '../ingest/otlp/otlp-schema.js';
import type { KeyContext, Reply } from './route.js';

type OtlpFormat = 'protobuf' | 'json';

/** Seconds a client is asked to wait before retrying a failed commit. */
export const OTLP_RETRY_AFTER_SECONDS = 5;

function readOtlpFormat(headers: IncomingHttpHeaders): OtlpFormat {
  const value = headers['content-type'] ?? '';
  const type = value.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  throw new LogServiceError(
    'unsupported_media_type',
    `The Content-Type ${JSON.stringify(value)} is not an OTLP encoding: send application/x-protobuf or application/json.`,
  );
}

export async function postOtlpLogs(ctx: KeyContext): Promise<Reply> {
  const format = readOtlpFormat(ctx.req.headers);
  let result: BatchOutcome;
  try {
    const bodyFormat = format === 'protobuf' ? 'otlp-protobuf' : 'otlp-json';
    result = await ingestRequest(ctx.deps.ingestion, { req: ctx.req, format: bodyFormat, projectId: ctx.key.projectId, now: ctx.deps.now });
  } catch (err) {
    if (!(err instanceof CommitFailedError)) throw err;
    // OTLP clients retry a 503: the records were not stored.
    ctx.deps.logger.error('an OTLP export could not be committed', { error: String(err.cause) });
    throw new LogServiceError('temporarily_unavailable', 'The records could not be stored just now; retry later.', {
      headers: { 'Retry-After': String(OTLP_RETRY_AFTER_SECONDS) },
    });
  }
  return otlpReply(format, result);
}

/** ExportLogsServiceResponse: empty when all were accepted, else partial_success. */
function otlpReply(format: OtlpFormat, result: BatchOutcome): Reply {
  const partial = partialSuccess(result);
  if (format === 'json') {
    const body = partial === null ? {} : { partialSuccess: { rejectedLogRecords: String(partial.rejectedLogRecords), errorMessage: partial.errorMessage } };
    return { status: 200, body };
  }
  const message = OTLP.ExportLogsServiceResponse.create(partial === null ? {} : { partialSuccess: partial });
  return { status: 200, bytes: OTLP.ExportLogsServiceResponse.encode(message).finish(), contentType: 'application/x-protobuf' };
}

/** `partial_success` of an ExportLogsServiceResponse, or null when every record was accepted. */
function partialSuccess(result: BatchOutcome): { rejectedLogRecords: number; errorMessage: string } | null {
  // The counts cover every record; `rejected` lists only the first ones.
  const rejected = result.rejectedCount;
  if (rejected === 0) return null;
  const first = result.rejected[0]!;
  const quota = result.quotaRejectedCount;
  const parts = [`${rejected} of ${rejected + result.accepted} log records were rejected`];
  if (quota > 0) parts.push(`${quota} over a quota, ${rejected - quota} invalid`);
  parts.push(`the first, record ${first.index}: ${first.message}`);
  return { rejectedLogRecords: rejected, errorMessage: parts.join('; ') };
}
