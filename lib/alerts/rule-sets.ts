/**
 * The enabled rules of one project, or of one group, with the words their
 * filters look for gathered in one chunk scan (search/chunk-words.ts): a
 * committed chunk is read once for all of them, whatever their number.
 */
import { ChunkWords, type WordProbe } from '../search/chunk-words.js';

export interface RuleSet<R> {
  rules: R[];
  words: ChunkWords;
}

/** A rule set per key (project or group id). */
export function ruleSets<R extends { probe: WordProbe | null }>(rulesByKey: Map<number, R[]>): Map<number, RuleSet<R>> {
  const sets = new Map<number, RuleSet<R>>();
  for (const [key, rules] of rulesByKey) sets.set(key, { rules, words: new ChunkWords(rules.flatMap((r) => (r.probe ? [r.probe] : []))) });
  return sets;
}
