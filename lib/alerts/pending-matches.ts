/**
 * What the alert engine gathers between decision passes: each rule's
 * matches (`addMatches`), and the rows of commits that arrived while the
 * rules were being reloaded (`HeldRows`), matched once the new rules are
 * in hand, so an entry committed just after a rule was created is matched
 * against it.
 */
import type { CommittedEntries, CommittedRow } from '../ingest/committed-entries.js';
import { NOTIFICATION_ENTRIES, type PendingMatches } from './rule-decisions.js';

/**
 * Rows held while rules reload, at most: a reload is one read, but a
 * database that answers slowly under a heavy load must not make the held
 * rows grow without bound. Past it, rows are not held (and not matched),
 * and the engine says so in its log.
 */
export const MAX_HELD_ROWS = 65_536;

/** Adds a rule's new matching rows to what waits for its next decision. */
export function addMatches(pending: Map<number, PendingMatches>, ruleId: number, rows: readonly CommittedRow[]): void {
  if (rows.length === 0) return;
  let p = pending.get(ruleId);
  if (!p) {
    p = { count: 0, firstId: Number.MAX_SAFE_INTEGER, rows: [], seconds: new Map() };
    pending.set(ruleId, p);
  }
  p.count += rows.length;
  for (const row of rows) {
    if (row.id < p.firstId) p.firstId = row.id;
    const second = Math.floor(row.receivedAt / 1000);
    const bucket = p.seconds.get(second);
    if (bucket) {
      bucket.n += 1;
      if (row.id < bucket.firstId) bucket.firstId = row.id;
    } else p.seconds.set(second, { second, n: 1, firstId: row.id });
  }
  p.rows = [...p.rows, ...rows.slice(0, NOTIFICATION_ENTRIES)].sort((a, b) => a.id - b.id).slice(0, NOTIFICATION_ENTRIES);
}

/** Committed rows per project, held until the rules they are to be matched against are loaded. */
export class HeldRows {
  private byProject = new Map<number, CommittedRow[]>();
  private count = 0;
  /** Rows not held since the last `take` (over MAX_HELD_ROWS). */
  private dropped = 0;

  /** Takes a commit's rows (while its listener runs: they are decoded now). */
  hold(committed: CommittedEntries): void {
    for (const projectId of committed.projectIds) {
      const n = committed.counts.get(projectId) ?? 0;
      if (this.count + n > MAX_HELD_ROWS) {
        this.dropped += n;
        continue;
      }
      const rows = committed.rows([projectId]);
      const list = this.byProject.get(projectId);
      if (list) for (const row of rows) list.push(row);
      else this.byProject.set(projectId, [...rows]);
      this.count += rows.length;
    }
  }

  /** Everything held, and how many rows could not be, emptying both. */
  take(): { rows: Map<number, CommittedRow[]>; dropped: number } {
    const taken = { rows: this.byProject, dropped: this.dropped };
    this.byProject = new Map();
    this.count = 0;
    this.dropped = 0;
    return taken;
  }
}
