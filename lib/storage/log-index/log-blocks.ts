/**
 * The search index is kept per block, not per entry: a block is a run of
 * consecutive entries of one project (at most BLOCK_MAX_ENTRIES), and its
 * index row holds the terms of all of them, plus its project and levels
 * (search/log-terms.ts). Entries of a block share most of their terms (levels,
 * hosts, message templates, categories), and the index keeps one posting
 * per block and term, so it holds about half the postings one row per
 * entry would, which is what ingestion pays for. Repeats are not removed
 * here: that work is left to the index (FTS5's tokenizer,
 * array_to_tsvector). A query asks the index for candidate blocks, newest
 * first, reads their entries through (project_id, id) and checks each
 * against the filter (search/entry-match.ts) until its page is full:
 * VictoriaLogs' design, with an exact inverted index in place of its bloom
 * filters.
 *
 * Blocks are cut where entries are prepared (`cutBlocks`, per encoded
 * chunk of a request, off the event loop). In the write transaction, the
 * blocks of small requests of one project are merged (`rankedBlocks`), so
 * many small batches still make blocks of useful size.
 *
 * Blocks are written in the same transaction as their entries, so an entry
 * is findable by every filter as soon as it is acknowledged.
 */
import { levelTerm, projectTerm } from '../../search/log-terms.js';
import type { PreparedEntry } from '../types-logs.js';

/**
 * Entries per block. Smaller blocks index more postings per entry; larger
 * ones make a query for a term seen once per block read more entries
 * (docs/measurements.md, "Queries").
 */
export const BLOCK_MAX_ENTRIES = 64;

/**
 * Most bytes of terms in a block of several entries, counted as 3
 * per UTF-16 code unit (an upper bound of their UTF-8 size). PostgreSQL
 * refuses a tsvector over 1 MiB; a single entry may hold up to
 * MAX_TERM_BYTES (ingest/prepared-batch.ts) and then gets a block of its own.
 */
export const BLOCK_MAX_TERM_BYTES = 700_000;

/** A block of consecutive entries: their offsets (from 0) and their terms with the block's level terms, without the project term. */
export type CutBlock = [first: number, last: number, terms: string];

/**
 * Cuts consecutive entries of one project into blocks: at most
 * BLOCK_MAX_ENTRIES each, and cut before their terms would outgrow
 * BLOCK_MAX_TERM_BYTES.
 */
export function cutBlocks(entries: readonly PreparedEntry[]): CutBlock[] {
  const blocks: CutBlock[] = [];
  let start = 0;
  while (start < entries.length) {
    const parts: string[] = [];
    let bytes = 0;
    const levels = new Set<number>();
    let end = start;
    while (end < entries.length && end - start < BLOCK_MAX_ENTRIES) {
      const entry = entries[end]!;
      if (end > start && bytes + entry.terms.length * 3 > BLOCK_MAX_TERM_BYTES) break;
      levels.add(entry.level);
      if (entry.terms.length > 0) parts.push(entry.terms);
      bytes += (entry.terms.length + 1) * 3;
      end += 1;
    }
    for (const level of levels) parts.push(levelTerm(level));
    blocks.push([start, end - 1, parts.join(' ')]);
    start = end;
  }
  return blocks;
}

/**
 * A block to write, its entries named by rank (their position among the
 * transaction's admitted entries, in id order), with every term, its
 * project's included.
 */
export interface RankedBlock {
  projectId: number;
  firstRank: number;
  lastRank: number;
  terms: string;
}

/** A block of a request's entries, by rank; `mergeable` when it holds its whole request (a small one), so neighbours of its project may join it. */
export interface BlockPiece {
  projectId: number;
  firstRank: number;
  lastRank: number;
  /** Without the project term. */
  terms: string;
  mergeable: boolean;
}

/**
 * Merges runs of mergeable pieces of one project (consecutive ranks) into
 * blocks within BLOCK_MAX_ENTRIES and BLOCK_MAX_TERM_BYTES, and adds each
 * block's project term. Pieces come in rank order.
 */
export function rankedBlocks(pieces: readonly BlockPiece[]): RankedBlock[] {
  const blocks: RankedBlock[] = [];
  let open: { projectId: number; firstRank: number; lastRank: number; parts: string[]; bytes: number } | null = null;
  const close = () => {
    if (open === null) return;
    open.parts.push(projectTerm(open.projectId));
    blocks.push({ projectId: open.projectId, firstRank: open.firstRank, lastRank: open.lastRank, terms: open.parts.join(' ') });
    open = null;
  };
  for (const piece of pieces) {
    const bytes = piece.terms.length * 3;
    const joins =
      open !== null &&
      piece.mergeable &&
      open.projectId === piece.projectId &&
      open.lastRank + 1 === piece.firstRank &&
      piece.lastRank - open.firstRank < BLOCK_MAX_ENTRIES &&
      open.bytes + bytes <= BLOCK_MAX_TERM_BYTES;
    if (!joins) close();
    if (open === null) {
      open = { projectId: piece.projectId, firstRank: piece.firstRank, lastRank: piece.lastRank, parts: [piece.terms], bytes };
    } else {
      open.parts.push(piece.terms);
      open.lastRank = piece.lastRank;
      open.bytes += bytes;
    }
    if (!piece.mergeable) close();
  }
  close();
  return blocks;
}
