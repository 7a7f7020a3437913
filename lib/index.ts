/**
 * logkeep's public surface: explicit named exports only.
 */
export { createLogService, MAX_HEADER_BYTES } from './service.js';
export { serverOptions, applyServerBounds } from './server-bounds.js';
export type { ServerBoundsConfig } from './server-bounds.js';
export { limitHeapGrowth, SERVICE_HEAP_GROWTH_PERCENT } from './heap-growth.js';
export type { LogService, LogServiceOptions } from './service.js';
export { createAdmin, generatePassword } from './admin/create-admin.js';
export type { CreateAdminOptions, CreatedAdmin } from './admin/create-admin.js';
export { normalizeConfig, CONFIG_DEFAULTS } from './core/config.js';
export type { LogServiceConfig, LogServiceSettings, DatabaseConfig, DbBackend, SslMode } from './core/config.js';
export { LogServiceError, ConfigError } from './core/errors.js';
export { SchemaTooNewError, StorageUnavailableError } from './storage/storage.js';
export type { RequestHandler } from './http/handler.js';
export type { ServiceLogger } from './core/logger.js';
export { createServiceLogging } from './logging.js';
export type { LoggingOptions, ServiceLogging, TextSink } from './logging.js';
export type { PurgeReport } from './ops/purge.js';
export { IngestClient, IngestBatchError } from './client/ingest-client.js';
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
} from './client/ingest-client.js';
export type { BackoffPolicy } from './client/backoff.js';
