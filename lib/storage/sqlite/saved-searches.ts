/**
 * Saved searches in SQLite: the statements and the verbs `SqliteReads` and
 * `SqliteWrites` delegate to, each on the executor it is handed.
 */
import * as Columns from '../schema/row-columns.js';
import type { NewSavedSearch, SavedSearchChanges, SavedSearchFilter, SavedSearchRow } from '../types-alerts.js';
import { NO_UPPER_ID } from '../types-logs.js';
import type { SqlExecutor } from './connection.js';
import { change, orNull, visibilityParams } from './params.js';
import type { SqlRow } from './row-mappers.js';

export const SELECT_SAVED_SEARCH = `SELECT ${Columns.SAVED_SEARCH} FROM saved_searches WHERE id = ?`;
/** Params: project (null for any), project, group (null for any), group, all (0/1), group ids, project ids (JSON), before id, limit. */
export const LIST_SAVED_SEARCHES = `SELECT ${Columns.SAVED_SEARCH} FROM saved_searches
  WHERE (? IS NULL OR project_id = ?)
    AND (? IS NULL OR group_id = ?)
    AND (? = 1
         OR owner_group_id IN (SELECT value FROM json_each(?))
         OR project_id IN (SELECT value FROM json_each(?)))
    AND id < ?
  ORDER BY id DESC LIMIT ?`;
export const INSERT_SAVED_SEARCH = `INSERT INTO saved_searches
  (name, project_id, group_id, owner_group_id, query, author_user_id, created_at, updated_at)
  VALUES (?, ?, ?, COALESCE(?, (SELECT group_id FROM projects WHERE id = ?)), ?, ?, ?, ?)
  RETURNING ${Columns.SAVED_SEARCH}`;
/** (present, value) pairs for name and query, then updated_at and the id. */
export const UPDATE_SAVED_SEARCH = `UPDATE saved_searches SET
  name = CASE WHEN ? THEN ? ELSE name END,
  query = CASE WHEN ? THEN ? ELSE query END,
  updated_at = ?
  WHERE id = ?
  RETURNING ${Columns.SAVED_SEARCH}`;
export const DELETE_SAVED_SEARCH = `DELETE FROM saved_searches WHERE id = ?`;

const toSavedSearch = (row: SqlRow): SavedSearchRow => row as unknown as SavedSearchRow;

export async function getSavedSearch(db: SqlExecutor, id: number): Promise<SavedSearchRow | null> {
  const row = await db.get(SELECT_SAVED_SEARCH, [id]);
  return row ? toSavedSearch(row) : null;
}

export async function listSavedSearches(db: SqlExecutor, filter: SavedSearchFilter): Promise<SavedSearchRow[]> {
  const v = visibilityParams(filter.visibility);
  const projectId = orNull(filter.projectId);
  const groupId = orNull(filter.groupId);
  const rows = await db.all(LIST_SAVED_SEARCHES, [
    projectId,
    projectId,
    groupId,
    groupId,
    v.all,
    v.groupIds,
    v.projectIds,
    filter.beforeId ?? NO_UPPER_ID,
    filter.limit,
  ]);
  return rows.map(toSavedSearch);
}

export async function insertSavedSearch(db: SqlExecutor, search: NewSavedSearch): Promise<SavedSearchRow> {
  const row = await db.get(INSERT_SAVED_SEARCH, [
    search.name,
    search.projectId,
    search.groupId,
    search.groupId,
    search.projectId,
    search.query,
    search.authorUserId,
    search.createdAt,
    search.createdAt,
  ]);
  if (!row) throw new Error('inserted saved search not returned');
  return toSavedSearch(row);
}

export async function updateSavedSearch(db: SqlExecutor, id: number, changes: SavedSearchChanges): Promise<SavedSearchRow> {
  const row = await db.get(UPDATE_SAVED_SEARCH, [
    ...change(changes.name !== undefined, changes.name),
    ...change(changes.query !== undefined, changes.query),
    changes.updatedAt,
    id,
  ]);
  if (!row) throw new Error(`saved search ${id} not found`);
  return toSavedSearch(row);
}

export async function deleteSavedSearch(db: SqlExecutor, id: number): Promise<boolean> {
  return (await db.run(DELETE_SAVED_SEARCH, [id])).changes === 1;
}
