/**
 * Alert evaluation, as entries commit. Each process evaluates the entries
 * its own ingestion commits (the committed-entries path the live streams
 * use: rows matched in memory, never read back, never polled), so across
 * several processes on one PostgreSQL every entry is counted once, by the
 * process that stored it. What a rule decides is decided in the database,
 * under the rule's row lock (`lockAlertRule`): one evaluation at a time,
 * in any process, moves a rule's state and inserts its notification, and a
 * notification is unique per rule, kind and window, so it is recorded
 * exactly once.
 *
 * - any_match: the first matching entry notifies (`fired`); matches during
 *   the quiet period that follows are counted, and when it ends, a
 *   `repeated` notification carries their number (and starts another
 *   quiet period); a quiet period without matches returns the rule to `ok`.
 * - threshold: matches are counted per second of receipt; when those of
 *   the last `window_seconds` reach `threshold`, it notifies `fired`; when
 *   they fall back below, `resolved`.
 *
 * Quiet periods and resolutions end on a timer every process sets from the rule's stored state (so a restart, or
 * another process, takes over); whichever runs first does the work under the lock, the others find nothing left to
 * do. Rule changes reach the other processes through storage signals; each reloads the enabled rules.
 */
import { randomBytes } from 'node:crypto';
import type { ServiceLogger } from '../core/logger.js';
import type { CommittedEntries, CommittedRow } from '../ingest/committed-entries.js';
import type { Storage, WriteOps } from '../storage/storage.js';
import type { SignalListener, StorageSignals } from '../storage/storage-signals.js';
import type { AlertRuleRow } from '../storage/types-alerts.js';
import { decideMatches, decideTimeUp, dueOf, entryTexts, type Decision, type PendingMatches, type RecordedNotification } from './rule-decisions.js';
import { MAX_TIMER_MS, PASS_SPACING_MS, RULES_PER_DECISION } from './engine-pacing.js';
import { HeldRows } from './pending-matches.js';
import { RuleIndex } from './rule-index.js';

export type { RecordedNotification };

/** Cross-process channel: "the rules changed, reload them". */
export const RULES_CHANNEL = 'logkeep_alert_rules';

export interface AlertEngineOptions {
  storage: Storage;
  logger: ServiceLogger;
  now: () => number;
  /** Present with the server backend: rule changes to and from other processes. */
  signals?: StorageSignals;
  /** PASS_SPACING_MS unless a test changes it. */
  passSpacingMs?: number;
}

export class AlertEngine {
  private readonly storage: Storage;
  private readonly logger: ServiceLogger;
  private readonly now: () => number;
  private index = new RuleIndex([], new Map());
  /** Project → group; a project never changes group. */
  private readonly groupOfProject = new Map<number, number>();
  private pending = new Map<number, PendingMatches>();
  /** Rules with a quiet period or a resolution ahead: when to look again. */
  private readonly due = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastPass = Number.NEGATIVE_INFINITY;
  /** Ends the spacing wait of the pass about to run (PASS_SPACING_MS), when there is one. */
  private startPass: (() => void) | null = null;
  /** Group lookups of projects first seen in a commit, before their rows are matched. */
  private readonly lookups = new Set<Promise<void>>();
  private reloadWanted = false;
  /** From a rule change until its reload is done: commits' rows are held, to be matched against the new rules. */
  private reloading = false;
  private readonly held = new HeldRows();
  private closed = false;
  private listener: SignalListener | null = null;
  private readonly self = randomBytes(9).toString('base64url');
  private readonly listeners: ((recorded: RecordedNotification) => void)[] = [];

  constructor(private readonly options: AlertEngineOptions) {
    this.storage = options.storage;
    this.logger = options.logger;
    this.now = options.now;
  }

  /** Loads the rules and sets the timers their stored state calls for; listens for other processes' changes. */
  async start(): Promise<void> {
    if (this.options.signals) {
      this.listener = await this.options.signals.listen([RULES_CHANNEL], {
        onMessage: (_channel, payload) => {
          if (payload !== this.self) this.rulesChanged(false);
        },
        onConnected: (reconnected) => {
          if (reconnected) this.rulesChanged(false);
        },
      });
    }
    await this.reload();
  }

  /** Called with every notification once it is committed (delivery). */
  onNotification(listener: (recorded: RecordedNotification) => void): void {
    this.listeners.push(listener);
  }

  /** Rules were created, changed or deleted (here: tell the other processes too). */
  rulesChanged(tellOthers = true): void {
    if (tellOthers && this.options.signals) {
      this.options.signals.notify(RULES_CHANNEL, this.self).catch((err: unknown) => {
        this.logger.warn('alerts: cannot tell other processes that rules changed', { error: String(err) });
      });
    }
    this.reloadWanted = true;
    this.reloading = true;
    // A pass waiting out its spacing starts now, with the reload.
    this.startPass?.();
    this.kick();
  }

  /** Enabled rules loaded now. */
  get activeRules(): number {
    return this.index.rules.size;
  }

  /** An ingestion transaction of this process committed these entries: match them now, decide in the background. */
  entriesCommitted(committed: CommittedEntries): void {
    if (this.closed) return;
    if (this.reloading) {
      // The rules in hand may lack one just created: match these rows once the reload is done.
      this.held.hold(committed);
      this.kick();
      return;
    }
    if (this.index.rules.size === 0) return;
    const unknown = new Map<number, readonly CommittedRow[]>();
    const textOf = entryTexts();
    for (const projectId of committed.projectIds) {
      const groupId = this.groupOfProject.get(projectId);
      // Rows must be taken while the listener runs: decoded now, matched against the group's rules once it is known.
      if (groupId === undefined && this.index.hasGroupRules) unknown.set(projectId, committed.rows([projectId]));
      this.index.matchCommit(committed, projectId, groupId, textOf, this.pending);
    }
    if (unknown.size > 0) this.lookUpGroups(unknown);
    this.kick();
  }

  /** Matches rows of projects whose group is not known yet once it is. */
  private lookUpGroups(rows: Map<number, readonly CommittedRow[]>): void {
    const lookup = this.matchNewProjects(rows);
    this.lookups.add(lookup);
    void lookup.finally(() => this.lookups.delete(lookup));
  }

  /** Runs every quiet period and resolution due by now (operator and test hook); waits for evaluations in flight. */
  async runDue(): Promise<void> {
    await this.drain();
    const now = this.now();
    for (const [ruleId, at] of [...this.due]) {
      if (at <= now) await this.guard(() => this.timeUp(ruleId));
    }
    this.schedule();
    await this.drain();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.startPass?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.drain();
    await this.listener?.close();
  }

  private async drain(): Promise<void> {
    while (this.running || this.lookups.size > 0) {
      await Promise.all([this.running, ...this.lookups]);
    }
  }

  private kick(): void {
    if (this.running || this.closed) return;
    // A reload is never put off: entries committed before it would not be matched against the new rules.
    const wait = this.reloadWanted ? 0 : (this.options.passSpacingMs ?? PASS_SPACING_MS) - (performance.now() - this.lastPass);
    const start =
      wait > 0
        ? new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, wait);
            this.startPass = () => {
              clearTimeout(timer);
              resolve();
            };
          })
        : Promise.resolve();
    this.running = start
      .then(() => {
        this.startPass = null;
        this.lastPass = performance.now();
        return this.work();
      })
      .finally(() => {
        this.running = null;
        if ((this.pending.size > 0 || this.reloadWanted) && !this.closed) this.kick();
      });
  }

  /** One pass: reload if asked, then every rule with matches, one transaction each. */
  private async work(): Promise<void> {
    if (this.reloadWanted) {
      this.reloadWanted = false;
      await this.guard(() => this.reload());
    }
    if (this.reloading && !this.reloadWanted) {
      this.reloading = false;
      this.matchHeld();
    }
    const batch = [...this.pending].sort(([a], [b]) => a - b);
    this.pending = new Map();
    for (let at = 0; at < batch.length; at += RULES_PER_DECISION) {
      if (this.closed) return;
      await this.evaluateTogether(batch.slice(at, at + RULES_PER_DECISION));
    }
    this.schedule();
  }

  private async guard(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.logger.error('alerts: evaluating a rule failed', { error: String(err) });
    }
  }

  private async reload(): Promise<void> {
    this.index = new RuleIndex(await this.storage.listEnabledAlertRules(), this.groupOfProject);
    const rules = this.index.rules;
    for (const ruleId of [...this.due.keys()]) if (!rules.has(ruleId)) this.due.delete(ruleId);
    for (const rule of rules.values()) {
      const due = await dueOf(this.storage, rule.row, this.now());
      if (due === null) this.due.delete(rule.row.id);
      else this.due.set(rule.row.id, due);
    }
    this.schedule();
  }

  private async matchNewProjects(rowsByProject: Map<number, readonly CommittedRow[]>): Promise<void> {
    try {
      for (const [projectId, rows] of rowsByProject) {
        const project = await this.storage.getProject(projectId);
        if (!project) continue;
        this.groupOfProject.set(projectId, project.groupId);
        this.index.matchRows(rows, { groupId: project.groupId }, entryTexts(), this.pending);
      }
    } catch (err) {
      this.logger.warn('alerts: cannot look up the group of new projects', { error: String(err) });
    }
    this.kick();
  }

  /** The rows held while rules reloaded, against the rules now loaded. */
  private matchHeld(): void {
    const { rows: held, dropped } = this.held.take();
    if (dropped > 0) this.logger.warn('alerts: entries committed while rules reloaded were too many to hold; some were not matched', { dropped });
    const unknown = new Map<number, readonly CommittedRow[]>();
    const textOf = entryTexts();
    for (const [projectId, rows] of held) {
      const groupId = this.groupOfProject.get(projectId);
      if (groupId === undefined && this.index.hasGroupRules) unknown.set(projectId, rows);
      this.index.matchRows(rows, { projectId, groupId }, textOf, this.pending);
    }
    if (unknown.size > 0) this.lookUpGroups(unknown);
  }

  /** New matches of one rule, decided under its lock. */
  private async evaluate(ruleId: number, matched: PendingMatches): Promise<void> {
    await this.decide(ruleId, (tx, row) => decideMatches(tx, row, matched, this.now()));
  }

  /**
   * New matches of several rules (in id order, so processes that lock the
   * same rules lock them in the same order), decided in one transaction:
   * a transaction per rule would wait its turn for the writer once per
   * rule. When any decision fails, none is kept and each is decided alone,
   * so one rule's failure holds back no other.
   */
  private async evaluateTogether(batch: readonly (readonly [number, PendingMatches])[]): Promise<void> {
    if (batch.length === 1) {
      const [ruleId, matched] = batch[0]!;
      await this.guard(() => this.evaluate(ruleId, matched));
      return;
    }
    let decisions: (Decision | null)[];
    try {
      decisions = await this.storage.write(async (tx) => {
        const out: (Decision | null)[] = [];
        for (const [ruleId, matched] of batch) {
          const row = await tx.lockAlertRule(ruleId);
          out.push(row?.enabled ? await decideMatches(tx, row, matched, this.now()) : null);
        }
        return out;
      });
    } catch {
      for (const [ruleId, matched] of batch) {
        if (this.closed) return;
        await this.guard(() => this.evaluate(ruleId, matched));
      }
      return;
    }
    for (const [i, [ruleId]] of batch.entries()) this.decided(ruleId, decisions[i]!);
  }

  /** A quiet period or a window may have ended. */
  private async timeUp(ruleId: number): Promise<void> {
    await this.decide(ruleId, (tx, row) => decideTimeUp(tx, row, this.now()));
  }

  private async decide(ruleId: number, how: (tx: WriteOps, row: AlertRuleRow) => Promise<Decision>): Promise<void> {
    const decision = await this.storage.write(async (tx) => {
      const row = await tx.lockAlertRule(ruleId);
      return row?.enabled ? how(tx, row) : null;
    });
    this.decided(ruleId, decision);
  }

  /** A committed decision: when to look at the rule again, and its notification announced. */
  private decided(ruleId: number, decision: Decision | null): void {
    if (decision?.due == null) this.due.delete(ruleId);
    else this.due.set(ruleId, decision.due);
    if (decision?.recorded) this.announce(decision.recorded);
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.due.size === 0 || this.closed) return;
    const next = Math.min(...this.due.values());
    const delay = Math.max(0, Math.min(next - this.now(), MAX_TIMER_MS));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runDue();
    }, delay);
    this.timer.unref();
  }

  private announce(recorded: RecordedNotification): void {
    for (const listener of this.listeners) {
      try {
        listener(recorded);
      } catch (err) {
        this.logger.error('alerts: a notification listener failed', { error: String(err) });
      }
    }
  }
}
