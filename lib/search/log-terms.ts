/**
 * The search tokens of the block index (see storage/log-index/log-blocks.ts): logkeep's own
 * entry terms (search/search-terms.ts) plus the two kinds the backends add,
 * the block's project and each level present in it. With them inside the
 * index, a query narrows to its projects and its minimum level within the
 * index itself. `§p` / `§l` + digits can equal neither a word (no `§`) nor
 * an exact-match term (always `§` + 12 base-32 digits, never a `p` or `l`
 * second character followed by so few).
 */
import { leafIndexTerm } from './search-terms.js';
import { LEVELS } from './levels.js';
import type { LogFilter } from './log-filter.js';

export function projectTerm(projectId: number): string {
  return `§p${projectId}`;
}

export function levelTerm(level: number): string {
  return `§l${level}`;
}

/** Groups up to this many projects name them inside the index query; larger ones filter rows instead. */
export const MAX_PROJECT_TERMS = 64;

const HIGHEST_LEVEL = LEVELS.length - 1;

/** What a block must hold to be a candidate: every one of `all`, a word starting with each prefix, one of each `anyOf` list. */
export interface BlockMatch {
  all: string[];
  prefixes: string[];
  anyOf: string[][];
}

/**
 * The block-index query of a filter over some projects, or null when the
 * filter has no condition the index serves (then the entry indexes do).
 */
export function blockMatchOf(filter: LogFilter, projectIds: readonly number[]): BlockMatch | null {
  const all = [...new Set([...filter.words, ...filter.exact.map((e) => leafIndexTerm(e.path, e.value))])];
  const anyOf: string[][] = [];
  if (filter.minLevel !== null && filter.minLevel > 0) {
    anyOf.push(Array.from({ length: HIGHEST_LEVEL - filter.minLevel + 1 }, (_, i) => levelTerm(filter.minLevel! + i)));
  }
  if (all.length === 0 && filter.prefixes.length === 0 && anyOf.length === 0) return null;
  if (projectIds.length > 0 && projectIds.length <= MAX_PROJECT_TERMS) anyOf.push(projectIds.map(projectTerm));
  return { all, prefixes: [...filter.prefixes], anyOf };
}

/**
 * Whether `text` holding search terms (each between a space or a double
 * quote and the next, as in a block's terms or their JSON) has every term
 * of `match.all` and a term starting with each of `match.prefixes`: what
 * the index asks of a block, without its `anyOf` (levels, projects).
 */
export function holdsTerms(text: string, match: Pick<BlockMatch, 'all' | 'prefixes'>): boolean {
  return match.all.every((term) => holdsTerm(text, term, false)) && match.prefixes.every((prefix) => holdsTerm(text, prefix, true));
}

const isTermEdge = (c: number): boolean => c === 0x20 || c === 0x22 || Number.isNaN(c);

function holdsTerm(text: string, term: string, prefix: boolean): boolean {
  // Every text holds the empty term (and `indexOf('', n)` stops advancing at the end of the text).
  if (term === '') return true;
  for (let at = text.indexOf(term); at !== -1; at = text.indexOf(term, at + 1)) {
    if (!isTermEdge(text.charCodeAt(at - 1))) continue;
    if (prefix || isTermEdge(text.charCodeAt(at + term.length))) return true;
  }
  return false;
}
