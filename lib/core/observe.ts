/**
 * What the service's layers report about their own work, for metrics: a
 * few calls at the points that matter (a request answered, a batch
 * ingested, a transaction committed, a hash done, a retention pass). The
 * layers see only this interface; the metrics layer implements it, and a
 * service without metrics uses `NO_OBSERVER`, whose calls cost nothing.
 * Levels that can be read at any moment (streams open, budget in use,
 * pool state) are not reported here: the metrics layer reads them when
 * scraped.
 */

/** Why entries of a batch were not stored. */
export type RejectionReason = 'validation' | 'quota';

export interface ServiceObserver {
  /** A request was answered: `route` is the route table's path (or a fixed word such as `unmatched`), never the raw path. */
  requestDone(method: string, route: string, status: number, seconds: number): void;
  /** A batch for `projectId` was answered: entries stored (and their bytes) and rejected by reason. */
  batchIngested(projectId: number, accepted: number, acceptedBytes: number, rejected: Readonly<Record<RejectionReason, number>>): void;
  /** An ingestion body was read whole: its decoded bytes. */
  bodyRead(bytes: number): void;
  /** A group-commit transaction ended: the entries it carried and how long it took. */
  groupCommitted(entries: number, seconds: number, ok: boolean): void;
  /** A password hash (or verification) ended after `seconds` in the hashing process. */
  passwordHashed(seconds: number): void;
  /** A retention pass ended; `removed` counts rows by kind. */
  retentionPassed(ran: boolean, removed: Readonly<Record<'log_entries' | 'audit_rows' | 'refresh_tokens', number>>): void;
}

const nothing = (): void => {};

/** Observes nothing: the default of every layer. */
export const NO_OBSERVER: ServiceObserver = Object.freeze({
  requestDone: nothing,
  batchIngested: nothing,
  bodyRead: nothing,
  groupCommitted: nothing,
  passwordHashed: nothing,
  retentionPassed: nothing,
});

/** Seconds since `started` (a `process.hrtime.bigint()` value). */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}
