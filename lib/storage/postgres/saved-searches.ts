/**
 * Saved searches in PostgreSQL: the statements and the verbs
 * `PostgresReads` and `PostgresWrites` delegate to, each on the executor it
 * is handed (the pool or the transaction).
 */
import * as Columns from '../schema/row-columns.js';
import type { NewSavedSearch, SavedSearchChanges, SavedSearchFilter, SavedSearchRow } from '../types-alerts.js';
import type { SqlExecutor } from './connection.js';

export const SELECT_SAVED_SEARCH = `SELECT ${Columns.SAVED_SEARCH} FROM saved_searches WHERE id = $1`;
export const LIST_SAVED_SEARCHES = `SELECT ${Columns.SAVED_SEARCH} FROM saved_searches
  WHERE ($(all) OR owner_group_id = ANY($(groupIds)::bigint[]) OR project_id = ANY($(projectIds)::bigint[]))
    AND ($(projectId)::bigint IS NULL OR project_id = $(projectId))
    AND ($(groupId)::bigint IS NULL OR group_id = $(groupId))
    AND ($(beforeId)::bigint IS NULL OR id < $(beforeId))
  ORDER BY id DESC LIMIT $(limit)`;
export const INSERT_SAVED_SEARCH = `INSERT INTO saved_searches
  (name, project_id, group_id, owner_group_id, query, author_user_id, created_at, updated_at)
  VALUES ($(name), $(projectId), $(groupId),
          COALESCE($(groupId)::bigint, (SELECT group_id FROM projects WHERE id = $(projectId)::bigint)),
          $(query), $(authorUserId), $(createdAt), $(createdAt))
  RETURNING ${Columns.SAVED_SEARCH}`;
export const UPDATE_SAVED_SEARCH = `UPDATE saved_searches SET
    name = CASE WHEN $(setName) THEN $(name)::text ELSE name END,
    query = CASE WHEN $(setQuery) THEN $(query)::text ELSE query END,
    updated_at = $(updatedAt)
  WHERE id = $(id)
  RETURNING ${Columns.SAVED_SEARCH}`;
export const DELETE_SAVED_SEARCH = `DELETE FROM saved_searches WHERE id = $1`;

export function getSavedSearch(db: SqlExecutor, id: number): Promise<SavedSearchRow | null> {
  return db.oneOrNone<SavedSearchRow>(SELECT_SAVED_SEARCH, [id]);
}

export function listSavedSearches(db: SqlExecutor, filter: SavedSearchFilter): Promise<SavedSearchRow[]> {
  const v = filter.visibility;
  return db.any<SavedSearchRow>(LIST_SAVED_SEARCHES, {
    all: v.all,
    groupIds: v.all ? [] : v.groupIds,
    projectIds: v.all ? [] : v.projectIds,
    projectId: filter.projectId ?? null,
    groupId: filter.groupId ?? null,
    beforeId: filter.beforeId ?? null,
    limit: filter.limit,
  });
}

export function insertSavedSearch(db: SqlExecutor, search: NewSavedSearch): Promise<SavedSearchRow> {
  return db.one<SavedSearchRow>(INSERT_SAVED_SEARCH, search);
}

export function updateSavedSearch(db: SqlExecutor, id: number, changes: SavedSearchChanges): Promise<SavedSearchRow> {
  return db.one<SavedSearchRow>(UPDATE_SAVED_SEARCH, {
    id,
    setName: changes.name !== undefined,
    name: changes.name ?? null,
    setQuery: changes.query !== undefined,
    query: changes.query ?? null,
    updatedAt: changes.updatedAt,
  });
}

export async function deleteSavedSearch(db: SqlExecutor, id: number): Promise<boolean> {
  return (await db.result(DELETE_SAVED_SEARCH, [id])).rowCount === 1;
}
