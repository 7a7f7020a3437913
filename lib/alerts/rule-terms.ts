/**
 * Which rules a committed chunk may match, from its search terms, read once
 * per chunk whatever the number of rules. Testing each rule's terms with a
 * scan of the chunk's text (`holdsTerms`) costs one scan per rule, which
 * many rules on one project make most of what matching costs. Here one
 * pass over the text hashes each term (the text between a space or a
 * double quote and the next) and keeps those some rule asks for; each
 * rule then looks its terms up. Terms the pass cannot find (holding a
 * space or a quote), terms it was not given, and prefixes are still tested
 * by a scan, for the few rules that have them.
 */
import { holdsTerms, type BlockMatch } from '../search/log-terms.js';

/** Bits of the filter that spares most terms of a text the hash-table lookup. */
const FILTER_BITS = 1 << 16;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

const isEdge = (c: number): boolean => c === 0x20 || c === 0x22;

/** FNV-1a over UTF-16 code units, as a non-negative small integer (cheap as a Map key). */
function hashOf(text: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h & 0x3fffffff;
}

/** Tests chunk texts against the terms of a set of rules. */
export class RuleTerms {
  /** The terms the one pass looks for; any other is scanned for. */
  private readonly known = new Set<string>();
  private readonly byHash = new Map<number, string[]>();
  private readonly filter = new Uint8Array(FILTER_BITS / 8);

  constructor(matches: Iterable<BlockMatch>) {
    for (const match of matches) {
      for (const term of match.all) {
        if (!findable(term) || this.known.has(term)) continue;
        this.known.add(term);
        const h = hashOf(term, 0, term.length);
        const same = this.byHash.get(h);
        if (same) same.push(term);
        else this.byHash.set(h, [term]);
        this.filter[(h & (FILTER_BITS - 1)) >> 3]! |= 1 << (h & 7);
      }
    }
  }

  /**
   * A test for the chunks of one commit: whether a chunk's text holds
   * every term of `match` and a term starting with each of its prefixes
   * (what `holdsTerms` says). Each text is read once, on its first test.
   */
  forCommit(): (text: string, match: BlockMatch) => boolean {
    const found = new Map<string, ReadonlySet<string>>();
    return (text, match) => {
      let held = found.get(text);
      if (!held) {
        held = this.termsIn(text);
        found.set(text, held);
      }
      for (const term of match.all) {
        if (this.known.has(term) ? !held.has(term) : !holdsTerms(text, { all: [term], prefixes: [] })) return false;
      }
      return match.prefixes.length === 0 || holdsTerms(text, { all: [], prefixes: match.prefixes });
    };
  }

  /** The rules' terms that `text` holds, in one pass. */
  private termsIn(text: string): Set<string> {
    const held = new Set<string>();
    if (this.byHash.size === 0) return held;
    let h = FNV_OFFSET;
    let start = 0;
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 0x20;
      if (!isEdge(c)) {
        h = Math.imul(h ^ c, FNV_PRIME);
        continue;
      }
      if (i > start) {
        const key = h & 0x3fffffff;
        if ((this.filter[(key & (FILTER_BITS - 1)) >> 3]! & (1 << (key & 7))) !== 0) {
          for (const term of this.byHash.get(key) ?? []) {
            if (term.length === i - start && text.startsWith(term, start)) held.add(term);
          }
        }
      }
      h = FNV_OFFSET;
      start = i + 1;
    }
    return held;
  }
}

/** A term the one pass can find: one holding no edge. */
function findable(term: string): boolean {
  for (let i = 0; i < term.length; i++) if (isEdge(term.charCodeAt(i))) return false;
  return term.length > 0;
}

/** Rules of one project or group, with their terms gathered for the one pass. */
export interface RuleSet<R> {
  rules: R[];
  terms: RuleTerms;
  /** Whether a rule of the set has terms to pre-filter chunks by. */
  withTerms: boolean;
}

/** A rule set per key (project or group id). */
export function ruleSets<R extends { terms: BlockMatch | null }>(rulesByKey: Map<number, R[]>): Map<number, RuleSet<R>> {
  const sets = new Map<number, RuleSet<R>>();
  for (const [key, rules] of rulesByKey) {
    const matches = rules.flatMap((r) => (r.terms ? [r.terms] : []));
    sets.set(key, { rules, terms: new RuleTerms(matches), withTerms: matches.length > 0 });
  }
  return sets;
}
