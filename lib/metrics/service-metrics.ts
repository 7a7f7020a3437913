/**
 * The service's Prometheus metrics, with prom-client: one registry per
 * service (never prom-client's global one), so two services in one process
 * never mix their numbers. Counters and histograms move through the
 * `ServiceObserver` the lower layers are handed; levels (streams open,
 * budget in use, connections busy, hashes waiting) are read from the
 * objects that hold them when `/metrics` is scraped, so they cost nothing
 * in between. Every label value is bounded: route paths of the route
 * table, project ids the service assigned, fixed words.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RejectionReason, ServiceObserver } from '../core/observe.js';
import type { ConnectionStats } from '../storage/storage.js';
import type { HashLoad } from '../auth/passwords.js';
import { bearerTokenCheck } from './metrics-token.js';

/** The objects whose state is read at each scrape. */
export interface MetricsSources {
  storage: { connectionStats(): ConnectionStats };
  ingestion: {
    budget: { readonly capacity: number; readonly free: number; readonly waiting: number };
    queue: { readonly waiting: number };
  };
  liveStreams: { readonly openStreams: number; readonly framesSent: number; readonly reads: number };
  passwords: { load(): HashLoad };
}

/** What `GET /metrics` needs. */
export interface MetricsEndpoint {
  /** The exposition format's media type. */
  readonly contentType: string;
  /** True when the request may read the metrics (always, without a token). */
  authorized(authorization: string | undefined): boolean;
  /** The metrics in the Prometheus text format. */
  render(): Promise<string>;
}

export interface ServiceMetrics {
  /** Hand this to the layers that report their work. */
  readonly observer: ServiceObserver;
  readonly endpoint: MetricsEndpoint;
  /** Starts reading levels from `sources` at each scrape (call once they exist). */
  watch(sources: MetricsSources): void;
}

const PREFIX = 'logkeep_';
/** Request latencies: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Entries per group-commit transaction, up to the 20,000 one may carry. */
const COMMIT_SIZE_BUCKETS = [1, 10, 50, 100, 500, 1000, 2500, 5000, 10000, 20000];
/** A hash takes ~0.2 s idle and seconds behind busy threads. */
const HASH_BUCKETS = [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30];

export function createServiceMetrics(options: { token: string | null }): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const r = [registry];

  const requests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: r,
  });
  const requestSeconds = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from a request arriving to its response ending (a live stream: its whole life), by method and route.',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: r,
  });
  const accepted = new Counter({
    name: `${PREFIX}ingest_entries_accepted_total`,
    help: 'Log entries stored, by project.',
    labelNames: ['project_id'] as const,
    registers: r,
  });
  const rejected = new Counter({
    name: `${PREFIX}ingest_entries_rejected_total`,
    help: 'Log entries refused in accepted batches, by project and reason (validation, quota).',
    labelNames: ['project_id', 'reason'] as const,
    registers: r,
  });
  const entryBytes = new Counter({
    name: `${PREFIX}ingest_entry_bytes_total`,
    help: 'Bytes of log entries stored (as quotas count them), by project.',
    labelNames: ['project_id'] as const,
    registers: r,
  });
  const bodyBytes = new Counter({
    name: `${PREFIX}ingest_body_bytes_total`,
    help: 'Bytes of ingestion request bodies read, after decompression.',
    registers: r,
  });
  const commits = new Counter({
    name: `${PREFIX}ingest_transactions_total`,
    help: 'Group-commit transactions, by outcome (committed, failed).',
    labelNames: ['outcome'] as const,
    registers: r,
  });
  const commitEntries = new Histogram({
    name: `${PREFIX}ingest_transaction_entries`,
    help: 'Entries per group-commit transaction.',
    buckets: COMMIT_SIZE_BUCKETS,
    registers: r,
  });
  const commitSeconds = new Histogram({
    name: `${PREFIX}ingest_transaction_duration_seconds`,
    help: 'Time a group-commit transaction took.',
    buckets: LATENCY_BUCKETS,
    registers: r,
  });
  const hashSeconds = new Histogram({
    name: `${PREFIX}password_hash_duration_seconds`,
    help: 'Time a password hash or check took once it had its slot.',
    buckets: HASH_BUCKETS,
    registers: r,
  });
  const passes = new Counter({
    name: `${PREFIX}retention_passes_total`,
    help: 'Retention passes, by outcome (ran; skipped: another process held the lock).',
    labelNames: ['outcome'] as const,
    registers: r,
  });
  const purged = new Counter({
    name: `${PREFIX}retention_rows_purged_total`,
    help: 'Rows removed by retention passes, by kind (log_entries, audit_rows, refresh_tokens).',
    labelNames: ['kind'] as const,
    registers: r,
  });

  // Bound once: the hot paths then skip a label lookup.
  const committed = commits.labels('committed');
  const failed = commits.labels('failed');
  type Bound = ReturnType<typeof accepted.labels>;
  const byProject = new Map<number, { accepted: Bound; bytes: Bound; validation: Bound; quota: Bound }>();
  function projectCounters(projectId: number): { accepted: Bound; bytes: Bound; validation: Bound; quota: Bound } {
    let c = byProject.get(projectId);
    if (c === undefined) {
      const id = String(projectId);
      c = { accepted: accepted.labels(id), bytes: entryBytes.labels(id), validation: rejected.labels(id, 'validation'), quota: rejected.labels(id, 'quota') };
      byProject.set(projectId, c);
    }
    return c;
  }

  const observer: ServiceObserver = {
    requestDone(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      requestSeconds.observe({ method, route }, seconds);
    },
    batchIngested(projectId, acceptedCount, acceptedBytes, rejections: Readonly<Record<RejectionReason, number>>) {
      const c = projectCounters(projectId);
      // inc(0) still creates the series, so a project's counters appear with its first batch.
      c.accepted.inc(acceptedCount);
      c.bytes.inc(acceptedBytes);
      c.validation.inc(rejections.validation);
      c.quota.inc(rejections.quota);
    },
    bodyRead(bytes) {
      bodyBytes.inc(bytes);
    },
    groupCommitted(entries, seconds, ok) {
      (ok ? committed : failed).inc();
      commitEntries.observe(entries);
      commitSeconds.observe(seconds);
    },
    passwordHashed(seconds) {
      hashSeconds.observe(seconds);
    },
    retentionPassed(ran, removed) {
      passes.inc({ outcome: ran ? 'ran' : 'skipped' });
      for (const [kind, rows] of Object.entries(removed)) purged.inc({ kind }, rows);
    },
  };

  let sources: MetricsSources | null = null;
  const gauge = (name: string, help: string, read: (s: MetricsSources) => number) =>
    new Gauge({
      name: `${PREFIX}${name}`,
      help,
      registers: r,
      collect() {
        if (sources) this.set(read(sources));
      },
    });
  gauge('ingest_budget_capacity_bytes', 'Bytes of ingestion bodies that may be held at once.', (s) => s.ingestion.budget.capacity);
  gauge(
    'ingest_budget_in_use_bytes',
    'Bytes of ingestion bodies held now (being read, prepared or waiting for their commit).',
    (s) => s.ingestion.budget.capacity - s.ingestion.budget.free,
  );
  gauge('ingest_budget_waiting_requests', 'Ingestion requests paused until the byte budget can take their next bytes.', (s) => s.ingestion.budget.waiting);
  gauge('ingest_queue_waiting_requests', 'Ingestion batches waiting for a group-commit transaction.', (s) => s.ingestion.queue.waiting);
  gauge('live_streams_open', 'Live streams open now.', (s) => s.liveStreams.openStreams);
  gauge('db_connections_open', 'Database connections open (PostgreSQL: the pool; SQLite: the writer and readers).', (s) => s.storage.connectionStats().open);
  gauge('db_connections_in_use', 'Database connections running a query or transaction now.', (s) => s.storage.connectionStats().inUse);
  gauge('db_waiting', 'Queries or transactions waiting for a database connection.', (s) => s.storage.connectionStats().waiting);
  gauge('password_hashes_running', 'Password hashes running now.', (s) => s.passwords.load().running);
  gauge('password_hashes_waiting', 'Password hashes queued for their turn.', (s) => s.passwords.load().waiting);
  /** A counter that follows a running total kept elsewhere. */
  const runningTotal = (name: string, help: string, read: (s: MetricsSources) => number) => {
    let counted = 0;
    new Counter({
      name: `${PREFIX}${name}`,
      help,
      registers: r,
      collect() {
        if (!sources) return;
        const now = read(sources);
        this.inc(now - counted);
        counted = now;
      },
    });
  };
  runningTotal('live_frames_sent_total', 'Log frames written to live streams (one per entry per stream).', (s) => s.liveStreams.framesSent);
  runningTotal(
    'live_reads_total',
    'Reads of new entries live streams made from storage; a stream that has everything gets each commit from memory instead.',
    (s) => s.liveStreams.reads,
  );

  const authorized = bearerTokenCheck(options.token);
  return {
    observer,
    endpoint: {
      contentType: registry.contentType,
      authorized,
      render: () => registry.metrics(),
    },
    watch(s) {
      sources = s;
    },
  };
}
