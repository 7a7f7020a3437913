/**
 * Handlers for saved searches. Creating one reads the body first (its
 * scope is in it), then checks the scope as `GET /v1/logs` does (404, 403,
 * 403 `project_blocked`), then the query; the routes with an id check the
 * search (404 when missing or its scope unreadable, 403 when not the
 * caller's to change) before reading a body.
 */
import { nullable, optional, size, type } from 'superstruct';
import { invalidRequest } from '../core/errors.js';
import { readPageRequest, rowsToFetch, toPage } from '../core/pagination.js';
import { isoTimestamp } from '../core/timestamps.js';
import {
  MAX_SAVED_QUERY_LENGTH,
  createSavedSearch,
  deleteSavedSearch,
  listVisibleSavedSearches,
  mayChangeSavedSearch,
  parseSavedQuery,
  requireSavedSearch,
  requireSearchScope,
  updateSavedSearch,
  type AlertActor,
} from '../alerts/saved-searches.js';
import type { LogScope } from '../logs/log-query-params.js';
import type { SavedSearchRow } from '../storage/types-alerts.js';
import { queryId } from './query-params.js';
import { BodyId, Name, Text, actorOf } from './org-request.js';
import type { Reply, UserContext } from './route.js';

/** The cursor namespace of the list. */
const CURSOR_LIST = 'saved_searches';

const SavedQuery = size(Text, 0, MAX_SAVED_QUERY_LENGTH);
const NewSavedSearchBody = type({
  name: Name,
  project_id: optional(nullable(BodyId)),
  group_id: optional(nullable(BodyId)),
  query: optional(SavedQuery),
});
const SavedSearchPatchBody = type({ name: optional(Name), query: optional(SavedQuery) });

/** A leading `?` is the caller's URL habit, not part of the filters. */
function normaliseQuery(query: string): string {
  return query.startsWith('?') ? query.slice(1) : query;
}

export function presentSavedSearch(row: SavedSearchRow, actor: AlertActor) {
  return {
    id: row.id,
    name: row.name,
    project_id: row.projectId,
    group_id: row.groupId,
    query: row.query,
    author_user_id: row.authorUserId,
    can_change: mayChangeSavedSearch(actor, row),
    created_at: isoTimestamp(row.createdAt),
    updated_at: isoTimestamp(row.updatedAt),
  };
}

export async function postSavedSearches(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  const body = await ctx.json(NewSavedSearchBody);
  const projectId = body.project_id ?? null;
  const groupId = body.group_id ?? null;
  if ((projectId === null) === (groupId === null)) {
    throw invalidRequest('Exactly one of project_id and group_id is required.', 'project_id', 'invalid');
  }
  const scope: LogScope = projectId !== null ? { kind: 'project', projectId } : { kind: 'group', groupId: groupId! };
  await requireSearchScope(ctx.deps.storage, actor, scope);
  const query = normaliseQuery(body.query ?? '');
  parseSavedQuery(query);
  const row = await createSavedSearch(ctx.deps.storage, actor, { name: body.name, scope, query }, ctx.deps.now());
  return { status: 201, body: presentSavedSearch(row, actor) };
}

export async function getSavedSearches(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  const page = readPageRequest(ctx.query, CURSOR_LIST, ctx.deps.cursors);
  const projectId = queryId(ctx.query, 'project_id');
  const groupId = queryId(ctx.query, 'group_id');
  const rows = await listVisibleSavedSearches(ctx.deps.storage, actor, {
    ...rowsToFetch(page),
    ...(projectId === undefined ? {} : { projectId }),
    ...(groupId === undefined ? {} : { groupId }),
  });
  return { status: 200, body: toPage(rows, page, CURSOR_LIST, ctx.deps.cursors, (row) => presentSavedSearch(row, actor)) };
}

export async function getSavedSearch(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const row = await requireSavedSearch(ctx.deps.storage, actor, ctx.params.id, 'see');
  return { status: 200, body: presentSavedSearch(row, actor) };
}

export async function patchSavedSearch(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const row = await requireSavedSearch(ctx.deps.storage, actor, ctx.params.id, 'change');
  const body = await ctx.json(SavedSearchPatchBody);
  const query = body.query === undefined ? undefined : normaliseQuery(body.query);
  if (query !== undefined) parseSavedQuery(query);
  const updated = await updateSavedSearch(
    ctx.deps.storage,
    actor,
    row.id,
    { ...(body.name === undefined ? {} : { name: body.name }), ...(query === undefined ? {} : { query }) },
    ctx.deps.now(),
  );
  // Its rules now match the new filters.
  if (query !== undefined) ctx.deps.alerts.rulesChanged();
  return { status: 200, body: presentSavedSearch(updated, actor) };
}

export async function deleteSavedSearchRoute(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  const row = await requireSavedSearch(ctx.deps.storage, actor, ctx.params.id, 'change');
  await deleteSavedSearch(ctx.deps.storage, actor, row, ctx.deps.now());
  // Its rules went with it.
  ctx.deps.alerts.rulesChanged();
  return { status: 204 };
}
