/**
 * The purge job: a retention pass soon after start, then one every
 * `--retention-purge-interval-seconds` (counted from the end of the previous
 * pass, so passes never overlap). Passes are serialised in this process, a
 * failed pass is logged and retried at the next interval, and stopping waits
 * for the pass in progress, which ends at its next chunk boundary.
 */
import type { ServiceLogger } from '../core/logger.js';
import { NO_OBSERVER, type ServiceObserver } from '../core/observe.js';
import type { Storage } from '../storage/storage.js';
import { runPurgePass, type PurgeReport, type PurgeSettings } from './purge.js';

/** The first pass waits this long after start (or the interval, if shorter): startup stays quick. */
export const FIRST_PURGE_DELAY_MS = 10_000;

export interface PurgeJobOptions {
  storage: Storage;
  settings: PurgeSettings;
  intervalSeconds: number;
  logger: ServiceLogger;
  now: () => number;
  /** false: no timer; passes run only through `runOnce` (an embedder's own scheduler, or tests). */
  scheduled: boolean;
  /** Told of every pass that ends (metrics). */
  observer?: ServiceObserver;
}

export interface PurgeJob {
  /** Runs one pass now (after any pass in progress) and reports it. */
  runOnce(): Promise<PurgeReport>;
  /** Cancels the timer and waits for the pass in progress to end. Idempotent. */
  stop(): Promise<void>;
}

export function startPurgeJob(options: PurgeJobOptions): PurgeJob {
  const { storage, settings, logger, now } = options;
  const observer = options.observer ?? NO_OBSERVER;
  const intervalMs = options.intervalSeconds * 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let tail: Promise<unknown> = Promise.resolve();

  function runSerialised(): Promise<PurgeReport> {
    const pass = tail.then(() => {
      if (stopped) throw new Error('the purge job is stopped');
      return runPurgePass(storage, settings, { now: now(), shouldStop: () => stopped });
    });
    void pass.then(
      (report) => observer.retentionPassed(report.ran, removedRows(report)),
      () => undefined,
    );
    tail = pass.catch(() => undefined);
    return pass;
  }

  function schedule(delayMs: number): void {
    if (stopped || !options.scheduled) return;
    timer = setTimeout(() => {
      timer = null;
      void runSerialised()
        .then((report) => logReport(logger, report))
        .catch((err: unknown) => {
          if (!stopped) logger.error('retention purge failed; retrying at the next interval', { error: describe(err) });
        })
        .finally(() => schedule(intervalMs));
    }, delayMs);
    // The job never keeps a process alive on its own.
    timer.unref();
  }

  schedule(Math.min(FIRST_PURGE_DELAY_MS, intervalMs));

  return {
    runOnce: runSerialised,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await tail;
    },
  };
}

function logReport(logger: ServiceLogger, report: PurgeReport): void {
  if (!report.ran) {
    logger.debug('retention purge skipped: another process is running one');
    return;
  }
  const fields = {
    log_entries: report.logEntries,
    log_bytes: report.logBytes,
    audit_admin: report.audit.admin,
    audit_auth: report.audit.auth,
    refresh_tokens: report.refreshTokens,
    free_pages_left: report.freePagesLeft,
  };
  const removed = report.logEntries + report.audit.admin + report.audit.auth + report.refreshTokens;
  if (removed > 0) logger.info('retention purge', fields);
  else logger.debug('retention purge found nothing to remove', fields);
}

function removedRows(report: PurgeReport): Record<'log_entries' | 'audit_rows' | 'refresh_tokens', number> {
  return { log_entries: report.logEntries, audit_rows: report.audit.admin + report.audit.auth, refresh_tokens: report.refreshTokens };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
