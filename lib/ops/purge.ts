/**
 * One retention pass: log entries
 * past their project's `retention_days` (by `received_at`), audit rows past
 * their class's retention, expired refresh tokens, then free pages given
 * back to the operating system.
 *
 * Every step deletes in chunks, each chunk its own short transaction, so
 * ingestion and queries interleave with a long purge instead of waiting for
 * it; a chunk of log entries takes its rows off the project's counters in
 * the same transaction. A pass runs under the storage's maintenance lock:
 * with several processes on one PostgreSQL, one pass at a time.
 */
import { AUDIT_ACTIONS, AUTH_EVENT_ACTIONS, recordAudit, type AuditAction } from '../audit/audit.js';
import type { LogServiceConfig } from '../core/config.js';
import type { Storage, StorageSession } from '../storage/storage.js';

const DAY_MS = 86_400_000;

/**
 * Log entries per chunk: one short write transaction each, so ingestion
 * queued behind the purge gets its turn between chunks (docs/measurements.md,
 * "Retention").
 */
export const LOG_PURGE_CHUNK = 500;
/** Expired refresh tokens per chunk. */
export const REFRESH_TOKEN_PURGE_CHUNK = 1000;
/** Pages (4 KiB on SQLite) handed back per incremental-vacuum transaction. */
export const VACUUM_PAGES_PER_CHUNK = 2048;

export type PurgeSettings = Pick<LogServiceConfig, 'auditRetentionDays' | 'authEventRetentionDays' | 'auditPurgeBatchSize'>;

/** The two audit retention classes, as written in `audit.purged` metadata. */
export type AuditRetentionClass = 'auth' | 'admin';

/** What one pass did. */
export interface PurgeReport {
  /** false when another process held the maintenance lock, so this pass did nothing. */
  ran: boolean;
  /** Log entries removed, and their bytes (as quotas count them). */
  logEntries: number;
  logBytes: number;
  /** Audit rows removed per class (the `audit.purged` rows written are not counted). */
  audit: Record<AuditRetentionClass, number>;
  refreshTokens: number;
  /** Free pages still in the database file (SQLite; always 0 on PostgreSQL). */
  freePagesLeft: number;
}

export interface PurgePassOptions {
  /** The pass's clock reading: every cutoff is computed from it. */
  now: number;
  /** Checked between chunks: true ends the pass early (the service is closing). */
  shouldStop?: () => boolean;
}

/** The actions of each class: "auth" is the four `auth.*` actions, "admin" every other one. */
export const AUDIT_CLASS_ACTIONS: Readonly<Record<AuditRetentionClass, readonly AuditAction[]>> = {
  auth: AUTH_EVENT_ACTIONS,
  admin: AUDIT_ACTIONS.filter((action) => !AUTH_EVENT_ACTIONS.includes(action)),
};

/** Runs one pass; `{ran: false}` (and zeros) when another process is running one. */
export async function runPurgePass(storage: Storage, settings: PurgeSettings, options: PurgePassOptions): Promise<PurgeReport> {
  const outcome = await storage.withMaintenanceLock((session) => purgeWith(session, settings, options));
  return outcome.ran ? outcome.result : { ...emptyReport(), ran: false };
}

function emptyReport(): PurgeReport {
  return { ran: true, logEntries: 0, logBytes: 0, audit: { auth: 0, admin: 0 }, refreshTokens: 0, freePagesLeft: 0 };
}

async function purgeWith(session: StorageSession, settings: PurgeSettings, options: PurgePassOptions): Promise<PurgeReport> {
  const stop = options.shouldStop ?? (() => false);
  const report = emptyReport();
  await purgeLogEntries(session, options.now, stop, report);
  const retention: Record<AuditRetentionClass, number | null> = {
    auth: settings.authEventRetentionDays,
    admin: settings.auditRetentionDays,
  };
  for (const cls of ['auth', 'admin'] as const) {
    const days = retention[cls];
    if (days === null || stop()) continue;
    report.audit[cls] = await purgeAuditClass(session, cls, options.now - days * DAY_MS, settings.auditPurgeBatchSize, options.now, stop);
  }
  report.refreshTokens = await purgeRefreshTokens(session, options.now, stop);
  report.freePagesLeft = await reclaimSpace(session, stop);
  return report;
}

async function purgeLogEntries(session: StorageSession, now: number, stop: () => boolean, report: PurgeReport): Promise<void> {
  for (const scope of await session.expiredLogScopes(now)) {
    for (;;) {
      if (stop()) return;
      const chunk = await session.write((tx) => tx.purgeLogEntries(scope.projectId, scope.receivedBefore, LOG_PURGE_CHUNK));
      report.logEntries += chunk.entries;
      report.logBytes += chunk.bytes;
      if (chunk.entries < LOG_PURGE_CHUNK) break;
    }
  }
}

/**
 * Deletes one class's rows created strictly before `cutoff`, in chunks of
 * `batchSize`. The chunk that ends the class's work also writes its one
 * `audit.purged` row when anything was removed, so the row commits with the
 * last deletion.
 */
async function purgeAuditClass(
  session: StorageSession,
  cls: AuditRetentionClass,
  cutoff: number,
  batchSize: number,
  now: number,
  stop: () => boolean,
): Promise<number> {
  let total = 0;
  for (let last = false; !last; ) {
    total += await session.write(async (tx) => {
      const deleted = await tx.purgeAuditRows({ actions: AUDIT_CLASS_ACTIONS[cls], createdBefore: cutoff, limit: batchSize });
      last = deleted < batchSize || stop();
      if (last && total + deleted > 0) {
        await recordAudit(
          tx,
          {
            actorUserId: null,
            action: 'audit.purged',
            targetType: 'audit',
            targetId: null,
            metadata: { scope: cls, deleted_count: total + deleted, older_than: new Date(cutoff).toISOString() },
          },
          now,
        );
      }
      return deleted;
    });
  }
  return total;
}

async function purgeRefreshTokens(session: StorageSession, now: number, stop: () => boolean): Promise<number> {
  let total = 0;
  while (!stop()) {
    const deleted = await session.write((tx) => tx.purgeExpiredRefreshTokens(now, REFRESH_TOKEN_PURGE_CHUNK));
    total += deleted;
    if (deleted < REFRESH_TOKEN_PURGE_CHUNK) break;
  }
  return total;
}

/** Hands free pages back a chunk at a time until none are left (or no progress is made). */
async function reclaimSpace(session: StorageSession, stop: () => boolean): Promise<number> {
  let left = Number.POSITIVE_INFINITY;
  while (!stop()) {
    const remaining = await session.write((tx) => tx.reclaimFreePages(VACUUM_PAGES_PER_CHUNK));
    if (remaining === 0 || remaining >= left) return remaining;
    left = remaining;
  }
  return Number.isFinite(left) ? left : 0;
}
