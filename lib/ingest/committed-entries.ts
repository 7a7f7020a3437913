/**
 * What one committed ingestion transaction stored, as commit listeners
 * (live streams) see it: the projects, the ids, and, decoded only when a
 * listener asks, the stored rows themselves, so a stream that already has
 * everything before them can be sent them without reading them back.
 */
import type { EncodedChunk, LogEntryOutcome, LogIngestRequest, LogRow } from '../storage/types-logs.js';
import { decodeRows } from '../storage/log-index/encoded-entries.js';

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
  /**
   * The stored entries of these projects in id order (call it while the
   * listener runs). With `mayMatch`, only those of chunks whose rows (the
   * UTF-8 JSON stored, `EncodedChunk.rows`) it accepts: a necessary
   * condition a filter can test without decoding the entries
   * (search/chunk-words.ts).
   * With `minLevel`, only those of chunks holding an entry at that level or
   * above (from the chunk's counts per level, also without decoding).
   * Each chunk is decoded once, whoever asks.
   */
  rows(projectIds: readonly number[], mayMatch?: (rows: Uint8Array) => boolean, minLevel?: number | null): readonly CommittedRow[];
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
  const chunks = storedChunks(requests, outcomes);
  return {
    projectIds: [...counts.keys()],
    firstId,
    maxId,
    counts,
    lastIdsBefore,
    rows(projectIds, mayMatch, minLevel) {
      const rows: CommittedRow[] = [];
      for (const chunk of chunks) {
        if (!projectIds.includes(chunk.projectId)) continue;
        if (minLevel != null && minLevel > 0 && !holdsLevel(chunk.minutes, minLevel)) continue;
        if (!mayMatch || mayMatch(chunk.bytes)) rows.push(...chunk.rows());
      }
      // Requests may have drawn their ids in any order between them (sorted input sorts in one pass).
      return rows.sort((a, b) => a.id - b.id);
    },
  };
}

/** A chunk of stored entries, decoded on demand, at most once. */
interface StoredChunk {
  projectId: number;
  /** Entries counted per minute and level, flat `[minute, level, n, …]` (log-rollup.ts). */
  minutes: readonly number[];
  /** The rows as stored (UTF-8 JSON). */
  bytes: Uint8Array;
  rows(): readonly CommittedRow[];
}

function storedChunks(requests: readonly LogIngestRequest[], outcomes: readonly (readonly LogEntryOutcome[])[]): StoredChunk[] {
  const chunks: StoredChunk[] = [];
  requests.forEach((request, i) => {
    const ofRequest = outcomes[i]!;
    let offset = 0;
    for (const chunk of request.chunks) {
      const first = offset;
      offset += chunk.count;
      let rows: CommittedRow[] | null = null;
      chunks.push({
        projectId: request.projectId,
        minutes: chunk.minutes,
        bytes: chunk.rows,
        rows: () => (rows ??= decodeStored(chunk, ofRequest, first)),
      });
    }
  });
  return chunks;
}

/** Whether a chunk's counts per minute and level hold an entry at `minLevel` or above. */
function holdsLevel(minutes: readonly number[], minLevel: number): boolean {
  for (let i = 1; i < minutes.length; i += 3) if (minutes[i]! >= minLevel && minutes[i + 1]! > 0) return true;
  return false;
}

/** The stored entries of one chunk (refused ones left out); `first`: the chunk's first entry in its request. */
function decodeStored(chunk: EncodedChunk, outcomes: readonly LogEntryOutcome[], first: number): CommittedRow[] {
  const rows: CommittedRow[] = [];
  let entry = first;
  for (const [projectId, receivedAt, timestamp, level, , body] of decodeRows(chunk)) {
    const outcome = outcomes[entry++]!;
    if ('id' in outcome) rows.push({ id: outcome.id, projectId, receivedAt, timestamp, level, body });
  }
  return rows;
}
