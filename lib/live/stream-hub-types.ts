/**
 * The live-stream hub's contract (implemented in stream-hub.ts): how a
 * service configures it, what opening a stream takes, and what the hub
 * offers the HTTP layer and ingestion.
 */
import type { ServerResponse } from 'node:http';
import type { ServiceLogger } from '../core/logger.js';
import type { LogFilter } from '../search/log-filter.js';
import type { ReadOps } from '../storage/storage.js';
import type { StorageSignals } from '../storage/storage-signals.js';
import type { LiveScope } from './live-scope.js';
import type { StreamCaller } from './subscription.js';
import type { CommittedEntries } from '../ingest/committed-entries.js';

export interface StreamHubOptions {
  db: ReadOps;
  /** Between `: ping` frames, and re-validations. */
  heartbeatMs: number;
  logger: ServiceLogger;
  /** Present with the server backend: news from and to other processes. */
  signals?: StorageSignals;
  /** Entries per storage read and per write to a stream. Default 200. */
  pageSize?: number;
  /** Bytes of frames per write to a stream; a page stops after the entry that reaches it. Default 64 KiB. */
  pageBytes?: number;
  /** Streams open at once in this service (default: no cap). */
  maxStreams?: number;
  /** Streams one user may have open at once (default: no cap). */
  maxStreamsPerUser?: number;
  /**
   * Ids of different projects may commit out of id order (PostgreSQL with
   * concurrent ingestion): reads over several projects stop at a settled
   * position (see horizons.ts). False on SQLite, which commits one at a time.
   */
  commitsOutOfOrder: boolean;
  /** Settles running at once (each may hold a pooled connection while it waits). Default 2. */
  maxConcurrentSettles?: number;
  /** The service's clock, against which access keys' expiry is re-checked. Default `Date.now`. */
  now?: () => number;
}

export interface OpenStreamRequest {
  res: ServerResponse;
  scope: LiveScope;
  filter: LogFilter;
  /** Replay entries with id > this first (`since_id`, `Last-Event-ID`); null: only entries stored from now on. */
  sinceId: number | null;
  caller: StreamCaller;
  /** Headers the response carries besides the event-stream ones (CORS). */
  headers?: Record<string, string>;
}

export interface StreamHub {
  /**
   * Takes over the response and streams until the client leaves or the
   * stream ends. Resolves once the stream is open; rejects (nothing written)
   * with 429 `too_many_requests` when the service or the caller already has
   * as many streams as allowed, or if storage fails before the stream opens.
   */
  open(request: OpenStreamRequest): Promise<void>;
  /** An ingestion transaction of this process committed these entries. */
  entriesCommitted(committed: CommittedEntries): void;
  /** A project was just blocked: its direct streams end with `project_blocked`. */
  projectBlocked(projectId: number): void;
  /**
   * An access key was revoked, or a person blocked or deleted, or a role or a
   * team membership removed: every stream is re-checked now, here and in
   * other processes (not a heartbeat later).
   */
  credentialsRevoked(): void;
  /** Ends every stream with `server_shutdown`; streams opened later end at once. */
  beginShutdown(): void;
  /** `beginShutdown`, then waits for reads in flight and stops listening to other processes. */
  close(): Promise<void>;
  /** Streams open now. */
  readonly openStreams: number;
  /** Log frames written since the hub started, each stream's counted (metrics). */
  readonly framesSent: number;
  /** Reads of new entries from storage since the hub started (a stream that has everything gets each commit from memory instead). */
  readonly reads: number;
}
