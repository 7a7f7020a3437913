/**
 * logkeep's public surface: explicit named exports only. The ingestion
 * client has its own entry, `logkeep/client` (lib/client/index.ts), so an
 * application embedding the service does not load it.
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
export { LogServiceError, ConfigError, SchemaTooNewError, StorageUnavailableError, ERROR_CODES } from './core/errors.js';
export type { ErrorCode } from './core/errors.js';
export type { RequestHandler } from './http/handler.js';
export type { ServiceLogger } from './core/logger.js';
export { createServiceLogging } from './logging.js';
export type { LoggingOptions, ServiceLogging, TextSink } from './logging.js';
export type { PurgeReport } from './ops/purge.js';
