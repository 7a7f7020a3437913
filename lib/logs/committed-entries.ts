/**
 * What one committed ingestion transaction stored, as commit listeners
 * (live streams) see it: the projects, the ids, and, decoded only when a
 * listener asks, the stored rows themselves, so a stream that already has
 * everything before them can be sent them without reading them back.
 */
import type { LogEntryOutcome, LogIngestRequest, LogRow } from '../storage/types-logs.js';
import { decodeRows } from '../storage/encoded-entries.js';

/** A stored entry with the columns a stream's filter tests. */
export interface CommittedRow extends LogRow {
  /** 0 debug … 4 critical. */
  level: number;
  /** The entry's `timestamp`, as epoch milliseconds. */
  timestamp: number;
}

export interface CommittedEntries {
  /** Projects that received entries. */
  projectIds: number[];
  /** The smallest and the largest id stored by the transaction. */
  firstId: number;
  maxId: number;
  /** Entries stored per project. */
  counts: ReadonlyMap<number, number>;
  /**
   * Per project that received entries, the largest id it held before this
   * transaction, read after the transaction locked the project (so none of
   * its entries can commit between that id and this transaction's), when
   * the backend reports it; null otherwise.
   */
  lastIdsBefore: ReadonlyMap<number, number> | null;
  /** The stored entries in id order, decoded on the first call (call it while the listener runs). */
  rows(): readonly CommittedRow[];
}

/** The transaction's report, or null when it stored nothing (every entry refused by a quota). */
export function committedEntries(
  requests: readonly LogIngestRequest[],
  outcomes: readonly (readonly LogEntryOutcome[])[],
  lastIdsBefore: ReadonlyMap<number, number> | null,
): CommittedEntries | null {
  let firstId = Number.POSITIVE_INFINITY;
  let maxId = 0;
  const counts = new Map<number, number>();
  outcomes.forEach((ofRequest, i) => {
    const projectId = requests[i]!.projectId;
    for (const outcome of ofRequest) {
      if (!('id' in outcome)) continue;
      if (outcome.id > maxId) maxId = outcome.id;
      if (outcome.id < firstId) firstId = outcome.id;
      counts.set(projectId, (counts.get(projectId) ?? 0) + 1);
    }
  });
  if (maxId === 0) return null;
  let decoded: CommittedRow[] | null = null;
  return {
    projectIds: [...counts.keys()],
    firstId,
    maxId,
    counts,
    lastIdsBefore,
    rows: () => (decoded ??= decodeStored(requests, outcomes)),
  };
}

/** The stored entries of the requests (refused ones left out), in id order. */
function decodeStored(requests: readonly LogIngestRequest[], outcomes: readonly (readonly LogEntryOutcome[])[]): CommittedRow[] {
  const rows: CommittedRow[] = [];
  requests.forEach((request, i) => {
    const ofRequest = outcomes[i]!;
    let entry = 0;
    for (const chunk of request.chunks) {
      for (const [projectId, receivedAt, timestamp, level, , body] of decodeRows(chunk)) {
        const outcome = ofRequest[entry++]!;
        if ('id' in outcome) rows.push({ id: outcome.id, projectId, receivedAt, timestamp, level, body });
      }
    }
  });
  return rows.sort((a, b) => a.id - b.id);
}
