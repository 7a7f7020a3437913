/**
 * The log statements of the SQLite backend. Batches travel as one JSON
 * parameter read with json_each (the statement text never changes and the
 * event loop only runs JSON.stringify); optional filters bind neutral
 * bounds (level ≥ 0, ts within ±2^53) so each statement has one text.
 * Sealed blocks and their filters are read and written by sealing.ts.
 */

const LOG_COLUMNS = `id, project_id, received_at, body`;

// ---- ingestion ---------------------------------------------------------------

/**
 * The projects' quotas and counters, the last id AUTOINCREMENT handed
 * out (ids are never reused, even after deletes), and for presealed
 * blocks each project's tail count and newest dictionary, in one statement. Read
 * inside the write transaction: the writer lock makes both exact.
 * Params: JSON array of project ids.
 */
export const SELECT_PROJECT_USAGE = `SELECT id, max_entries, max_bytes, entry_count, total_bytes,
    (SELECT seq FROM sqlite_sequence WHERE name = 'log_entries') AS seq,
    COALESCE((SELECT entries FROM log_tails WHERE project_id = projects.id), 0) AS tail_entries,
    (SELECT MAX(id) FROM log_dictionaries WHERE project_id = projects.id) AS dictionary_id
  FROM projects WHERE id IN (SELECT value FROM json_each(?1))`;

/**
 * After presealed blocks took ids no tail row did (log-index/presealed.ts):
 * AUTOINCREMENT's counter moved past them, so no id is ever handed out
 * twice. Params: the last id taken.
 */
export const ADVANCE_LOG_SEQUENCE = `UPDATE sqlite_sequence SET seq = MAX(seq, ?1) WHERE name = 'log_entries'`;
export const START_LOG_SEQUENCE = `INSERT INTO sqlite_sequence (name, seq)
  SELECT 'log_entries', ?1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'log_entries')`;

/**
 * Params: first id, UTF-8 JSON rows `[project_id, received_at, ts, level,
 * bytes, body]` as a blob (encoded where the batch was prepared; CAST reads
 * it as text, since json_each takes a blob for JSONB). Ids are assigned
 * explicitly (first id + index): the transaction holds the only write
 * lock, so they are the next ones.
 */
export const INSERT_LOG_ENTRIES = `INSERT INTO log_entries (id, project_id, received_at, ts, level, bytes, body)
  SELECT ?1 + key, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 FROM json_each(CAST(?2 AS TEXT))`;

/**
 * Adds a batch's entries to the projects' tail counts (sealing.ts); a
 * project's oldest tail entry is found on (project_id, received_at) when
 * its tail was empty. Params: JSON array of `[project_id, entries]`.
 */
export const ADD_LOG_TAILS = `INSERT INTO log_tails (project_id, entries, oldest_received_at)
  SELECT value ->> 0, value ->> 1, (SELECT MIN(received_at) FROM log_entries INDEXED BY log_entries_received WHERE project_id = value ->> 0)
  FROM json_each(?1) WHERE true
  ON CONFLICT (project_id) DO UPDATE SET entries = entries + excluded.entries,
    oldest_received_at = COALESCE(log_tails.oldest_received_at, excluded.oldest_received_at)`;

/** Params: JSON array of `[project_id, entries, bytes]` to add. */
export const ADD_PROJECT_USAGE = `UPDATE projects
  SET entry_count = entry_count + (d.value ->> 1), total_bytes = total_bytes + (d.value ->> 2)
  FROM json_each(?1) AS d WHERE projects.id = d.value ->> 0`;

/**
 * Adds a batch's counts to the rollup (log-rollup.ts). Params: JSON array
 * of `[project_id, span, start, level, n]`, each key once. (`WHERE true`
 * tells SQLite's parser the ON CONFLICT is the upsert's.)
 */
export const ADD_LOG_ROLLUP = `INSERT INTO log_rollup (project_id, span, start, level, n)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?1) WHERE true
  ON CONFLICT (project_id, span, start, level) DO UPDATE SET n = n + excluded.n`;

// ---- queries -------------------------------------------------------------------

export const SELECT_LAST_LOG_ID = `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'log_entries'), 0) AS id`;

/** The largest stored id of the projects in JSON array ?1: one probe of (project_id, id) each. */
export const SELECT_LAST_LOG_ID_OF_PROJECTS = `SELECT COALESCE(MAX(MAX(
    COALESCE((SELECT MAX(id) FROM log_entries WHERE project_id = p.value), 0),
    COALESCE((SELECT MAX(last_id) FROM log_sealed INDEXED BY log_sealed_project WHERE project_id = p.value), 0))), 0) AS id
  FROM json_each(?1) AS p`;

/**
 * One project newest first along (project_id, id), level and time checked
 * per row. Params: project, beforeId, minLevel, from, to, limit.
 */
export const QUERY_PROJECT_LOGS = `SELECT ${LOG_COLUMNS} FROM log_entries INDEXED BY log_entries_project
  WHERE project_id = ?1 AND id < ?2 AND level >= ?3 AND ts >= ?4 AND ts <= ?5
  ORDER BY id DESC LIMIT ?6`;

/** How many entries of a project fall in a time range, counting no further than a cap. Params: project, from, to, cap. */
export const COUNT_PROJECT_LOGS_IN_RANGE = `SELECT COUNT(*) AS n FROM (
  SELECT 1 FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?3 LIMIT ?4)`;

/**
 * A narrow time range: the (few) ids in range from (project_id, ts), then
 * rows newest first. Params: project, from, to, beforeId, minLevel, needle,
 * needle, limit (-1: all).
 */
export const QUERY_PROJECT_LOGS_IN_RANGE = `SELECT ${LOG_COLUMNS} FROM log_entries
  WHERE id IN (SELECT id FROM log_entries INDEXED BY log_entries_project_ts
               WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?3 AND id < ?4)
    AND level >= ?5 AND instr(body, ?6) > 0 AND instr(body, ?7) > 0
  ORDER BY id DESC LIMIT ?8`;

/** The project's newest entry below an id: one step along (project_id, id). Params: project, beforeId. */
export const NEWEST_PROJECT_LOG_TIME = `SELECT id, ts FROM log_entries INDEXED BY log_entries_project
  WHERE project_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT 1`;

/** The newest id of a (narrow) time range, index only. Params: project, from, to, beforeId. */
export const NEWEST_PROJECT_LOG_ID_IN_RANGE = `SELECT MAX(id) AS hi FROM log_entries INDEXED BY log_entries_project_ts
  WHERE project_id = ?1 AND ts >= ?2 AND ts <= ?3 AND id < ?4`;

/**
 * One project oldest first above `afterId`, each row with `seq`, the last
 * id committed in the statement's snapshot (one row of NULL entry columns
 * when no entry matches, so `seq` is always there).
 * Params: project, afterId, minLevel, from, to, limit.
 */
export const QUERY_PROJECT_LOGS_ASC = `SELECT s.seq, e.id, e.project_id, e.received_at, e.body
  FROM (SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'log_entries'), 0) AS seq) AS s
  LEFT JOIN (SELECT ${LOG_COLUMNS} FROM log_entries INDEXED BY log_entries_project
             WHERE project_id = ?1 AND id > ?2 AND level >= ?3 AND ts >= ?4 AND ts <= ?5
             ORDER BY id ASC LIMIT ?6) AS e
  ORDER BY e.id`;
