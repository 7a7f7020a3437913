/**
 * The search index is kept per block, not per entry: a block is a run of
 * consecutive entries of one project written by one ingestion transaction
 * (at most BLOCK_MAX_ENTRIES), and its index row holds the terms of all
 * of them, plus its project and levels (log-terms.ts). Entries of a block
 * share most of their terms (levels, hosts, message templates,
 * categories), and the index keeps one posting per block and term, so it
 * holds ~2.2× fewer postings than one row per entry would, which is what
 * ingestion pays for. Repeats are not removed here: the event loop is the
 * busier thread during ingestion, so that work is left to the index
 * (FTS5's tokenizer, array_to_tsvector), ~10 % more entries per second. A query asks the index
 * for candidate blocks, newest first, reads their entries through
 * (project_id, id) and checks each against the filter (logs/entry-match.ts)
 * until its page is full: VictoriaLogs' design, with an exact inverted
 * index in place of its bloom filters.
 *
 * Blocks are written in the same transaction as their entries, so an entry
 * is findable by every filter as soon as it is acknowledged.
 */
import type { AdmittedEntry } from './log-quota.js';
import { levelTerm, projectTerm } from './log-terms.js';

/**
 * Entries per block. Smaller blocks index more postings per entry; larger
 * ones make a query for a term seen once per block read more entries.
 * Measured with bench/query.ts over 1M entries (see README).
 */
export const BLOCK_MAX_ENTRIES = 64;

/**
 * Most bytes of terms in a block of several entries, counted as 3
 * per UTF-16 code unit (an upper bound of their UTF-8 size). PostgreSQL
 * refuses a tsvector over 1 MiB; a single entry may hold up to
 * MAX_TERM_BYTES (prepare-entries.ts) and then gets a block of its own.
 */
export const BLOCK_MAX_TERM_BYTES = 700_000;

export interface LogBlock {
  projectId: number;
  /** Ids of its first and last entry (no other entry of the project lies between). */
  firstId: number;
  lastId: number;
  /** Its tokens, space-separated (repeats allowed; project and level terms once). */
  terms: string;
}

/**
 * The blocks of one transaction's entries. `admitted` must hold each
 * project's entries consecutively (planIngest orders them so) with
 * ascending ids (`ids[i]` for `admitted[i]`).
 */
export function buildBlocks(admitted: readonly AdmittedEntry[], ids: readonly number[]): LogBlock[] {
  const blocks: LogBlock[] = [];
  let start = 0;
  while (start < admitted.length) {
    const projectId = admitted[start]!.projectId;
    const parts: string[] = [];
    let bytes = 0;
    const levels = new Set<number>();
    let end = start;
    while (end < admitted.length && admitted[end]!.projectId === projectId && end - start < BLOCK_MAX_ENTRIES) {
      const entry = admitted[end]!.entry;
      if (end > start && bytes + entry.terms.length * 3 > BLOCK_MAX_TERM_BYTES) break;
      levels.add(entry.level);
      if (entry.terms.length > 0) parts.push(entry.terms);
      bytes += (entry.terms.length + 1) * 3;
      end += 1;
    }
    parts.push(projectTerm(projectId));
    for (const level of levels) parts.push(levelTerm(level));
    blocks.push({ projectId, firstId: ids[start]!, lastId: ids[end - 1]!, terms: parts.join(' ') });
    start = end;
  }
  return blocks;
}
