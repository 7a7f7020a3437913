/**
 * What retention (`ops/purge.ts`) asks of the storage contract: which
 * projects hold expired entries, and chunks of rows to delete.
 */

/**
 * A project holding log entries past its retention at the time asked,
 * and the cutoff that applies to it.
 */
export interface ExpiredLogScope {
  projectId: number;
  /** Entries with `received_at` strictly below this are past retention. */
  receivedBefore: number;
}

/** What one retention chunk removed from one project. */
export interface PurgedLogChunk {
  entries: number;
  /** Sum of the removed entries' sizes, taken off `total_bytes`. */
  bytes: number;
}

/** One chunk of audit rows to delete: those of one retention class past its cutoff. */
export interface AuditPurgeChunk {
  /** Every action of the class, spelled out (served by the (action, created_at) index). */
  actions: readonly string[];
  /** Only rows with `created_at` strictly below this (the cutoff is strict). */
  createdBefore: number;
  limit: number;
}
