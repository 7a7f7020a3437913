/**
 * Alert rules, their per-second match counts and their notifications in
 * PostgreSQL: the statements and the verbs `PostgresReads` and
 * `PostgresWrites` delegate to. Evaluations in several processes take the
 * rule's row lock (`lockAlertRule`) before deciding anything, so one at a
 * time decides each rule's next notification.
 */
import * as Columns from '../schema/row-columns.js';
import type * as Alerts from '../types-alerts.js';
import type { Page } from '../types-org.js';
import type { SqlExecutor } from './connection.js';

export const SELECT_ALERT_RULE = `SELECT ${Columns.ALERT_RULE} ${Columns.ALERT_RULE_FROM} WHERE r.id = $1`;
/** The rule's row stays locked until the transaction ends. */
export const LOCK_ALERT_RULE = `SELECT ${Columns.ALERT_RULE} ${Columns.ALERT_RULE_FROM} WHERE r.id = $1 FOR UPDATE OF r`;
export const LIST_ALERT_RULES = `SELECT ${Columns.ALERT_RULE} ${Columns.ALERT_RULE_FROM}
  WHERE ($(all) OR s.owner_group_id = ANY($(groupIds)::bigint[]) OR s.project_id = ANY($(projectIds)::bigint[]))
    AND ($(savedSearchId)::bigint IS NULL OR r.saved_search_id = $(savedSearchId))
    AND ($(beforeId)::bigint IS NULL OR r.id < $(beforeId))
  ORDER BY r.id DESC LIMIT $(limit)`;
export const LIST_ENABLED_ALERT_RULES = `SELECT ${Columns.ALERT_RULE} ${Columns.ALERT_RULE_FROM} WHERE r.enabled ORDER BY r.id`;
export const INSERT_ALERT_RULE = `INSERT INTO alert_rules
  (saved_search_id, name, kind, quiet_seconds, window_seconds, threshold, enabled, author_user_id, created_at, updated_at, state_since,
   destination_type, destination_label, destination_sealed)
  VALUES ($(savedSearchId), $(name), $(kind), $(quietSeconds), $(windowSeconds), $(threshold), $(enabled), $(authorUserId),
          $(createdAt), $(createdAt), $(createdAt), $(destinationType), $(destinationLabel), $(destinationSealed))
  RETURNING id`;
export const UPDATE_ALERT_RULE = `UPDATE alert_rules SET
    name = CASE WHEN $(setName) THEN $(name)::text ELSE name END,
    quiet_seconds = CASE WHEN $(setQuietSeconds) THEN $(quietSeconds)::bigint ELSE quiet_seconds END,
    window_seconds = CASE WHEN $(setWindowSeconds) THEN $(windowSeconds)::bigint ELSE window_seconds END,
    threshold = CASE WHEN $(setThreshold) THEN $(threshold)::bigint ELSE threshold END,
    enabled = CASE WHEN $(setEnabled) THEN $(enabled)::boolean ELSE enabled END,
    destination_type = CASE WHEN $(setDestination) THEN $(destinationType)::text ELSE destination_type END,
    destination_label = CASE WHEN $(setDestination) THEN $(destinationLabel)::text ELSE destination_label END,
    destination_sealed = CASE WHEN $(setDestination) THEN $(destinationSealed)::text ELSE destination_sealed END,
    updated_at = $(updatedAt)
  WHERE id = $(id)`;
export const DELETE_ALERT_RULE = `DELETE FROM alert_rules WHERE id = $1`;
export const SET_ALERT_RULE_STATUS = `UPDATE alert_rules SET state = $(state), state_since = $(stateSince), quiet_until = $(quietUntil),
  pending_count = $(pendingCount), pending_first_id = $(pendingFirstId), paused_reason = $(pausedReason) WHERE id = $(id)`;
/** Params: rule, seconds, counts, first ids (parallel arrays). */
export const ADD_ALERT_COUNTS = `INSERT INTO alert_counts (rule_id, at_second, n, first_id)
  SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[])
  ON CONFLICT (rule_id, at_second) DO UPDATE SET n = alert_counts.n + excluded.n, first_id = LEAST(alert_counts.first_id, excluded.first_id)`;
export const PRUNE_ALERT_COUNTS = `DELETE FROM alert_counts WHERE rule_id = $1 AND at_second < $2`;
export const DELETE_ALERT_COUNTS = `DELETE FROM alert_counts WHERE rule_id = $1`;
export const ALERT_COUNTS = `SELECT at_second AS second, n, first_id AS "firstId" FROM alert_counts
  WHERE rule_id = $1 AND at_second >= $2 ORDER BY at_second`;
export const INSERT_ALERT_NOTIFICATION = `INSERT INTO alert_notifications
  (rule_id, kind, window_start, window_end, match_count, entries, created_at, delivery_state)
  VALUES ($(ruleId), $(kind), $(windowStart), $(windowEnd), $(matchCount), $(entries), $(createdAt), $(deliveryState))
  ON CONFLICT (rule_id, kind, window_start) DO NOTHING
  RETURNING ${Columns.ALERT_NOTIFICATION}`;
export const LIST_ALERT_NOTIFICATIONS = `SELECT ${Columns.ALERT_NOTIFICATION} FROM alert_notifications
  WHERE rule_id = $(ruleId) AND ($(beforeId)::bigint IS NULL OR id < $(beforeId)) ORDER BY id DESC LIMIT $(limit)`;

/** Takes a pending delivery for one sender until `leaseUntil` (atomic: of two claims, one wins). */
export const CLAIM_DELIVERY = `UPDATE alert_notifications SET lease_until = $(leaseUntil)
  WHERE id = $(id) AND delivery_state = 'pending' AND lease_until <= $(now) AND next_attempt_at <= $(now)
  RETURNING ${Columns.ALERT_NOTIFICATION}`;
export const FINISH_DELIVERY = `UPDATE alert_notifications SET delivery_state = $(deliveryState), attempts = $(attempts),
  next_attempt_at = $(nextAttemptAt), last_error = $(lastError), delivered_at = $(deliveredAt), lease_until = 0 WHERE id = $(id)`;
export const DUE_DELIVERIES = `SELECT id FROM alert_notifications
  WHERE delivery_state = 'pending' AND next_attempt_at <= $1 AND lease_until <= $1 ORDER BY next_attempt_at LIMIT $2`;

export function getAlertRule(db: SqlExecutor, id: number): Promise<Alerts.AlertRuleRow | null> {
  return db.oneOrNone<Alerts.AlertRuleRow>(SELECT_ALERT_RULE, [id]);
}

export function lockAlertRule(db: SqlExecutor, id: number): Promise<Alerts.AlertRuleRow | null> {
  return db.oneOrNone<Alerts.AlertRuleRow>(LOCK_ALERT_RULE, [id]);
}

export function listAlertRules(db: SqlExecutor, filter: Alerts.AlertRuleFilter): Promise<Alerts.AlertRuleRow[]> {
  const v = filter.visibility;
  return db.any<Alerts.AlertRuleRow>(LIST_ALERT_RULES, {
    all: v.all,
    groupIds: v.all ? [] : v.groupIds,
    projectIds: v.all ? [] : v.projectIds,
    savedSearchId: filter.savedSearchId ?? null,
    beforeId: filter.beforeId ?? null,
    limit: filter.limit,
  });
}

export function listEnabledAlertRules(db: SqlExecutor): Promise<Alerts.AlertRuleRow[]> {
  return db.any<Alerts.AlertRuleRow>(LIST_ENABLED_ALERT_RULES);
}

export async function insertAlertRule(db: SqlExecutor, rule: Alerts.NewAlertRule): Promise<Alerts.AlertRuleRow> {
  const { id } = await db.one<{ id: number }>(INSERT_ALERT_RULE, rule);
  const row = await getAlertRule(db, id);
  if (!row) throw new Error('inserted alert rule not found');
  return row;
}

export async function updateAlertRule(db: SqlExecutor, id: number, changes: Alerts.AlertRuleChanges): Promise<Alerts.AlertRuleRow> {
  await db.none(UPDATE_ALERT_RULE, {
    id,
    setName: changes.name !== undefined,
    name: changes.name ?? null,
    setQuietSeconds: changes.quietSeconds !== undefined,
    quietSeconds: changes.quietSeconds ?? null,
    setWindowSeconds: changes.windowSeconds !== undefined,
    windowSeconds: changes.windowSeconds ?? null,
    setThreshold: changes.threshold !== undefined,
    threshold: changes.threshold ?? null,
    setEnabled: changes.enabled !== undefined,
    enabled: changes.enabled ?? null,
    setDestination: changes.destination !== undefined,
    destinationType: changes.destination?.destinationType ?? null,
    destinationLabel: changes.destination?.destinationLabel ?? null,
    destinationSealed: changes.destination?.destinationSealed ?? null,
    updatedAt: changes.updatedAt,
  });
  const row = await getAlertRule(db, id);
  if (!row) throw new Error(`alert rule ${id} not found`);
  return row;
}

export async function deleteAlertRule(db: SqlExecutor, id: number): Promise<boolean> {
  return (await db.result(DELETE_ALERT_RULE, [id])).rowCount === 1;
}

export async function setAlertRuleStatus(db: SqlExecutor, id: number, s: Alerts.AlertRuleStatus): Promise<void> {
  await db.none(SET_ALERT_RULE_STATUS, { id, ...s });
}

export async function addAlertCounts(db: SqlExecutor, ruleId: number, buckets: readonly Alerts.AlertCountBucket[]): Promise<void> {
  if (buckets.length === 0) return;
  await db.none(ADD_ALERT_COUNTS, [ruleId, buckets.map((b) => b.second), buckets.map((b) => b.n), buckets.map((b) => b.firstId)]);
}

export async function pruneAlertCounts(db: SqlExecutor, ruleId: number, beforeSecond: number | null): Promise<void> {
  if (beforeSecond === null) await db.none(DELETE_ALERT_COUNTS, [ruleId]);
  else await db.none(PRUNE_ALERT_COUNTS, [ruleId, beforeSecond]);
}

export function alertCounts(db: SqlExecutor, ruleId: number, fromSecond: number): Promise<Alerts.AlertCountBucket[]> {
  return db.any<Alerts.AlertCountBucket>(ALERT_COUNTS, [ruleId, fromSecond]);
}

export function insertAlertNotification(db: SqlExecutor, n: Alerts.NewAlertNotification): Promise<Alerts.AlertNotificationRow | null> {
  return db.oneOrNone<Alerts.AlertNotificationRow>(INSERT_ALERT_NOTIFICATION, n);
}

export function listAlertNotifications(db: SqlExecutor, ruleId: number, page: Page): Promise<Alerts.AlertNotificationRow[]> {
  return db.any<Alerts.AlertNotificationRow>(LIST_ALERT_NOTIFICATIONS, { ruleId, beforeId: page.beforeId ?? null, limit: page.limit });
}

export async function claimDelivery(db: SqlExecutor, id: number, now: number, leaseUntil: number): Promise<Alerts.ClaimedDelivery | null> {
  const notification = await db.oneOrNone<Alerts.AlertNotificationRow>(CLAIM_DELIVERY, { id, now, leaseUntil });
  if (!notification) return null;
  const rule = await getAlertRule(db, notification.ruleId);
  return rule ? { notification, rule } : null;
}

export async function finishDelivery(db: SqlExecutor, id: number, s: Alerts.DeliveryStatus): Promise<void> {
  await db.none(FINISH_DELIVERY, { id, ...s });
}

export async function dueDeliveries(db: SqlExecutor, now: number, limit: number): Promise<number[]> {
  return (await db.any<{ id: number }>(DUE_DELIVERIES, [now, limit])).map((r) => r.id);
}
