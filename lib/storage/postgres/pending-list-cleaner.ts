/**
 * Keeps the block index's GIN pending list short, off the ingestion path.
 *
 * PostgreSQL appends new GIN entries to a pending list and merges it into
 * the index inside whichever insert finds it over `gin_pending_list_limit`:
 * that ingestion request waited the whole merge (docs/measurements.md,
 * "PostgreSQL ingestion"). After every
 * CLEAN_EVERY_ENTRIES committed entries this merges the list from a pooled
 * connection instead, one merge at a time, while ingestion goes on (an
 * insert finding a merge under way skips its own). The 4 MiB limit stays
 * as the fallback should merging fall behind; searches, which read the
 * whole pending list, find it short.
 */
import type pgPromise from 'pg-promise';
import type { ServiceLogger } from '../../core/logger.js';

/** About 1 MiB of pending list at usual entry sizes (docs/measurements.md). */
export const CLEAN_EVERY_ENTRIES = 1500;

const INSUFFICIENT_PRIVILEGE = '42501';

export const CLEAN_PENDING_LIST = `SELECT gin_clean_pending_list('log_blocks_terms'::regclass) AS pages`;

export class PendingListCleaner {
  private sinceClean = 0;
  private running: Promise<void> | null = null;
  private disabled = false;

  constructor(
    private readonly pool: pgPromise.IDatabase<unknown>,
    private readonly logger: ServiceLogger,
  ) {}

  /** Counts committed entries; starts a merge when enough have come since the last. */
  added(entries: number): void {
    this.sinceClean += entries;
    if (this.disabled || this.running || this.sinceClean < CLEAN_EVERY_ENTRIES) return;
    this.sinceClean = 0;
    this.running = this.clean().finally(() => {
      this.running = null;
    });
  }

  /** Waits for a merge under way (tests, close). */
  async idle(): Promise<void> {
    await this.running;
  }

  private async clean(): Promise<void> {
    try {
      await this.pool.one(CLEAN_PENDING_LIST);
    } catch (err) {
      if ((err as { code?: string }).code === INSUFFICIENT_PRIVILEGE) {
        // Not the index's owner: inserts go on merging the list themselves.
        this.disabled = true;
        this.logger.warn('postgresql: not allowed to merge the search index pending list; ingestion will merge it itself', { error: String(err) });
      } else {
        // A lost connection, say: the next threshold tries again.
        this.logger.debug('postgresql: merging the search index pending list failed', { error: String(err) });
      }
    }
  }
}
