/**
 * Rows and filters of saved searches (and, built on them, alert rules), as
 * the storage contract (`storage.ts`) reads and writes them.
 */
import type { Page, Visibility } from './types-org.js';

/**
 * A saved search: a name, a scope (exactly one of a project or a group) and
 * the filters of `GET /v1/logs` as a query string (`level=error&q=disk`),
 * checked when saved.
 */
export interface SavedSearchRow {
  id: number;
  name: string;
  /** Exactly one of projectId and groupId is set. */
  projectId: number | null;
  groupId: number | null;
  /** The group that owns the scope: the group itself, or the project's group. */
  ownerGroupId: number;
  query: string;
  authorUserId: number;
  createdAt: number;
  updatedAt: number;
}

export interface NewSavedSearch {
  name: string;
  projectId: number | null;
  groupId: number | null;
  query: string;
  authorUserId: number;
  createdAt: number;
}

/** Fields `updateSavedSearch` may change; absent keys stay as they are. */
export interface SavedSearchChanges {
  name?: string;
  query?: string;
  updatedAt: number;
}

export interface SavedSearchFilter extends Page {
  /** Only searches scoped to this project. */
  projectId?: number;
  /** Only searches scoped to this group (not those of its projects). */
  groupId?: number;
  /** Searches of projects visible here and of groups in `groupIds`. */
  visibility: Visibility;
}

export type AlertRuleKind = 'any_match' | 'threshold';
export type AlertRuleState = 'ok' | 'firing';

/** The settings of a rule, as created and changed through the API. */
export interface AlertRuleSettings {
  name: string;
  kind: AlertRuleKind;
  /** any_match: at most one notification per this many seconds. */
  quietSeconds: number | null;
  /** threshold: the sliding window, in seconds. */
  windowSeconds: number | null;
  /** threshold: the number of matches in the window that fires it. */
  threshold: number | null;
  enabled: boolean;
}

export type DestinationType = 'webhook' | 'slack' | 'email';

/** Where a rule's notifications go; null fields: nowhere (they are only recorded). */
export interface AlertDestinationColumns {
  destinationType: DestinationType | null;
  /** What answers show: a webhook's URL, a Slack URL's host, e-mail addresses. */
  destinationLabel: string | null;
  /** The destination's settings (URL, signing secret, addresses), sealed (alerts/sealed.ts). */
  destinationSealed: string | null;
}

/** Where a rule stands now; changed only by the evaluation, under the rule's row lock. */
export interface AlertRuleStatus {
  state: AlertRuleState;
  stateSince: number;
  /** any_match: no notification before this instant (epoch ms; 0 when none was sent). */
  quietUntil: number;
  /** any_match: matches since the last notification, not yet notified. */
  pendingCount: number;
  /** The smallest id among them, or null. */
  pendingFirstId: number | null;
  /** Why the rule does not fire now (`author_lost_access`), or null. */
  pausedReason: string | null;
}

/** A rule with its saved search's scope and query. */
export interface AlertRuleRow extends AlertRuleSettings, AlertRuleStatus, AlertDestinationColumns {
  id: number;
  savedSearchId: number;
  authorUserId: number;
  createdAt: number;
  updatedAt: number;
  /** From the saved search. */
  projectId: number | null;
  groupId: number | null;
  ownerGroupId: number;
  query: string;
}

export interface NewAlertRule extends AlertRuleSettings, AlertDestinationColumns {
  savedSearchId: number;
  authorUserId: number;
  createdAt: number;
}

export type AlertRuleChanges = Partial<AlertRuleSettings> & { updatedAt: number; destination?: AlertDestinationColumns };

export interface AlertRuleFilter extends Page {
  savedSearchId?: number;
  /** Rules of saved searches whose scope this covers. */
  visibility: Visibility;
}

/** Matches of a threshold rule received in one second. */
export interface AlertCountBucket {
  /** Epoch seconds of the entries' receipt. */
  second: number;
  n: number;
  /** The smallest entry id among them. */
  firstId: number;
}

export type AlertNotificationKind = 'fired' | 'repeated' | 'resolved';
export type DeliveryState = 'none' | 'pending' | 'delivered' | 'failed';

/** Where a notification's delivery stands. */
export interface DeliveryStatus {
  deliveryState: DeliveryState;
  attempts: number;
  /** Not before this instant (epoch ms). */
  nextAttemptAt: number;
  /** The last failure in words, or null. */
  lastError: string | null;
  deliveredAt: number | null;
}

export interface AlertNotificationRow extends DeliveryStatus {
  id: number;
  ruleId: number;
  kind: AlertNotificationKind;
  /** The window the count covers (epoch ms, inclusive). */
  windowStart: number;
  windowEnd: number;
  matchCount: number;
  /** Up to 10 matching entries as stored, JSON text of an array of entry objects with their ids. */
  entries: string;
  createdAt: number;
}

export type NewAlertNotification = Omit<AlertNotificationRow, 'id' | keyof DeliveryStatus> & { deliveryState: 'none' | 'pending' };

/** A notification held for sending, with its rule's destination. */
export interface ClaimedDelivery {
  notification: AlertNotificationRow;
  rule: AlertRuleRow;
}
