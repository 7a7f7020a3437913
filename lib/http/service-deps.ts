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
import type { Ingestion } from '../ingest/ingestion.js';
import type { StreamHub } from '../live/stream-hub-types.js';
import type { AlertEngine } from '../alerts/alert-engine.js';
import type { ServiceObserver } from '../core/observe.js';
import type { MetricsEndpoint } from '../metrics/service-metrics.js';

export interface ServiceDeps {
  config: LogServiceConfig;
  storage: Storage;
  cursors: CursorCodec;
  accessTokens: AccessTokenService;
  /** scrypt hashing in a child process, behind a bounded queue. */
  passwords: PasswordHasher;
  /** IP and subject token buckets (no-ops when rate limiting is off). */
  throttle: Throttle;
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
  /** Milliseconds since the epoch; replaceable in tests. */
  now(): number;
}
