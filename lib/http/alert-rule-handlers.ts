/**
 * Handlers for alert rules and their notifications. Creating one reads the
 * body first (the saved search is in it), then checks the search (404 when
 * missing or unreadable, 403 unless the caller owns its group or is an
 * administrator), then the settings; the routes with an id check the rule
 * the same way before reading a body. Every change reloads the rules the
 * evaluation holds, in every process.
 */
import { array, boolean, enums, nullable, optional, size, integer, string, type } from 'superstruct';
import { readPageRequest, rowsToFetch, toPage } from '../core/pagination.js';
import { isoTimestamp } from '../core/timestamps.js';
import { forbidden, invalidRequest } from '../core/errors.js';
import { requireSavedSearch, type AlertActor } from '../alerts/saved-searches.js';
import {
  MAX_PERIOD_SECONDS,
  MAX_THRESHOLD,
  MIN_PERIOD_SECONDS,
  createAlertRule,
  deleteAlertRule,
  listVisibleAlertRules,
  mayManageRules,
  requireAlertRule,
  updateAlertRule,
  NO_DESTINATION,
} from '../alerts/alert-rules.js';
import { MAX_DESTINATION_URL_LENGTH, MAX_EMAIL_RECIPIENTS, prepareDestination, type DestinationInput } from '../alerts/destinations.js';
import { createSealer } from '../alerts/sealed.js';
import type { AlertDestinationColumns } from '../storage/types-alerts.js';
import type { ServiceDeps } from './service-deps.js';
import { pausedReason } from '../alerts/rule-decisions.js';
import type { ReadOps } from '../storage/storage.js';
import type { AlertNotificationRow, AlertRuleRow } from '../storage/types-alerts.js';
import { queryId } from './query-params.js';
import { BodyId, Name, actorOf } from './org-request.js';
import type { Reply, UserContext } from './route.js';

const RULES_CURSOR = 'alert_rules';
const NOTIFICATIONS_CURSOR = 'alert_notifications';

const Period = nullable(size(integer(), MIN_PERIOD_SECONDS, MAX_PERIOD_SECONDS));
const Threshold = nullable(size(integer(), 1, MAX_THRESHOLD));
/** Where notifications go; null or absent: they are only recorded. */
const Destination = nullable(
  type({
    type: enums(['webhook', 'slack', 'email'] as const),
    url: optional(size(string(), 1, MAX_DESTINATION_URL_LENGTH)),
    to: optional(size(array(size(string(), 1, 254)), 1, MAX_EMAIL_RECIPIENTS)),
  }),
);
const NewRuleBody = type({
  saved_search_id: BodyId,
  name: Name,
  kind: enums(['any_match', 'threshold'] as const),
  quiet_seconds: optional(Period),
  window_seconds: optional(Period),
  threshold: optional(Threshold),
  enabled: optional(boolean()),
  destination: optional(Destination),
});
const RulePatchBody = type({
  name: optional(Name),
  quiet_seconds: optional(Period),
  window_seconds: optional(Period),
  threshold: optional(Threshold),
  enabled: optional(boolean()),
  destination: optional(Destination),
});

type DestinationBody = { type: 'webhook' | 'slack' | 'email'; url?: string | undefined; to?: string[] | undefined } | null;

/** A destination body checked and sealed; the webhook's secret to show once. */
async function destinationOf(deps: ServiceDeps, body: DestinationBody): Promise<{ columns: AlertDestinationColumns; secret: string | null }> {
  if (body === null) return { columns: NO_DESTINATION, secret: null };
  let input: DestinationInput;
  if (body.type === 'email') {
    if (body.to === undefined) throw invalidRequest('An email destination needs `to`.', 'destination.to', 'required');
    input = { type: 'email', to: body.to };
  } else {
    if (body.url === undefined) throw invalidRequest(`A ${body.type} destination needs \`url\`.`, 'destination.url', 'required');
    input = { type: body.type, url: body.url };
  }
  return prepareDestination(input, createSealer(deps.config.jwtSecret), {
    allowPrivateTargets: deps.config.alertAllowPrivateTargets,
    emailEnabled: deps.config.alertSmtpUrl !== null,
  });
}

/** A rule as answered: its settings, where it stands, and why it does not fire if it cannot. */
async function presentRule(db: ReadOps, row: AlertRuleRow, actor: AlertActor) {
  return {
    id: row.id,
    saved_search_id: row.savedSearchId,
    name: row.name,
    kind: row.kind,
    quiet_seconds: row.quietSeconds,
    window_seconds: row.windowSeconds,
    threshold: row.threshold,
    enabled: row.enabled,
    author_user_id: row.authorUserId,
    state: row.state,
    state_since: isoTimestamp(row.stateSince),
    paused_reason: row.enabled ? await pausedReason(db, row) : null,
    destination: row.destinationType === null ? null : { type: row.destinationType, label: row.destinationLabel ?? '' },
    can_change: mayManageRules(actor, row),
    created_at: isoTimestamp(row.createdAt),
    updated_at: isoTimestamp(row.updatedAt),
  };
}

/** The answer that set a webhook carries its signing secret, this once. */
function withSecret<T extends { destination: { type: string; label: string } | null }>(rule: T, secret: string | null): T {
  return secret === null || rule.destination === null ? rule : { ...rule, destination: { ...rule.destination, secret } };
}

function presentNotification(row: AlertNotificationRow) {
  return {
    id: row.id,
    rule_id: row.ruleId,
    kind: row.kind,
    window_start: isoTimestamp(row.windowStart),
    window_end: isoTimestamp(row.windowEnd),
    count: row.matchCount,
    entries: JSON.parse(row.entries) as unknown[],
    created_at: isoTimestamp(row.createdAt),
    delivery: {
      state: row.deliveryState,
      attempts: row.attempts,
      next_attempt_at: row.deliveryState === 'pending' && row.nextAttemptAt > 0 ? isoTimestamp(row.nextAttemptAt) : null,
      last_error: row.lastError,
      delivered_at: row.deliveredAt === null ? null : isoTimestamp(row.deliveredAt),
    },
  };
}

export async function postAlertRules(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  const body = await ctx.json(NewRuleBody);
  const search = await requireSavedSearch(ctx.deps.storage, actor, body.saved_search_id, 'see');
  if (!mayManageRules(actor, search)) throw forbidden('Only owners of the group and administrators may create alert rules.');
  const destination = await destinationOf(ctx.deps, body.destination ?? null);
  const row = await createAlertRule(
    ctx.deps.storage,
    actor,
    search,
    {
      name: body.name,
      kind: body.kind,
      quietSeconds: body.quiet_seconds ?? null,
      windowSeconds: body.window_seconds ?? null,
      threshold: body.threshold ?? null,
      enabled: body.enabled ?? true,
    },
    destination.columns,
    ctx.deps.now(),
  );
  ctx.deps.alerts.rulesChanged();
  return { status: 201, body: withSecret(await presentRule(ctx.deps.storage, row, actor), destination.secret) };
}

export async function getAlertRules(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  const page = readPageRequest(ctx.query, RULES_CURSOR, ctx.deps.cursors);
  const savedSearchId = queryId(ctx.query, 'saved_search_id');
  const rows = await listVisibleAlertRules(ctx.deps.storage, actor, { ...rowsToFetch(page), ...(savedSearchId === undefined ? {} : { savedSearchId }) });
  const presented = new Map<number, Awaited<ReturnType<typeof presentRule>>>();
  for (const row of rows) presented.set(row.id, await presentRule(ctx.deps.storage, row, actor));
  return { status: 200, body: toPage(rows, page, RULES_CURSOR, ctx.deps.cursors, (row) => presented.get(row.id)!) };
}

export async function getAlertRule(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const row = await requireAlertRule(ctx.deps.storage, actor, ctx.params.id, 'see');
  return { status: 200, body: await presentRule(ctx.deps.storage, row, actor) };
}

export async function patchAlertRule(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const row = await requireAlertRule(ctx.deps.storage, actor, ctx.params.id, 'manage');
  const body = await ctx.json(RulePatchBody);
  const destination = body.destination === undefined ? undefined : await destinationOf(ctx.deps, body.destination);
  const updated = await updateAlertRule(
    ctx.deps.storage,
    actor,
    row.id,
    {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.quiet_seconds === undefined ? {} : { quietSeconds: body.quiet_seconds }),
      ...(body.window_seconds === undefined ? {} : { windowSeconds: body.window_seconds }),
      ...(body.threshold === undefined ? {} : { threshold: body.threshold }),
      ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
    },
    destination?.columns,
    ctx.deps.now(),
  );
  ctx.deps.alerts.rulesChanged();
  return { status: 200, body: withSecret(await presentRule(ctx.deps.storage, updated, actor), destination?.secret ?? null) };
}

export async function deleteAlertRuleRoute(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const row = await requireAlertRule(ctx.deps.storage, actor, ctx.params.id, 'manage');
  await deleteAlertRule(ctx.deps.storage, actor, row, ctx.deps.now());
  ctx.deps.alerts.rulesChanged();
  return { status: 204 };
}

export async function getAlertNotifications(ctx: UserContext<'id'>): Promise<Reply> {
  const row = await requireAlertRule(ctx.deps.storage, actorOf(ctx), ctx.params.id, 'see');
  const page = readPageRequest(ctx.query, NOTIFICATIONS_CURSOR, ctx.deps.cursors);
  const rows = await ctx.deps.storage.listAlertNotifications(row.id, rowsToFetch(page));
  return { status: 200, body: toPage(rows, page, NOTIFICATIONS_CURSOR, ctx.deps.cursors, presentNotification) };
}
