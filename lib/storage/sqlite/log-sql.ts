/**
 * The log statements of the SQLite backend. Batches travel as one JSON
 * parameter read with json_each (the statement text never changes and the
 * event loop only runs JSON.stringify); optional filters bind neutral
 * bounds (level ≥ 0, ts within ±2^53) so each statement has one text.
 *
 * The search index is the FTS5 table `log_terms` (rowid = log_entries.id).
 * Its text per entry is the entry's terms plus a project term, so a MATCH
 * narrows to the project inside FTS5 instead of row by row.
 */

const LOG_COLUMNS = `id, project_id, received_at, body`;

// ---- ingestion ---------------------------------------------------------------

/** Params: JSON array of project ids. Read inside the write transaction (the writer lock makes it exact). */
export const SELECT_PROJECT_USAGE = `SELECT id, max_entries, max_bytes, entry_count, total_bytes
  FROM projects WHERE id IN (SELECT value FROM json_each(?1))`;

/** The last id AUTOINCREMENT handed out (ids are never reused, even after deletes). */
export const SELECT_LOG_SEQUENCE = `SELECT seq FROM sqlite_sequence WHERE name = 'log_entries'`;

/**
 * Params: first id, JSON array of rows `[project_id, received_at, ts, level,
 * bytes, body, fts_text]`. Ids are assigned explicitly (first id + index):
 * the transaction holds the only write lock, so they are the next ones.
 */
export const INSERT_LOG_ENTRIES = `INSERT INTO log_entries (id, project_id, received_at, ts, level, bytes, body)
  SELECT ?1 + key, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 FROM json_each(?2)`;

/** Params: first id, the same JSON rows. */
export const INSERT_LOG_TERMS = `INSERT INTO log_terms (rowid, terms) SELECT ?1 + key, value ->> 6 FROM json_each(?2)`;

/** Params: JSON array of `[project_id, entries, bytes]` to add. */
export const ADD_PROJECT_USAGE = `UPDATE projects
  SET entry_count = entry_count + (d.value ->> 1), total_bytes = total_bytes + (d.value ->> 2)
  FROM json_each(?1) AS d WHERE projects.id = d.value ->> 0`;

// ---- queries -------------------------------------------------------------------

export const SELECT_LAST_LOG_ID = `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'log_entries'), 0) AS id`;

/**
 * Entries matching an FTS5 expression, newest first. Written as a join
 * driven by the FTS rowid (CROSS JOIN fixes the loop order): FTS5 walks its
 * doclists backwards, within the rowid window, and each hit costs one
 * primary-key lookup; the `id IN (SELECT rowid … MATCH)` form is 40× slower
 * here. Params: match, lowest id, beforeId, JSON project ids, minLevel,
 * from, to, limit.
 */
export const QUERY_LOGS_FTS_DESC = `SELECT e.id, e.project_id, e.received_at, e.body
  FROM log_terms CROSS JOIN log_entries AS e ON e.id = log_terms.rowid
  WHERE log_terms MATCH ?1 AND log_terms.rowid >= ?2 AND log_terms.rowid < ?3
    AND e.project_id IN (SELECT value FROM json_each(?4))
    AND e.level >= ?5 AND e.ts >= ?6 AND e.ts <= ?7
  ORDER BY log_terms.rowid DESC LIMIT ?8`;

/** The same oldest first, above `afterId`. Params: match, afterId, JSON project ids, minLevel, from, to, limit. */
export const QUERY_LOGS_FTS_ASC = `SELECT e.id, e.project_id, e.received_at, e.body
  FROM log_terms CROSS JOIN log_entries AS e ON e.id = log_terms.rowid
  WHERE log_terms MATCH ?1 AND log_terms.rowid > ?2
    AND e.project_id IN (SELECT value FROM json_each(?3))
    AND e.level >= ?4 AND e.ts >= ?5 AND e.ts <= ?6
  ORDER BY log_terms.rowid ASC LIMIT ?7`;

/**
 * One project newest first along (project_id, id), level and time checked
 * per row. Params: project, beforeId, minLevel, from, to, limit.
 */
export const QUERY_PROJECT_LOGS = `SELECT ${LOG_COLUMNS} FROM log_entries INDEXED BY log_entries_project
  WHERE project_id = ?1 AND id < ?2 AND level >= ?3 AND ts >= ?4 AND ts <= ?5
  ORDER BY id DESC LIMIT ?6`;

/** One project and one level, newest first along (project_id, level, id). Params: project, level, beforeId, from, to, limit. */
export const QUERY_PROJECT_LEVEL_LOGS = `SELECT ${LOG_COLUMNS} FROM log_entries INDEXED BY log_entries_project_level
  WHERE project_id = ?1 AND level = ?2 AND id < ?3 AND ts >= ?4 AND ts <= ?5
  ORDER BY id DESC LIMIT ?6`;

/** How many entries of a project fall in a time range, counting no further than a cap. Params: project, from, to, cap. */
export const COUNT_PROJECT_LOGS_IN_RANGE = `SELECT COUNT(*) AS n FROM (
  SELECT 1 FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?3 LIMIT ?4)`;

/**
 * A narrow time range: the (few) ids in range from (project_id, ts), then
 * rows newest first. Params: project, from, to, beforeId, minLevel, limit.
 */
export const QUERY_PROJECT_LOGS_IN_RANGE = `SELECT ${LOG_COLUMNS} FROM log_entries
  WHERE id IN (SELECT id FROM log_entries INDEXED BY log_entries_project_ts
               WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?3 AND id < ?4)
    AND level >= ?5
  ORDER BY id DESC LIMIT ?6`;

/** The id window of a (narrow) time range, index only. Params: project, from, to, beforeId. */
export const PROJECT_LOG_IDS_IN_RANGE = `SELECT MIN(id) AS lo, MAX(id) AS hi FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?3 AND id < ?4`;

/** One project oldest first above `afterId`. Params: project, afterId, minLevel, from, to, limit. */
export const QUERY_PROJECT_LOGS_ASC = `SELECT ${LOG_COLUMNS} FROM log_entries INDEXED BY log_entries_project
  WHERE project_id = ?1 AND id > ?2 AND level >= ?3 AND ts >= ?4 AND ts <= ?5
  ORDER BY id ASC LIMIT ?6`;
