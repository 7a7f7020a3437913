/**
 * Everything a route needs, built once by `createLogService` and passed to
 * every request. Nothing here is global: two services in one process share
 * nothing.
 */
import type { LogServiceConfig } from '../core/config.js';
import type { Storage } from '../storage/storage.js';
import type { CursorCodec } from '../core/pagination.js';
import type { ServiceLogger } from '../core/logger.js';
import type { AccessTokenService } from '../auth/access-tokens.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { Throttle } from '../auth/throttle.js';
import type { AccessKeyUseRecorder } from '../auth/access-key-use.js';
import type { Ingestion } from '../ingest/ingestion.js';
import type { StreamHub } from '../live/stream-hub-types.js';
import type { AlertEngine } from '../alerts/alert-engine.js';
import type { ServiceObserver } from '../core/observe.js';
import type { MetricsEndpoint } from '../metrics/service-metrics.js';
import type { ConsoleAssets } from './console-assets.js';
import type { OidcClient } from '../auth/oidc-client.js';
import type { WriteOps } from '../storage/storage.js';

export interface ServiceDeps {
  config: LogServiceConfig;
  storage: Storage;
  cursors: CursorCodec;
  accessTokens: AccessTokenService;
  /** scrypt hashing in a child process, behind a bounded queue. */
  passwords: PasswordHasher;
  /** IP and subject token buckets (no-ops when rate limiting is off). */
  throttle: Throttle;
  /** Writes access keys' `last_used_at`, at most once a minute per key. */
  accessKeyUse: AccessKeyUseRecorder;
  /** Ingestion's body budget and group-commit queue (a 202 only after the commit). */
  ingestion: Ingestion;
  /** Open live streams (`GET /v1/logs/stream`), woken by ingestion commits. */
  liveStreams: StreamHub;
  /** Alert rules, evaluated as ingestion commits; told when rules change. */
  alerts: AlertEngine;
  logger: ServiceLogger;
  /** Told of every answered request (metrics); absent: nothing is counted. */
  observer?: ServiceObserver;
  /** What `GET /metrics` serves; absent when metrics are off (the route answers 404). */
  metrics?: MetricsEndpoint;
  /** The web console's files; absent when the console is off or not built (its paths answer 404). */
  consoleAssets?: ConsoleAssets;
  /** Single sign-on's relying party; absent when no issuer is configured. */
  sso?: { client: OidcClient };
  /** The token endpoint's refresh hook (single sign-on's team sync). */
  beforeRefresh?: (tx: WriteOps, userId: number, now: number) => Promise<void>;
  /** Milliseconds since the epoch; replaceable in tests. */
  now(): number;
}
