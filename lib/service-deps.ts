/**
 * Everything a route needs, built once by `createLogService` and passed to
 * every request. Nothing here is global: two services in one process share
 * nothing.
 */
import type { LogServiceConfig } from './config.js';
import type { Storage } from './storage/storage.js';
import type { CursorCodec } from './http/pagination.js';
import type { ServiceLogger } from './logger.js';
import type { AccessTokenService } from './auth/access-tokens.js';

export interface ServiceDeps {
  config: LogServiceConfig;
  storage: Storage;
  cursors: CursorCodec;
  accessTokens: AccessTokenService;
  logger: ServiceLogger;
  /** Milliseconds since the epoch; replaceable in tests. */
  now(): number;
}
