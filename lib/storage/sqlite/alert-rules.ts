/**
 * Alert rules, their per-second match counts and their notifications in
 * SQLite: the statements and the verbs `SqliteReads` and `SqliteWrites`
 * delegate to. Write transactions already run one at a time on the writer,
 * so "locking" a rule is reading it.
 */
import * as Columns from '../schema/row-columns.js';
import type * as Alerts from '../types-alerts.js';
import type { Page } from '../types-org.js';
import { NO_UPPER_ID } from '../types-logs.js';
import type { SqlExecutor } from './connection.js';
import { change, flag, orNull, visibilityParams } from './params.js';
import { withBooleans } from './row-mappers.js';

export const SELECT_ALERT_RULE = `SELECT ${Columns.ALERT_RULE} ${Columns.ALERT_RULE_FROM} WHERE r.id = ?`;
/** Params: search (null for any), search, all (0/1), group ids, project ids (JSON), before id, limit. */
export const LIST_ALERT_RULES = `SELECT ${Columns.ALERT_RULE} ${Columns.ALERT_RULE_FROM}
  WHERE (? IS NULL OR r.saved_search_id = ?)
    AND (? = 1
         OR s.owner_group_id IN (SELECT value FROM json_each(?))
         OR s.project_id IN (SELECT value FROM json_each(?)))
    AND r.id < ?
  ORDER BY r.id DESC LIMIT ?`;
export const LIST_ENABLED_ALERT_RULES = `SELECT ${Columns.ALERT_RULE} ${Columns.ALERT_RULE_FROM} WHERE r.enabled = 1 ORDER BY r.id`;
export const INSERT_ALERT_RULE = `INSERT INTO alert_rules
  (saved_search_id, name, kind, quiet_seconds, window_seconds, threshold, enabled, author_user_id, created_at, updated_at, state_since,
   destination_type, destination_label, destination_sealed)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  RETURNING id`;
export const UPDATE_ALERT_RULE = `UPDATE alert_rules SET
  name = CASE WHEN ? THEN ? ELSE name END,
  quiet_seconds = CASE WHEN ? THEN ? ELSE quiet_seconds END,
  window_seconds = CASE WHEN ? THEN ? ELSE window_seconds END,
  threshold = CASE WHEN ? THEN ? ELSE threshold END,
  enabled = CASE WHEN ? THEN ? ELSE enabled END,
  destination_type = CASE WHEN ? THEN ? ELSE destination_type END,
  destination_label = CASE WHEN ? THEN ? ELSE destination_label END,
  destination_sealed = CASE WHEN ? THEN ? ELSE destination_sealed END,
  updated_at = ?
  WHERE id = ?`;
export const DELETE_ALERT_RULE = `DELETE FROM alert_rules WHERE id = ?`;
export const SET_ALERT_RULE_STATUS = `UPDATE alert_rules SET state = ?, state_since = ?, quiet_until = ?, pending_count = ?,
  pending_first_id = ?, paused_reason = ? WHERE id = ?`;
export const ADD_ALERT_COUNT = `INSERT INTO alert_counts (rule_id, at_second, n, first_id) VALUES (?, ?, ?, ?)
  ON CONFLICT (rule_id, at_second) DO UPDATE SET n = n + excluded.n, first_id = min(first_id, excluded.first_id)`;
export const PRUNE_ALERT_COUNTS = `DELETE FROM alert_counts WHERE rule_id = ? AND at_second < ?`;
export const DELETE_ALERT_COUNTS = `DELETE FROM alert_counts WHERE rule_id = ?`;
export const ALERT_COUNTS = `SELECT at_second AS second, n, first_id AS "firstId" FROM alert_counts
  WHERE rule_id = ? AND at_second >= ? ORDER BY at_second`;
export const INSERT_ALERT_NOTIFICATION = `INSERT INTO alert_notifications
  (rule_id, kind, window_start, window_end, match_count, entries, created_at, delivery_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (rule_id, kind, window_start) DO NOTHING
  RETURNING ${Columns.ALERT_NOTIFICATION}`;
export const LIST_ALERT_NOTIFICATIONS = `SELECT ${Columns.ALERT_NOTIFICATION} FROM alert_notifications
  WHERE rule_id = ? AND id < ? ORDER BY id DESC LIMIT ?`;

/** Takes a pending delivery for one sender until `leaseUntil`; params: lease until, id, now, now. */
export const CLAIM_DELIVERY = `UPDATE alert_notifications SET lease_until = ?
  WHERE id = ? AND delivery_state = 'pending' AND lease_until <= ? AND next_attempt_at <= ?
  RETURNING ${Columns.ALERT_NOTIFICATION}`;
export const FINISH_DELIVERY = `UPDATE alert_notifications SET delivery_state = ?, attempts = ?, next_attempt_at = ?, last_error = ?,
  delivered_at = ?, lease_until = 0 WHERE id = ?`;
export const DUE_DELIVERIES = `SELECT id FROM alert_notifications
  WHERE delivery_state = 'pending' AND next_attempt_at <= ? AND lease_until <= ? ORDER BY next_attempt_at LIMIT ?`;

const toRule = withBooleans<Alerts.AlertRuleRow>(['enabled']);
const toNotification = withBooleans<Alerts.AlertNotificationRow>();
const toBucket = withBooleans<Alerts.AlertCountBucket>();

export async function getAlertRule(db: SqlExecutor, id: number): Promise<Alerts.AlertRuleRow | null> {
  const row = await db.get(SELECT_ALERT_RULE, [id]);
  return row ? toRule(row) : null;
}

export async function listAlertRules(db: SqlExecutor, filter: Alerts.AlertRuleFilter): Promise<Alerts.AlertRuleRow[]> {
  const v = visibilityParams(filter.visibility);
  const search = orNull(filter.savedSearchId);
  const rows = await db.all(LIST_ALERT_RULES, [search, search, v.all, v.groupIds, v.projectIds, filter.beforeId ?? NO_UPPER_ID, filter.limit]);
  return rows.map(toRule);
}

export async function listEnabledAlertRules(db: SqlExecutor): Promise<Alerts.AlertRuleRow[]> {
  return (await db.all(LIST_ENABLED_ALERT_RULES)).map(toRule);
}

export async function insertAlertRule(db: SqlExecutor, rule: Alerts.NewAlertRule): Promise<Alerts.AlertRuleRow> {
  const row = await db.get(INSERT_ALERT_RULE, [
    rule.savedSearchId,
    rule.name,
    rule.kind,
    rule.quietSeconds,
    rule.windowSeconds,
    rule.threshold,
    flag(rule.enabled),
    rule.authorUserId,
    rule.createdAt,
    rule.createdAt,
    rule.createdAt,
    rule.destinationType,
    rule.destinationLabel,
    rule.destinationSealed,
  ]);
  const inserted = row ? await getAlertRule(db, row.id as number) : null;
  if (!inserted) throw new Error('inserted alert rule not found');
  return inserted;
}

export async function updateAlertRule(db: SqlExecutor, id: number, changes: Alerts.AlertRuleChanges): Promise<Alerts.AlertRuleRow> {
  const has = (k: keyof Alerts.AlertRuleChanges) => changes[k] !== undefined;
  await db.run(UPDATE_ALERT_RULE, [
    ...change(has('name'), changes.name),
    ...change(has('quietSeconds'), changes.quietSeconds),
    ...change(has('windowSeconds'), changes.windowSeconds),
    ...change(has('threshold'), changes.threshold),
    ...change(has('enabled'), changes.enabled === undefined ? null : flag(changes.enabled)),
    ...change(has('destination'), changes.destination?.destinationType),
    ...change(has('destination'), changes.destination?.destinationLabel),
    ...change(has('destination'), changes.destination?.destinationSealed),
    changes.updatedAt,
    id,
  ]);
  const row = await getAlertRule(db, id);
  if (!row) throw new Error(`alert rule ${id} not found`);
  return row;
}

export async function deleteAlertRule(db: SqlExecutor, id: number): Promise<boolean> {
  return (await db.run(DELETE_ALERT_RULE, [id])).changes === 1;
}

export async function setAlertRuleStatus(db: SqlExecutor, id: number, s: Alerts.AlertRuleStatus): Promise<void> {
  await db.run(SET_ALERT_RULE_STATUS, [s.state, s.stateSince, s.quietUntil, s.pendingCount, s.pendingFirstId, s.pausedReason, id]);
}

export async function addAlertCounts(db: SqlExecutor, ruleId: number, buckets: readonly Alerts.AlertCountBucket[]): Promise<void> {
  for (const b of buckets) await db.run(ADD_ALERT_COUNT, [ruleId, b.second, b.n, b.firstId]);
}

export async function pruneAlertCounts(db: SqlExecutor, ruleId: number, beforeSecond: number | null): Promise<void> {
  if (beforeSecond === null) await db.run(DELETE_ALERT_COUNTS, [ruleId]);
  else await db.run(PRUNE_ALERT_COUNTS, [ruleId, beforeSecond]);
}

export async function alertCounts(db: SqlExecutor, ruleId: number, fromSecond: number): Promise<Alerts.AlertCountBucket[]> {
  return (await db.all(ALERT_COUNTS, [ruleId, fromSecond])).map(toBucket);
}

export async function insertAlertNotification(db: SqlExecutor, n: Alerts.NewAlertNotification): Promise<Alerts.AlertNotificationRow | null> {
  const row = await db.get(INSERT_ALERT_NOTIFICATION, [n.ruleId, n.kind, n.windowStart, n.windowEnd, n.matchCount, n.entries, n.createdAt, n.deliveryState]);
  return row ? toNotification(row) : null;
}

export async function listAlertNotifications(db: SqlExecutor, ruleId: number, page: Page): Promise<Alerts.AlertNotificationRow[]> {
  return (await db.all(LIST_ALERT_NOTIFICATIONS, [ruleId, page.beforeId ?? NO_UPPER_ID, page.limit])).map(toNotification);
}

export async function claimDelivery(db: SqlExecutor, id: number, now: number, leaseUntil: number): Promise<Alerts.ClaimedDelivery | null> {
  const row = await db.get(CLAIM_DELIVERY, [leaseUntil, id, now, now]);
  if (!row) return null;
  const notification = toNotification(row);
  const rule = await getAlertRule(db, notification.ruleId);
  return rule ? { notification, rule } : null;
}

export async function finishDelivery(db: SqlExecutor, id: number, s: Alerts.DeliveryStatus): Promise<void> {
  await db.run(FINISH_DELIVERY, [s.deliveryState, s.attempts, s.nextAttemptAt, s.lastError, s.deliveredAt, id]);
}

export async function dueDeliveries(db: SqlExecutor, now: number, limit: number): Promise<number[]> {
  return (await db.all(DUE_DELIVERIES, [now, now, limit])).map((r) => r.id as number);
}
