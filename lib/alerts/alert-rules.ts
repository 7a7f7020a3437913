/**
 * Alert rules on saved searches. A rule sends entries outside logkeep, so
 * only owners of the search's group and administrators create, change or
 * delete one; everyone who may read the search sees its rules, their state
 * and their notifications. Every change commits with its audit row.
 */
import { forbidden, invalidRequest, notFound } from '../core/errors.js';
import { canManageGroup, seesNothing, visibilityOf } from '../auth/rbac.js';
import { recordAudit } from '../audit/audit.js';
import type { Storage, ReadOps } from '../storage/storage.js';
import type { AlertDestinationColumns, AlertRuleKind, AlertRuleRow, AlertRuleSettings, SavedSearchRow } from '../storage/types-alerts.js';
import type { Page } from '../storage/types-org.js';
import { maySeeSavedSearch, type AlertActor } from './saved-searches.js';

/**
 * Rules one saved search may carry. Each enabled rule is matched against
 * every committed entry of its scope; ten per search is plenty for
 * "tell me" and "page me" and keeps one search from costing ingestion much.
 */
export const MAX_RULES_PER_SEARCH = 10;
/** Quiet periods and windows: a minute to a day. */
export const MIN_PERIOD_SECONDS = 60;
export const MAX_PERIOD_SECONDS = 86_400;
/** A threshold: 1 to a million matches in the window. */
export const MAX_THRESHOLD = 1_000_000;

/** Owners of the search's group and administrators. */
export function mayManageRules(actor: AlertActor, search: Pick<SavedSearchRow, 'ownerGroupId'>): boolean {
  return canManageGroup(actor.grants, search.ownerGroupId);
}

/** 404 for a rule that does not exist or whose search the caller cannot see; 403 for `manage` when not theirs to change. */
export async function requireAlertRule(db: ReadOps, actor: AlertActor, id: number, access: 'see' | 'manage'): Promise<AlertRuleRow> {
  const row = await db.getAlertRule(id);
  if (!row || !maySeeSavedSearch(actor.grants, row)) {
    throw notFound('No such alert rule.');
  }
  if (access === 'manage' && !mayManageRules(actor, row)) throw forbidden('Only owners of the group and administrators may change alert rules.');
  return row;
}

/** What a body may set; absent keys are absent. */
export interface RuleFields {
  name?: string;
  quietSeconds?: number | null;
  windowSeconds?: number | null;
  threshold?: number | null;
  enabled?: boolean;
}

/**
 * The settings after a create or a change, refused (400 naming the field)
 * when they do not fit the kind: any_match takes `quiet_seconds` only,
 * threshold `window_seconds` and `threshold`.
 */
export function checkRuleSettings(kind: AlertRuleKind, settings: Omit<AlertRuleSettings, 'kind'>): void {
  const required = (field: string, value: number | null) => {
    if (value === null) throw invalidRequest(`A ${kind} rule needs ${field}.`, field, 'required');
  };
  const absent = (field: string, value: number | null) => {
    if (value !== null) throw invalidRequest(`A ${kind} rule takes no ${field}.`, field, 'invalid');
  };
  if (kind === 'any_match') {
    required('quiet_seconds', settings.quietSeconds);
    absent('window_seconds', settings.windowSeconds);
    absent('threshold', settings.threshold);
  } else {
    required('window_seconds', settings.windowSeconds);
    required('threshold', settings.threshold);
    absent('quiet_seconds', settings.quietSeconds);
  }
}

/** No destination: notifications are only recorded. */
export const NO_DESTINATION: AlertDestinationColumns = { destinationType: null, destinationLabel: null, destinationSealed: null };

/** Inserts the rule and its `alert_rule.created` row; 400 when the search has as many rules as allowed. */
export function createAlertRule(
  storage: Storage,
  actor: AlertActor,
  search: SavedSearchRow,
  settings: AlertRuleSettings,
  destination: AlertDestinationColumns,
  now: number,
): Promise<AlertRuleRow> {
  checkRuleSettings(settings.kind, settings);
  return storage.write(async (tx) => {
    const existing = await tx.listAlertRules({ savedSearchId: search.id, visibility: { all: true }, limit: MAX_RULES_PER_SEARCH });
    if (existing.length >= MAX_RULES_PER_SEARCH) {
      throw invalidRequest(`A saved search carries at most ${MAX_RULES_PER_SEARCH} alert rules.`, 'saved_search_id', 'invalid');
    }
    const row = await tx.insertAlertRule({ ...settings, ...destination, savedSearchId: search.id, authorUserId: actor.userId, createdAt: now });
    await recordAudit(
      tx,
      {
        actorUserId: actor.userId,
        action: 'alert_rule.created',
        targetType: 'alert_rule',
        targetId: row.id,
        metadata: { name: row.name, saved_search_id: search.id, kind: row.kind, destination_type: row.destinationType },
      },
      now,
    );
    return row;
  });
}

export async function listVisibleAlertRules(storage: Storage, actor: AlertActor, filter: Page & { savedSearchId?: number }): Promise<AlertRuleRow[]> {
  const visibility = visibilityOf(actor.grants);
  if (seesNothing(visibility)) return [];
  return storage.listAlertRules({ ...filter, visibility });
}

const FIELD_NAMES: Record<keyof RuleFields, string> = {
  name: 'name',
  quietSeconds: 'quiet_seconds',
  windowSeconds: 'window_seconds',
  threshold: 'threshold',
  enabled: 'enabled',
};

/**
 * Applies a PATCH; `alert_rule.updated` names the fields that changed, and
 * a change of nothing writes nothing. A destination given replaces the
 * rule's (null removes it) and always counts as a change.
 */
export function updateAlertRule(
  storage: Storage,
  actor: AlertActor,
  id: number,
  fields: RuleFields,
  destination: AlertDestinationColumns | undefined,
  now: number,
): Promise<AlertRuleRow> {
  return storage.write(async (tx) => {
    const current = await tx.getAlertRule(id);
    if (!current) throw notFound('No such alert rule.');
    const changes: RuleFields = {};
    for (const key of Object.keys(FIELD_NAMES) as (keyof RuleFields)[]) {
      if (fields[key] !== undefined && fields[key] !== current[key]) (changes as Record<string, unknown>)[key] = fields[key];
    }
    const next = { ...current, ...changes };
    checkRuleSettings(current.kind, next);
    const changed = (Object.keys(changes) as (keyof RuleFields)[]).map((k) => FIELD_NAMES[k]);
    if (destination !== undefined) changed.push('destination');
    if (changed.length === 0) return current;
    const updated = await tx.updateAlertRule(id, { ...changes, ...(destination === undefined ? {} : { destination }), updatedAt: now });
    await recordAudit(
      tx,
      {
        actorUserId: actor.userId,
        action: 'alert_rule.updated',
        targetType: 'alert_rule',
        targetId: id,
        metadata: { changed_fields: changed.sort() },
      },
      now,
    );
    return updated;
  });
}

/** Deletes the rule (its counts and notifications with it) and writes `alert_rule.deleted`. */
export function deleteAlertRule(storage: Storage, actor: AlertActor, row: AlertRuleRow, now: number): Promise<void> {
  return storage.write(async (tx) => {
    if (!(await tx.deleteAlertRule(row.id))) throw notFound('No such alert rule.');
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'alert_rule.deleted', targetType: 'alert_rule', targetId: row.id, metadata: { name: row.name } },
      now,
    );
  });
}
