/**
 * `createLogService(settings)`: opens and migrates the database, creates the
 * first administrator if needed, and returns a `node:http` request handler.
 * The service owns no process and never listens: the caller does (only
 * once this promise resolves, so /healthz never answers early).
 */
import { CONFIG_DEFAULTS, normalizeConfig, type LogServiceConfig, type LogServiceSettings } from './core/config.js';
import { warningsOnlyConsoleLogger, type ServiceLogger } from './core/logger.js';
import { openStorage } from './storage/open-storage.js';
import type { Storage } from './storage/storage.js';
import { createAccessTokenService } from './auth/access-tokens.js';
import { createPasswordHasher, type PasswordHasherOptions } from './auth/passwords.js';
import { createThrottle } from './auth/throttle.js';
import { AccessKeyUseRecorder } from './auth/access-key-use.js';
import type { RateLimiter } from './auth/rate-limit.js';
import { createCursorCodec } from './core/pagination.js';
import { createHandler, type RequestHandler } from './http/handler.js';
import { loadConsoleAssets } from './http/console-assets.js';
import { allRoutes } from './http/routes.js';
import { bootstrapFirstAdmin, type CreatedAdmin } from './admin/create-admin.js';
import type { ServiceDeps } from './http/service-deps.js';
import { createIngestion } from './ingest/ingestion.js';
import { createStreamHub } from './live/stream-hub.js';
import { AlertEngine } from './alerts/alert-engine.js';
import { Deliveries } from './alerts/delivery.js';
import { createSealer } from './alerts/sealed.js';
import { startPurgeJob } from './ops/purge-job.js';
import type { PurgeReport } from './ops/purge.js';
import { createServiceMetrics } from './metrics/service-metrics.js';
import { NO_OBSERVER } from './core/observe.js';
import { createOidcClient } from './auth/oidc-client.js';
import { refreshSync } from './admin/sso-sign-in.js';

/**
 * The default request-header limit (`httpMaxHeaderBytes`). Prefer
 * `createServer(serverOptions(service.config), handler)` plus
 * `applyServerBounds(server, service.config)`, which apply the configured
 * limit and the other bounds.
 */
export const MAX_HEADER_BYTES = CONFIG_DEFAULTS.httpMaxHeaderBytes;

export interface LogServiceOptions {
  /**
   * Where the service's own diagnostics go. Without one, only warnings and
   * errors are written, one line each, to the console's stderr. Pass a
   * logger (e.g. `createServiceLogging({...}).logger`, as the binary does)
   * to receive every line, including one per request at `info`.
   */
  logger?: ServiceLogger;
  /** Serve every route under this path prefix, e.g. `/logs`. */
  basePath?: string;
  /** scrypt cost (log2 N, with r = 8, p = 5), default 14. Each step down halves a hash's time and memory, and its strength (docs/passwords.md). */
  passwordHashLogN?: number;
  /** For tests: a shorter per-hash timeout, or a hashing process that loses a reply. */
  passwordHashing?: Pick<PasswordHasherOptions, 'timeoutMs' | 'loseReply'>;
  /** Clock, for tests. */
  now?: () => number;
  /**
   * Run the retention purge on its own timer (default true): soon after
   * start, then every `retentionPurgeIntervalSeconds`. With false, passes
   * run only through `runPurgeOnce()`.
   */
  scheduledPurge?: boolean;
  /**
   * The rate limiter's bucket tables (default: new ones from the settings),
   * for tests that inspect what the limiter retains. Used only when rate
   * limiting is enabled.
   */
  rateLimiter?: RateLimiter;
  /**
   * For console development (`npm run dev`): where the built console is
   * (default `dist/console` beside the package), and whether to read it
   * again after every rebuild instead of once at start.
   */
  console?: { dir?: string; reload?: boolean };
  /** How long an ingestion body may send nothing before it is answered 408 (default 10 s); for tests. */
  ingestBodyIdleMs?: number;
}

export interface LogService {
  /** Mount this in any `node:http` (or compatible) server. */
  readonly handler: RequestHandler;
  readonly config: LogServiceConfig;
  /** The first administrator created at this start, if any (its password is shown once by the caller). */
  readonly bootstrapAdmin: CreatedAdmin | null;
  /**
   * Operator and test hook: runs one retention pass now (after any pass in
   * progress) and reports what it removed. The timer keeps running.
   */
  runPurgeOnce(): Promise<PurgeReport>;
  /**
   * Operator and test hook: ends every alert quiet period and window due
   * by the service's clock now (their timers do it otherwise), after the
   * evaluations in flight, then makes every delivery attempt due and waits
   * for them.
   */
  runAlertsDue(): Promise<void>;
  /**
   * Ends every live stream with `end` `server_shutdown` and ends new ones at
   * once. Call it when the server stops accepting connections, so stopping
   * never waits for open streams; `close()` does it too.
   */
  beginShutdown(): void;
  /** Stops background work and closes the database. Idempotent. */
  close(): Promise<void>;
}

export async function createLogService(settings: LogServiceSettings, options: LogServiceOptions = {}): Promise<LogService> {
  const config = normalizeConfig(settings);
  const logger = options.logger ?? warningsOnlyConsoleLogger;
  const now = options.now ?? Date.now;
  if (Buffer.byteLength(config.jwtSecret, 'utf8') < 32) {
    logger.warn('the JWT signing secret is shorter than 32 bytes; use a longer random value');
  }
  const storage: Storage = await openStorage(config, { logger });
  let closed = false;
  const metrics = config.metricsEnabled ? createServiceMetrics({ token: config.metricsToken }) : null;
  const observer = metrics?.observer ?? NO_OBSERVER;
  const hasher = createPasswordHasher({
    ...options.passwordHashing,
    observer,
    ...(options.passwordHashLogN === undefined ? {} : { logN: options.passwordHashLogN }),
    maxWaiting: config.passwordHashMaxWaiting,
  });
  try {
    const bootstrapAdmin = config.bootstrapAdminEnabled
      ? await bootstrapFirstAdmin(storage, hasher, { username: config.bootstrapAdminUsername, password: config.bootstrapAdminPassword, now: now() })
      : null;
    const liveStreams = await createStreamHub({
      db: storage,
      heartbeatMs: config.sseHeartbeatIntervalSeconds * 1000,
      now,
      maxStreams: config.sseMaxStreams,
      maxStreamsPerUser: config.sseMaxStreamsPerUser,
      logger,
      signals: storage.signals,
      // PostgreSQL runs ingestion transactions concurrently (SQLite one at a time).
      commitsOutOfOrder: storage.backend === 'server',
      // A settle may wait on ingestion in flight holding a pooled connection: leave most to requests.
      maxConcurrentSettles: Math.max(1, Math.floor(config.dbServerPoolSize / 4)),
    });
    const consoleAssets = config.consoleEnabled ? loadConsoleAssets(logger, options.console?.dir, { reload: options.console?.reload ?? false }) : null;
    const alerts = new AlertEngine({ storage, logger, now, ...(storage.signals ? { signals: storage.signals } : {}) });
    const deliveries = new Deliveries({
      storage,
      logger,
      now,
      sealer: createSealer(config.jwtSecret),
      allowPrivateTargets: config.alertAllowPrivateTargets,
      publicUrl: config.publicUrl,
      smtpUrl: config.alertSmtpUrl,
      emailFrom: config.alertEmailFrom,
    });
    // The process that records a notification sends it at once; the sweep takes up the rest.
    alerts.onNotification(({ notification }) => {
      if (notification.deliveryState === 'pending') deliveries.enqueue(notification.id);
    });
    await alerts.start();
    deliveries.start();
    const deps: ServiceDeps = {
      config,
      storage,
      cursors: createCursorCodec(config.jwtSecret),
      accessTokens: createAccessTokenService(config.jwtSecret, config.jwtIssuer, now),
      passwords: hasher,
      accessKeyUse: new AccessKeyUseRecorder(storage),
      throttle: createThrottle({
        enabled: config.rateLimitEnabled,
        buckets: { capacity: config.rateLimitBucketCapacity, refillPerMinute: config.rateLimitRefillPerMinute, maxKeys: config.rateLimitMaxKeys },
        storage,
        logger,
        now,
        ...(options.rateLimiter === undefined ? {} : { limiter: options.rateLimiter }),
      }),
      ingestion: createIngestion(storage, config, logger, {
        observer,
        ...(options.ingestBodyIdleMs === undefined ? {} : { bodyIdleMs: options.ingestBodyIdleMs }),
      }),
      liveStreams,
      alerts,
      logger,
      now,
      ...(metrics === null ? {} : { observer, metrics: metrics.endpoint }),
      ...(consoleAssets === null ? {} : { consoleAssets }),
      ...(config.oidcIssuer === null
        ? {}
        : { sso: { client: createOidcClient(config, logger) }, beforeRefresh: refreshSync({ config, logger }, config.oidcIssuer) }),
    };
    metrics?.watch({ storage, ingestion: deps.ingestion, liveStreams, passwords: hasher });
    // Streams read what each commit stored, in this process and, through storage signals, in others.
    deps.ingestion.queue.onCommit((committed) => liveStreams.entriesCommitted(committed));
    // Alert rules are evaluated on the same committed entries, by the process that committed them.
    deps.ingestion.queue.onCommit((committed) => alerts.entriesCommitted(committed));
    const handler = createHandler(deps, allRoutes(), {
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      // The IP bucket is spent before the body is read or anyone is authenticated.
      beforeRateLimitedRoute: (ctx) => deps.throttle.checkIp({ clientIp: ctx.clientIp, path: ctx.route.path }),
    });
    const purge = startPurgeJob({
      storage,
      settings: config,
      intervalSeconds: config.retentionPurgeIntervalSeconds,
      logger,
      now,
      scheduled: options.scheduledPurge ?? true,
      observer,
    });
    return {
      handler,
      config,
      bootstrapAdmin,
      runPurgeOnce: () => purge.runOnce(),
      async runAlertsDue() {
        await alerts.runDue();
        await deliveries.runDue();
      },
      beginShutdown: () => liveStreams.beginShutdown(),
      async close() {
        if (closed) return;
        closed = true;
        liveStreams.beginShutdown();
        // A pass in progress ends at its next chunk boundary.
        await purge.stop();
        // Pending ingestion commits finish (and are answered) before the database closes.
        await deps.ingestion.close();
        await liveStreams.close();
        await alerts.close();
        await deliveries.close();
        await hasher.close();
        await storage.close();
      },
    };
  } catch (err) {
    await hasher.close();
    await storage.close().catch(() => {});
    throw err;
  }
}
