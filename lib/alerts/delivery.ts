/**
 * Delivering notifications: at least once each, from whichever process
 * holds it. A notification is recorded `pending` in the same transaction
 * that decided it (rule-decisions.ts); the process that recorded it sends
 * it at once. Sending first takes a lease on the row (`claimDelivery`,
 * atomic across processes), so two processes never send it at the same
 * time; a failed attempt is retried with doubling waits, and given up
 * (`failed`, with the reason in words) an hour after the notification. A
 * process that dies holding a lease, or before sending, leaves the row
 * `pending`: a sweep every SWEEP_INTERVAL_MS, in every process, takes up
 * what is due and nobody holds (deliveries, unlike rule evaluation, are
 * found by reading their table).
 *
 * A destination that hangs or fails slows nothing else: attempts run
 * beside ingestion, at most MAX_CONCURRENT_DELIVERIES at once, each
 * bounded in time (senders.ts), and at most MAX_QUEUED_DELIVERIES wait in
 * memory; past that they wait in the table for the sweep.
 */
import type { ServiceLogger } from '../core/logger.js';
import type { Storage } from '../storage/storage.js';
import type { ClaimedDelivery, DeliveryStatus } from '../storage/types-alerts.js';
import { openDestination } from './destinations.js';
import type { Sealer } from './sealed.js';
import { ATTEMPT_TIMEOUT_MS, Senders, type SendContext } from './senders.js';
import { RefusedTargetError } from './target-guard.js';

/** Attempts running at once, per process. */
export const MAX_CONCURRENT_DELIVERIES = 4;
/** Notifications waiting in memory for an attempt; more wait in the table. */
export const MAX_QUEUED_DELIVERIES = 1_000;
/** How long an attempt holds a notification: longer than an attempt can take. */
export const DELIVERY_LEASE_MS = 4 * ATTEMPT_TIMEOUT_MS;
/** Retries wait 5 s, 10 s, 20 s… at most 10 minutes, and stop an hour after the notification. */
export const FIRST_RETRY_MS = 5_000;
export const MAX_RETRY_MS = 600_000;
export const GIVE_UP_AFTER_MS = 3_600_000;
/** How often each process looks for deliveries that are due and held by nobody. */
export const SWEEP_INTERVAL_MS = 30_000;
/** The longest failure reason kept. */
const MAX_ERROR_LENGTH = 300;

export interface DeliveriesOptions extends SendContext {
  storage: Storage;
  logger: ServiceLogger;
  sealer: Sealer;
}

export class Deliveries {
  private readonly queue = new Set<number>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly retryTimers = new Map<number, NodeJS.Timeout>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly senders: Senders;
  /** Attempts made since start, and how many failed (metrics, tests). */
  attempts = 0;
  failures = 0;

  constructor(private readonly options: DeliveriesOptions) {
    this.senders = new Senders(options);
  }

  start(): void {
    void this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** A notification to send now (dropped here when the queue is full: the sweep finds it). */
  enqueue(id: number): void {
    if (this.closed || this.queue.size >= MAX_QUEUED_DELIVERIES) return;
    this.queue.add(id);
    this.pump();
  }

  /** Takes up what is due now and waits until every attempt started has ended (operator and test hook). */
  async runDue(): Promise<void> {
    await this.sweep();
    while (this.inFlight.size > 0 || this.queue.size > 0) {
      this.pump();
      await Promise.all([...this.inFlight]);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
    this.queue.clear();
    await Promise.allSettled([...this.inFlight]);
    await this.senders.close();
  }

  private async sweep(): Promise<void> {
    if (this.closed) return;
    try {
      const ids = await this.options.storage.dueDeliveries(this.options.now(), MAX_QUEUED_DELIVERIES);
      for (const id of ids) this.enqueue(id);
    } catch (err) {
      this.options.logger.warn('alerts: cannot look for deliveries due', { error: String(err) });
    }
  }

  private pump(): void {
    while (!this.closed && this.inFlight.size < MAX_CONCURRENT_DELIVERIES && this.queue.size > 0) {
      const id = this.queue.values().next().value as number;
      this.queue.delete(id);
      const attempt = this.attempt(id).catch((err: unknown) => {
        this.options.logger.error('alerts: a delivery failed unexpectedly', { notification: id, error: String(err) });
      });
      this.inFlight.add(attempt);
      void attempt.finally(() => {
        this.inFlight.delete(attempt);
        this.pump();
      });
    }
  }

  private async attempt(id: number): Promise<void> {
    const { storage, now } = this.options;
    const start = now();
    const claimed = await storage.write((tx) => tx.claimDelivery(id, start, start + DELIVERY_LEASE_MS));
    if (!claimed) return;
    this.attempts += 1;
    const problem = await this.send(claimed);
    const { notification } = claimed;
    const attempts = notification.attempts + 1;
    const at = now();
    let status: DeliveryStatus;
    if (problem === null) {
      status = { deliveryState: 'delivered', attempts, nextAttemptAt: 0, lastError: null, deliveredAt: at };
    } else {
      this.failures += 1;
      const wait = Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), MAX_RETRY_MS);
      const giveUp = problem.final || at + wait > notification.createdAt + GIVE_UP_AFTER_MS;
      status = { deliveryState: giveUp ? 'failed' : 'pending', attempts, nextAttemptAt: giveUp ? 0 : at + wait, lastError: problem.reason, deliveredAt: null };
      this.options.logger.warn(`alerts: delivering notification ${id} of rule ${claimed.rule.id} failed${giveUp ? '; giving up' : '; will retry'}`, {
        reason: problem.reason,
      });
      if (!giveUp) this.retryIn(id, wait);
    }
    await storage.write((tx) => tx.finishDelivery(id, status));
  }

  /** null on success, else why, in words (never a URL, secret or address list). */
  private async send({ notification, rule }: ClaimedDelivery): Promise<{ reason: string; final: boolean } | null> {
    if (rule.destinationSealed === null) return { reason: 'the rule has no destination any more', final: true };
    const settings = openDestination(this.options.sealer, rule.destinationSealed);
    if (settings === null) {
      return { reason: 'the destination cannot be read (the service secret changed); set it again', final: true };
    }
    try {
      await this.senders.send(settings, rule, notification);
      return null;
    } catch (err) {
      return { reason: describeFailure(err), final: false };
    }
  }

  private retryIn(id: number, wait: number): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(id);
      this.enqueue(id);
    }, wait);
    timer.unref();
    this.retryTimers.set(id, timer);
  }
}

/** A failure in words a person can act on. */
export function describeFailure(err: unknown): string {
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '';
  const name = err instanceof Error ? err.name : '';
  let reason: string;
  if (err instanceof RefusedTargetError) reason = err.message;
  else if (code === 'UND_ERR_CONNECT_TIMEOUT') reason = 'could not connect in time';
  else if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') reason = 'the destination did not answer in time';
  else if (name === 'TimeoutError' || name === 'AbortError') reason = 'the attempt took too long';
  else if (code === 'ECONNREFUSED') reason = 'the destination refused the connection';
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') reason = "the destination's host name does not resolve";
  else if (code.startsWith('ERR_TLS') || code.includes('CERT')) reason = "the destination's TLS certificate was not accepted";
  else if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') reason = 'the connection was closed before an answer';
  else if (code === 'EAUTH') reason = 'the SMTP server refused the credentials';
  else if (err instanceof Error && /^answered \d{3}/.test(err.message)) reason = `the destination ${err.message}`;
  else if (err instanceof Error && err.message.startsWith('no SMTP server')) reason = err.message;
  else reason = `the attempt failed${code ? ` (${code})` : ''}`;
  return reason.slice(0, MAX_ERROR_LENGTH);
}
