/**
 * `createLogService(settings)`: opens and migrates the database, creates the
 * first administrator if needed, and returns a `node:http` request handler.
 * The service owns no process and never listens: the caller does (D33: only
 * once this promise resolves, so /healthz never answers early).
 */
import { normalizeConfig, type LogServiceConfig, type LogServiceSettings } from './config.js';
import { consoleLogger, type ServiceLogger } from './logger.js';
import { openStorage } from './storage/open-storage.js';
import type { Storage } from './storage/storage.js';
import { createAccessTokenService } from './auth/access-tokens.js';
import { createPasswordHasher, type PasswordHasher } from './auth/passwords.js';
import { createThrottle } from './auth/throttle.js';
import { createCursorCodec } from './http/pagination.js';
import { createHandler, type RequestHandler } from './http/handler.js';
import { allRoutes } from './http/routes.js';
import { bootstrapFirstAdmin, type CreatedAdmin } from './admin/create-admin.js';
import type { ServiceDeps } from './service-deps.js';

export interface LogServiceOptions {
  /** Where the service's own diagnostics go (default: the console). */
  logger?: ServiceLogger;
  /** Serve every route under this path prefix, e.g. `/logs`. */
  basePath?: string;
  /** scrypt cost (log2 N). Default 17 (OWASP); lower it only for tests. */
  passwordHashLogN?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export interface LogService {
  /** Mount this in any `node:http` (or compatible) server. */
  readonly handler: RequestHandler;
  readonly config: LogServiceConfig;
  /** The first administrator created at this start, if any (its password is shown once by the caller). */
  readonly bootstrapAdmin: CreatedAdmin | null;
  /** Stops background work and closes the database. Idempotent. */
  close(): Promise<void>;
}

export async function createLogService(settings: LogServiceSettings, options: LogServiceOptions = {}): Promise<LogService> {
  const config = normalizeConfig(settings);
  const logger = options.logger ?? consoleLogger;
  const now = options.now ?? Date.now;
  if (Buffer.byteLength(config.jwtSecret, 'utf8') < 32) {
    logger.warn('the JWT signing secret is shorter than 32 bytes; use a longer random value');
  }
  const storage: Storage = await openStorage(config, { logger });
  let closed = false;
  try {
    const hasher: PasswordHasher = createPasswordHasher(options.passwordHashLogN === undefined ? {} : { logN: options.passwordHashLogN });
    const bootstrapAdmin = config.bootstrapAdminEnabled
      ? await bootstrapFirstAdmin(storage, hasher, { username: config.bootstrapAdminUsername, password: config.bootstrapAdminPassword, now: now() })
      : null;
    const deps: ServiceDeps = {
      config,
      storage,
      cursors: createCursorCodec(config.jwtSecret),
      accessTokens: createAccessTokenService(config.jwtSecret, config.jwtIssuer),
      passwords: hasher,
      throttle: createThrottle({
        enabled: config.rateLimitEnabled,
        buckets: { capacity: config.rateLimitBucketCapacity, refillPerMinute: config.rateLimitRefillPerMinute, maxKeys: config.rateLimitMaxKeys },
        storage,
        logger,
        now,
      }),
      logger,
      now,
    };
    const handler = createHandler(deps, allRoutes(), {
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      // D12: the IP bucket is spent before the body is read or anyone is authenticated.
      beforeRateLimitedRoute: (ctx) => deps.throttle.checkIp({ clientIp: ctx.clientIp, path: ctx.route.path }),
    });
    return {
      handler,
      config,
      bootstrapAdmin,
      async close() {
        if (closed) return;
        closed = true;
        await storage.close();
      },
    };
  } catch (err) {
    await storage.close().catch(() => {});
    throw err;
  }
}
