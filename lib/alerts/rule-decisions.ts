/**
 * What a rule does next, decided inside a transaction that holds the
 * rule's row lock (`lockAlertRule`), so one decision at a time, in any
 * process, moves a rule and records its notification. Each function
 * returns the notification it recorded (or null) and when the rule needs
 * looking at again (a quiet period's or a window's end; null: not until
 * new matches).
 */
import { canSeeGroup, canSeeProject } from '../auth/rbac.js';
import type { CommittedRow } from '../ingest/committed-entries.js';
import { selectionOf } from '../logs/log-reader.js';
import { filterIsEmpty, type LogFilter, type LogScope } from '../logs/log-query-params.js';
import { logEntryJson } from '../logs/present-log.js';
import { EntryText, entryTextMatcher, type EntryTextTest } from '../search/entry-match.js';
import { wordProbeOf, type WordProbe } from '../search/chunk-words.js';
import type { ReadOps, WriteOps } from '../storage/storage.js';
import type { AlertCountBucket, AlertNotificationRow, AlertRuleRow, AlertRuleStatus, NewAlertNotification } from '../storage/types-alerts.js';
import type { LogRow } from '../storage/types-logs.js';
import { parseSavedQuery } from './saved-searches.js';

/** How many matching entries a notification carries, as stored. */
export const NOTIFICATION_ENTRIES = 10;

/** A notification just recorded, with the rule as it stood after it. */
export interface RecordedNotification {
  rule: AlertRuleRow;
  notification: AlertNotificationRow;
}

export interface Decision {
  recorded: RecordedNotification | null;
  /** When to look at the rule again (epoch ms), or null. */
  due: number | null;
}

/** Matches of one rule, gathered from commits and not yet decided on. */
export interface PendingMatches {
  count: number;
  firstId: number;
  /** The first NOTIFICATION_ENTRIES matching rows, by id. */
  rows: CommittedRow[];
  /** Per second of receipt. */
  seconds: Map<number, AlertCountBucket>;
}

/** A rule as evaluation holds it: its row, the scope and filter of its search, and the tests derived from them. */
export interface LoadedRule {
  row: AlertRuleRow;
  scope: LogScope;
  filter: LogFilter;
  empty: boolean;
  test: EntryTextTest | null;
  /** Terms a chunk must hold to hold a match, or null. */
  probe: WordProbe | null;
}

/** The rule's saved search as scope and filter; null when its query no longer reads. */
export function loadRule(row: AlertRuleRow): LoadedRule | null {
  let filter: LogFilter;
  try {
    filter = parseSavedQuery(row.query);
  } catch {
    return null;
  }
  const scope: LogScope = row.projectId !== null ? { kind: 'project', projectId: row.projectId } : { kind: 'group', groupId: row.ownerGroupId };
  return {
    row,
    scope,
    filter,
    empty: filterIsEmpty(filter),
    test: entryTextMatcher(filter),
    probe: wordProbeOf(filter),
  };
}

/**
 * Whether a committed entry matches the rule's filter (its scope was
 * checked by the caller). `textOf` gives the entry's text, shared by every
 * rule tested against the same commit.
 */
export function ruleMatches(rule: LoadedRule, row: CommittedRow, textOf: (row: CommittedRow) => EntryText): boolean {
  const f = rule.filter;
  if (f.minLevel !== null && row.level < f.minLevel) return false;
  if (f.from !== null && row.timestamp < f.from) return false;
  if (f.to !== null && row.timestamp > f.to) return false;
  return rule.test === null || rule.test(textOf(row));
}

/** Each entry's `EntryText`, made on first use, shared by the rules tested against one commit. */
export function entryTexts(): (row: CommittedRow) => EntryText {
  const texts = new Map<CommittedRow, EntryText>();
  return (row) => {
    let text = texts.get(row);
    if (!text) {
      text = new EntryText(row.body);
      texts.set(row, text);
    }
    return text;
  };
}

/** New matches. */
export function decideMatches(tx: WriteOps, row: AlertRuleRow, matched: PendingMatches, now: number): Promise<Decision> {
  return row.kind === 'any_match' ? anyMatch(tx, row, matched, now) : threshold(tx, row, matched, now);
}

async function anyMatch(tx: WriteOps, row: AlertRuleRow, matched: PendingMatches, now: number): Promise<Decision> {
  const quietMs = (row.quietSeconds ?? 0) * 1000;
  if (now < row.quietUntil) {
    await tx.setAlertRuleStatus(row.id, {
      ...statusOf(row),
      pendingCount: row.pendingCount + matched.count,
      pendingFirstId: Math.min(row.pendingFirstId ?? Number.MAX_SAFE_INTEGER, matched.firstId),
    });
    return { recorded: null, due: row.quietUntil };
  }
  // Out of quiet: news. Matches of a quiet period no timer closed yet are part of it.
  const held = row.pendingCount > 0;
  const entries = held ? await entriesAfter(tx, row, Math.min(row.pendingFirstId ?? matched.firstId, matched.firstId)) : matched.rows;
  const recorded = await record(
    tx,
    row,
    {
      ruleId: row.id,
      kind: held ? 'repeated' : 'fired',
      windowStart: held ? row.quietUntil - quietMs : now,
      windowEnd: now,
      matchCount: row.pendingCount + matched.count,
      entries: entriesJson(entries),
      createdAt: now,
    },
    { state: 'firing', stateSince: row.state === 'firing' ? row.stateSince : now, quietUntil: now + quietMs, pendingCount: 0, pendingFirstId: null },
  );
  return { recorded, due: recorded ? now + quietMs : null };
}

async function threshold(tx: WriteOps, row: AlertRuleRow, matched: PendingMatches, now: number): Promise<Decision> {
  await tx.addAlertCounts(row.id, [...matched.seconds.values()]);
  const { from, buckets } = await windowOf(tx, row, now);
  await tx.pruneAlertCounts(row.id, from);
  const count = sum(buckets);
  if (row.state === 'firing') return { recorded: null, due: resolveAt(row, buckets, now) };
  if (count < (row.threshold ?? 1)) return { recorded: null, due: null };
  const firstId = Math.min(...buckets.map((b) => b.firstId));
  const recorded = await record(
    tx,
    row,
    {
      ruleId: row.id,
      kind: 'fired',
      windowStart: now - (row.windowSeconds ?? 0) * 1000,
      windowEnd: now,
      matchCount: count,
      entries: entriesJson(await entriesAfter(tx, row, firstId)),
      createdAt: now,
    },
    { ...statusOf(row), state: 'firing', stateSince: now },
  );
  return { recorded, due: recorded ? resolveAt(row, buckets, now) : null };
}

/** A quiet period or a window may have ended by `now`. */
export async function decideTimeUp(tx: WriteOps, row: AlertRuleRow, now: number): Promise<Decision> {
  if (row.state !== 'firing') return { recorded: null, due: null };
  if (row.kind === 'any_match') {
    if (now < row.quietUntil) return { recorded: null, due: row.quietUntil };
    if (row.pendingCount === 0) {
      await tx.setAlertRuleStatus(row.id, { ...statusOf(row), state: 'ok', stateSince: row.quietUntil });
      return { recorded: null, due: null };
    }
    const quietMs = (row.quietSeconds ?? 0) * 1000;
    const recorded = await record(
      tx,
      row,
      {
        ruleId: row.id,
        kind: 'repeated',
        windowStart: row.quietUntil - quietMs,
        windowEnd: row.quietUntil,
        matchCount: row.pendingCount,
        entries: entriesJson(await entriesAfter(tx, row, row.pendingFirstId ?? 0)),
        createdAt: now,
      },
      { ...statusOf(row), quietUntil: row.quietUntil + quietMs, pendingCount: 0, pendingFirstId: null },
    );
    return { recorded, due: row.quietUntil + quietMs };
  }
  const { from, buckets } = await windowOf(tx, row, now);
  await tx.pruneAlertCounts(row.id, from);
  const count = sum(buckets);
  if (count >= (row.threshold ?? 1)) return { recorded: null, due: resolveAt(row, buckets, now) };
  const recorded = await record(
    tx,
    row,
    { ruleId: row.id, kind: 'resolved', windowStart: now - (row.windowSeconds ?? 0) * 1000, windowEnd: now, matchCount: count, entries: '[]', createdAt: now },
    { ...statusOf(row), state: 'ok', stateSince: now },
  );
  return { recorded, due: null };
}

/** When a loaded rule needs looking at again, from its stored state. */
export async function dueOf(db: ReadOps, row: AlertRuleRow, now: number): Promise<number | null> {
  if (!row.enabled || row.state !== 'firing') return null;
  if (row.kind === 'any_match') return row.quietUntil;
  return resolveAt(row, (await windowOf(db, row, now)).buckets, now);
}

/**
 * Inserts the notification and moves the rule, unless its project is
 * blocked or its author may no longer read the scope: then the rule only
 * says why, keeping its state.
 */
async function record(
  tx: WriteOps,
  row: AlertRuleRow,
  notification: Omit<NewAlertNotification, 'deliveryState'>,
  next: Omit<AlertRuleStatus, 'pausedReason'>,
): Promise<RecordedNotification | null> {
  const paused = await pausedReason(tx, row);
  if (paused !== null) {
    await tx.setAlertRuleStatus(row.id, { ...statusOf(row), pendingCount: 0, pendingFirstId: null, pausedReason: paused });
    return null;
  }
  const status: AlertRuleStatus = { ...next, pausedReason: null };
  await tx.setAlertRuleStatus(row.id, status);
  // Without a destination a notification is only recorded.
  const inserted = await tx.insertAlertNotification({ ...notification, deliveryState: row.destinationType === null ? 'none' : 'pending' });
  return inserted ? { rule: { ...row, ...status }, notification: inserted } : null;
}

/** The counts inside a threshold rule's window at `now`: the seconds after now − window. */
async function windowOf(db: ReadOps, row: AlertRuleRow, now: number): Promise<{ from: number; buckets: AlertCountBucket[] }> {
  const from = Math.floor(now / 1000) - (row.windowSeconds ?? 0) + 1;
  return { from, buckets: await db.alertCounts(row.id, from) };
}

/** When the count of a firing threshold rule falls below its threshold if nothing more matches. */
function resolveAt(row: AlertRuleRow, buckets: readonly AlertCountBucket[], now: number): number {
  const window = row.windowSeconds ?? 0;
  let left = sum(buckets);
  let at = now;
  for (const b of buckets) {
    // A second's matches count while now < (second + window) seconds.
    left -= b.n;
    at = (b.second + window) * 1000;
    if (left < (row.threshold ?? 1)) break;
  }
  return at;
}

/** The first matching entries from `firstId` on, as stored (read only when notifying). */
async function entriesAfter(db: ReadOps, row: AlertRuleRow, firstId: number): Promise<LogRow[]> {
  const loaded = loadRule(row);
  if (!loaded) return [];
  const selection = await selectionOf(db, loaded.scope, loaded.filter);
  return selection === null ? [] : db.logsAfter(selection, Math.max(0, firstId - 1), NOTIFICATION_ENTRIES);
}

function statusOf(row: AlertRuleRow): AlertRuleStatus {
  return {
    state: row.state,
    stateSince: row.stateSince,
    quietUntil: row.quietUntil,
    pendingCount: row.pendingCount,
    pendingFirstId: row.pendingFirstId,
    pausedReason: row.pausedReason,
  };
}

function sum(buckets: readonly AlertCountBucket[]): number {
  return buckets.reduce((n, b) => n + b.n, 0);
}

function entriesJson(rows: readonly LogRow[]): string {
  return `[${rows.slice(0, NOTIFICATION_ENTRIES).map(logEntryJson).join(',')}]`;
}

/**
 * Why a rule may not notify now: its project is blocked, or its author is
 * gone, blocked or may no longer read its scope. Null when it may.
 */
export async function pausedReason(db: ReadOps, row: AlertRuleRow): Promise<'project_blocked' | 'author_lost_access' | null> {
  if (row.projectId !== null) {
    const project = await db.getProject(row.projectId);
    if (!project || project.isBlocked) return 'project_blocked';
  }
  const author = await db.getUserById(row.authorUserId);
  if (!author?.isActive || author.deletedAt !== null) return 'author_lost_access';
  const grants = await db.effectiveGrants(author.id);
  const readable = row.projectId !== null ? canSeeProject(grants, { id: row.projectId, groupId: row.ownerGroupId }) : canSeeGroup(grants, row.ownerGroupId);
  return readable ? null : 'author_lost_access';
}
