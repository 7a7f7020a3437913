/**
 * `logkeep/client`: the ingestion client on its own, for an application
 * that ships its logs to logkeep. It loads undici and nothing of the
 * service, and the service's entry (`logkeep`) does not load it.
 */
export { IngestClient, IngestBatchError } from './ingest-client.js';
export type {
  IngestClientOptions,
  IngestClientStats,
  IngestClientClock,
  IngestLogEntry,
  IngestLogLevel,
  IngestRejection,
  IngestRetry,
  IngestFailureKind,
  OverflowPolicy,
} from './ingest-client.js';
export type { BackoffPolicy } from './backoff.js';
export { ANSWER_BYTES_PER_ENTRY, MIN_ANSWER_BYTES } from './ingest-answer.js';
