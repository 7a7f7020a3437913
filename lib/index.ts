/**
 * logkeep's public surface: explicit named exports only.
 */
export { createLogService, MAX_HEADER_BYTES } from './service.js';
export type { LogService, LogServiceOptions } from './service.js';
export { createAdmin, generatePassword } from './admin/create-admin.js';
export type { CreateAdminOptions, CreatedAdmin } from './admin/create-admin.js';
export { normalizeConfig, CONFIG_DEFAULTS } from './config.js';
export type { LogServiceConfig, LogServiceSettings, DatabaseConfig, DbBackend, SslMode } from './config.js';
export { LogServiceError, ConfigError } from './errors.js';
export { SchemaTooNewError, StorageUnavailableError } from './storage/storage.js';
export type { RequestHandler } from './http/handler.js';
export type { ServiceLogger } from './logger.js';
