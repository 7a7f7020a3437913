/**
 * The enabled rules as the alert engine matches them: by project for
 * rules of a project's search, by group for rules of a group's search,
 * each set with the words its filters look for gathered in one chunk scan
 * (rule-sets.ts). Matches go to the rules' pending matches
 * (pending-matches.ts); deciding them is the engine's.
 */
import type { CommittedEntries, CommittedRow } from '../ingest/committed-entries.js';
import type { EntryText } from '../search/entry-match.js';
import type { AlertRuleRow } from '../storage/types-alerts.js';
import { addMatches } from './pending-matches.js';
import { loadRule, ruleMatches, type LoadedRule, type PendingMatches } from './rule-decisions.js';
import { ruleSets, type RuleSet as RuleSetOf } from './rule-sets.js';

type RuleSet = RuleSetOf<LoadedRule>;

export class RuleIndex {
  /** Every loaded rule by id. */
  readonly rules = new Map<number, LoadedRule>();
  private readonly byProject: Map<number, RuleSet>;
  private readonly byGroup: Map<number, RuleSet>;

  /** Rules of the rows that load (loadRule); each rule's project and group are added to `groupOfProject`. */
  constructor(rows: readonly AlertRuleRow[], groupOfProject: Map<number, number>) {
    const ofProject = new Map<number, LoadedRule[]>();
    const ofGroup = new Map<number, LoadedRule[]>();
    for (const row of rows) {
      const loaded = loadRule(row);
      if (!loaded) continue;
      this.rules.set(row.id, loaded);
      const index = loaded.scope.kind === 'project' ? ofProject : ofGroup;
      const key = loaded.scope.kind === 'project' ? loaded.scope.projectId : loaded.scope.groupId;
      const list = index.get(key);
      if (list) list.push(loaded);
      else index.set(key, [loaded]);
      if (row.projectId !== null) groupOfProject.set(row.projectId, row.ownerGroupId);
    }
    this.byProject = ruleSets(ofProject);
    this.byGroup = ruleSets(ofGroup);
  }

  /** Whether a project's group must be known to match its entries (some rule is a group's). */
  get hasGroupRules(): boolean {
    return this.byGroup.size > 0;
  }

  /**
   * Every rule of a project (its own, and its group's when `groupId` is
   * known) against its entries in a commit; each chunk's rows are scanned
   * for words once for all the rules of a set, and each entry's text
   * (`textOf`) once for all the rules of the commit. A chunk with no entry
   * at a rule's level is not decoded for it.
   */
  matchCommit(
    committed: CommittedEntries,
    projectId: number,
    groupId: number | undefined,
    textOf: (row: CommittedRow) => EntryText,
    pending: Map<number, PendingMatches>,
  ): void {
    for (const set of this.setsOf(projectId, groupId)) {
      const holds = set.words.forCommit();
      for (const rule of set.rules) {
        if (rule.empty) continue;
        const probe = rule.probe;
        const mayMatch = probe ? (rows: Uint8Array) => holds(rows, probe) : undefined;
        const rows = committed.rows([projectId], mayMatch, rule.filter.minLevel);
        addMatches(
          pending,
          rule.row.id,
          rows.filter((r) => ruleMatches(rule, r, textOf)),
        );
      }
    }
  }

  /** The same for rows already in hand: those of the project's own rules (with `projectId`), or of its group's. */
  matchRows(
    rows: readonly CommittedRow[],
    scope: { projectId?: number; groupId?: number | undefined },
    textOf: (row: CommittedRow) => EntryText,
    pending: Map<number, PendingMatches>,
  ): void {
    for (const set of this.setsOf(scope.projectId, scope.groupId)) {
      for (const rule of set.rules) {
        if (rule.empty) continue;
        addMatches(
          pending,
          rule.row.id,
          rows.filter((r) => ruleMatches(rule, r, textOf)),
        );
      }
    }
  }

  private setsOf(projectId: number | undefined, groupId: number | undefined): RuleSet[] {
    const direct = projectId === undefined ? undefined : this.byProject.get(projectId);
    const viaGroup = groupId === undefined ? undefined : this.byGroup.get(groupId);
    return [direct, viaGroup].filter((set): set is RuleSet => set !== undefined);
  }
}
