/**
 * Saved searches: a name, a scope (one project or one group) and the
 * filters of `GET /v1/logs` as a query string. Anyone who may read the scope
 * may save one; everyone who may read its scope sees it; only its author,
 * whoever manages its project or group (owners, administrators) changes or
 * deletes it. Every change commits with its audit row.
 */
import { forbidden, invalidRequest, LogServiceError, notFound } from '../core/errors.js';
import { canManageGroup, canManageProject, canSeeGroup, canSeeProject, seesNothing, visibilityOf } from '../auth/rbac.js';
import { recordAudit } from '../audit/audit.js';
import { CORRELATION_FIELDS } from '../ingest/entry-validation.js';
import { readLogFilter, type LogFilter, type LogScope } from '../logs/log-query-params.js';
import { requireLogScope } from '../logs/log-access.js';
import type { Storage, ReadOps } from '../storage/storage.js';
import type { SavedSearchRow } from '../storage/types-alerts.js';
import type { Page, RoleGrant } from '../storage/types-org.js';

/** The signed-in caller (the same shape as the organisation's `Actor`). */
export interface AlertActor {
  userId: number;
  grants: RoleGrant[];
}

/**
 * The longest query string a saved search keeps, in characters. A query
 * combines at most 16 exact-match filters and a text query; 4,096
 * characters hold that with long values, and bound what every alert rule
 * on the search re-reads at each start.
 */
export const MAX_SAVED_QUERY_LENGTH = 4096;

/** Parameters of `GET /v1/logs` a saved search keeps: its filters, not its scope or page. */
const FILTER_PARAMETERS: ReadonlySet<string> = new Set(['level', 'from', 'to', 'q', 'category', 'logger', ...CORRELATION_FIELDS]);
const CONTEXT_PREFIX = 'context.';

/**
 * Reads a saved query string into the log filter it stands for, refusing
 * (400 `{field: query, reason: invalid}`) anything `GET /v1/logs` would
 * refuse and any parameter that is not a filter (scope, page, cursor).
 */
export function parseSavedQuery(query: string): LogFilter {
  const params = new URLSearchParams(query);
  for (const key of params.keys()) {
    if (!FILTER_PARAMETERS.has(key) && !key.startsWith(CONTEXT_PREFIX)) {
      throw invalidRequest(
        `'${key}' is not a filter of GET /v1/logs; a saved query holds filters only (its scope is project_id or group_id).`,
        'query',
        'invalid',
      );
    }
  }
  try {
    return readLogFilter(params);
  } catch (err) {
    if (err instanceof LogServiceError && err.code === 'invalid_request') throw invalidRequest(err.message, 'query', 'invalid');
    throw err;
  }
}

/** Whether the caller may read the search's scope (and so see the search). */
export function maySeeSavedSearch(grants: readonly RoleGrant[], row: Pick<SavedSearchRow, 'projectId' | 'ownerGroupId'>): boolean {
  return row.projectId !== null ? canSeeProject(grants, { id: row.projectId, groupId: row.ownerGroupId }) : canSeeGroup(grants, row.ownerGroupId);
}

/** Its author, or whoever manages its project or group. */
export function mayChangeSavedSearch(actor: AlertActor, row: SavedSearchRow): boolean {
  if (row.authorUserId === actor.userId) return true;
  return row.projectId !== null
    ? canManageProject(actor.grants, { id: row.projectId, groupId: row.ownerGroupId })
    : canManageGroup(actor.grants, row.ownerGroupId);
}

/** 404 for a search that does not exist or whose scope the caller cannot read; 403 for `change` when not theirs to change. */
export async function requireSavedSearch(db: ReadOps, actor: AlertActor, id: number, access: 'see' | 'change'): Promise<SavedSearchRow> {
  const row = await db.getSavedSearch(id);
  if (!row || !maySeeSavedSearch(actor.grants, row)) throw notFound('No such saved search.');
  if (access === 'change' && !mayChangeSavedSearch(actor, row))
    throw forbidden('Only its author, owners of its group and administrators may change a saved search.');
  return row;
}

/** The scope of a new search: 404 unknown, 403 not readable (or its project blocked), as `GET /v1/logs`. */
export async function requireSearchScope(db: ReadOps, actor: AlertActor, scope: LogScope): Promise<void> {
  // Saved searches are not reachable with an access key: the caller reads with their own grants.
  await requireLogScope(db, { grants: actor.grants, accessKey: null }, scope);
}

export interface NewSavedSearchInput {
  name: string;
  scope: LogScope;
  query: string;
}

/** Inserts the search and its `saved_search.created` row. The caller checked the scope and the query. */
export function createSavedSearch(storage: Storage, actor: AlertActor, input: NewSavedSearchInput, now: number): Promise<SavedSearchRow> {
  const projectId = input.scope.kind === 'project' ? input.scope.projectId : null;
  const groupId = input.scope.kind === 'group' ? input.scope.groupId : null;
  return storage.write(async (tx) => {
    const row = await tx.insertSavedSearch({ name: input.name, projectId, groupId, query: input.query, authorUserId: actor.userId, createdAt: now });
    await recordAudit(
      tx,
      {
        actorUserId: actor.userId,
        action: 'saved_search.created',
        targetType: 'saved_search',
        targetId: row.id,
        metadata: { name: row.name, project_id: projectId, group_id: groupId, query: row.query },
      },
      now,
    );
    return row;
  });
}

/** Searches whose scope the caller may read, newest first. */
export async function listVisibleSavedSearches(
  storage: Storage,
  actor: AlertActor,
  filter: Page & { projectId?: number; groupId?: number },
): Promise<SavedSearchRow[]> {
  const visibility = visibilityOf(actor.grants);
  if (seesNothing(visibility)) return [];
  return storage.listSavedSearches({ ...filter, visibility });
}

/**
 * Applies a PATCH; `saved_search.updated` names the fields that changed.
 * One that changes nothing writes nothing. 404 when a concurrent delete won.
 */
export function updateSavedSearch(
  storage: Storage,
  actor: AlertActor,
  id: number,
  change: { name?: string; query?: string },
  now: number,
): Promise<SavedSearchRow> {
  return storage.write(async (tx) => {
    const current = await tx.getSavedSearch(id);
    if (!current) throw notFound('No such saved search.');
    const changes: { name?: string; query?: string } = {};
    if (change.name !== undefined && change.name !== current.name) changes.name = change.name;
    if (change.query !== undefined && change.query !== current.query) changes.query = change.query;
    const changed = Object.keys(changes);
    if (changed.length === 0) return current;
    const updated = await tx.updateSavedSearch(id, { ...changes, updatedAt: now });
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'saved_search.updated', targetType: 'saved_search', targetId: id, metadata: { changed_fields: changed.sort() } },
      now,
    );
    return updated;
  });
}

/** Deletes the search and what is built on it, with `saved_search.deleted`; 404 when a concurrent delete won. */
export function deleteSavedSearch(storage: Storage, actor: AlertActor, row: SavedSearchRow, now: number): Promise<void> {
  return storage.write(async (tx) => {
    if (!(await tx.deleteSavedSearch(row.id))) throw notFound('No such saved search.');
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'saved_search.deleted', targetType: 'saved_search', targetId: row.id, metadata: { name: row.name } },
      now,
    );
  });
}
