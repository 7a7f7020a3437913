/**
 * The log statements of the PostgreSQL backend over the tail (`log_entries`;
 * values through pg-promise's formatter, like `sql.ts`). A batch travels as
 * JSON array parameters (encoded where it was prepared,
 * storage/log-index/encoded-entries.ts) expanded by json_array_elements.
 * Sealed blocks and their filters are read and written by sealing.ts.
 */

const LOG_COLUMNS = `id, project_id AS "projectId", received_at AS "receivedAt", body`;

// ---- ingestion ---------------------------------------------------------------

/**
 * Reads and locks the projects' counters until the transaction ends, in id
 * order so concurrent ingesters (in this or another process) never deadlock:
 * this row lock is what makes the quotas exact.
 */
export const LOCK_PROJECT_USAGE = `SELECT id, max_entries AS "maxEntries", max_bytes AS "maxBytes",
    entry_count AS "entryCount", total_bytes AS "totalBytes"
  FROM projects WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`;

/**
 * $1 … $6: the columns project_id, received_at, ts, level, bytes and body
 * as PostgreSQL binary arrays (log-index/column-arrays.ts), bound as bytes:
 * node-postgres sends a Buffer parameter in binary format, so the server
 * takes each element as it is, with no text to parse (the rows' JSON, read
 * with `jsonb_array_elements`, cost about as much as the insert itself).
 * Rows are produced in array order, so the identity values they draw
 * ascend in that order; the caller sorts the returned ids to match.
 */
export const INSERT_LOG_ENTRIES = `INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body)
  SELECT p, r, t, l, b, body
  FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[], $5::integer[], $6::text[]) WITH ORDINALITY AS u(p, r, t, l, b, body, n)
  ORDER BY u.n
  RETURNING id`;

/**
 * $1: project ids, $2: entries to add, $3: bytes to add, $4: the
 * project's first tail id in the batch, $5: entries the batch put in the
 * tail (parallel arrays; presealed blocks count in $2 and $3, not in $5).
 * Adds to each project's usage and to its tail's count (what the sealer
 * finds work by), after the project rows are locked: sealing and
 * retention take a tail's row only after any project row they lock, so
 * the order never closes a cycle. Answers each tail's project and count
 * after the batch (of projects whose tail it added to).
 */
export const ADD_PROJECT_USAGE = `WITH d AS (
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS d(id, n, b, first, t)
  ), usage AS (
    UPDATE projects AS p SET entry_count = p.entry_count + d.n, total_bytes = p.total_bytes + d.b
    FROM d WHERE p.id = d.id
    RETURNING 1
  )
  INSERT INTO log_tails AS t (project_id, entries, oldest_received_at)
    SELECT d.id, d.t, e.received_at FROM d JOIN log_entries AS e ON e.project_id = d.id AND e.id = d.first WHERE d.t > 0 ORDER BY d.id
  ON CONFLICT (project_id) DO UPDATE
    SET entries = t.entries + excluded.entries, oldest_received_at = COALESCE(t.oldest_received_at, excluded.oldest_received_at)
  RETURNING t.project_id AS "projectId", t.entries`;

/**
 * Adds a batch's counts to the rollup (log-rollup.ts). $1 projects, $2
 * spans, $3 starts, $4 levels, $5 counts (parallel arrays, each key once:
 * a key twice in one upsert is an error here).
 */
export const ADD_LOG_ROLLUP = `INSERT INTO log_rollup AS r (project_id, span, start, level, n)
  SELECT * FROM unnest($1::bigint[], $2::integer[], $3::bigint[], $4::smallint[], $5::bigint[])
  ON CONFLICT (project_id, span, start, level) DO UPDATE SET n = r.n + excluded.n`;

// ---- queries -------------------------------------------------------------------

/**
 * The largest visible id over every project, tail or sealed (sealing may
 * empty a tail): one backward probe of each table's plain id index.
 */
const MAX_VISIBLE_ID = `GREATEST((SELECT COALESCE(MAX(id), 0) FROM log_entries), (SELECT COALESCE(MAX(last_id), 0) FROM log_sealed))`;

/** A project's largest visible id, tail or sealed, given the project as `pid`: a backward probe of each primary key. */
const MAX_PROJECT_ID = (pid: string) =>
  `GREATEST((SELECT COALESCE(MAX(id), 0) FROM log_entries WHERE project_id = ${pid}), (SELECT COALESCE(MAX(last_id), 0) FROM log_sealed WHERE project_id = ${pid}))`;

export const SELECT_LAST_LOG_ID = `SELECT ${MAX_VISIBLE_ID} AS id`;

/** The largest visible id of the projects $1. */
export const SELECT_LAST_LOG_ID_OF_PROJECTS = `SELECT COALESCE(MAX(${MAX_PROJECT_ID('p.id')}), 0) AS id FROM unnest($1::bigint[]) AS p(id)`;

/**
 * Row filters of the walks below, each ANDed only when its filter is given:
 * a neutral bound such as `ts >= -2^53` is not free here, the planner takes
 * it for a real condition and may read the whole project through a bitmap
 * and sort it instead of walking (project_id, id). Time bounds are written
 * so no index serves them (`+ 0`): a range holding few entries is read
 * through (project_id, ts) by QUERY_PROJECT_LOGS_IN_RANGE instead.
 */
export const WALK_CONDITIONS = {
  minLevel: 'level >= $(minLevel)',
  from: '(ts + 0) >= $(from)',
  to: '(ts + 0) <= $(to)',
} as const;

/**
 * Several projects, each walked along its own (project_id, id) index
 * (LATERAL), the pages merged: newest first below beforeId, or oldest
 * first above afterId. `conditions` are WALK_CONDITIONS fragments.
 * Params: projects, beforeId or afterId, limit + the fragments'.
 */
export function selectProjectsLogs(direction: 'newest' | 'oldest', conditions: readonly string[]): string {
  const [bound, order] = direction === 'newest' ? ['id < $(beforeId)', 'DESC'] : ['id > $(afterId)', 'ASC'];
  return `SELECT e.* FROM unnest($(projects)::bigint[]) AS p(id)
  CROSS JOIN LATERAL (
    SELECT ${LOG_COLUMNS} FROM log_entries
    WHERE project_id = p.id AND ${[bound, ...conditions].join(' AND ')}
    ORDER BY id ${order} LIMIT $(limit)) AS e
  ORDER BY e.id ${order} LIMIT $(limit)`;
}

/**
 * Entries of a project in a time range, counted up to a cap (index only).
 * The ORDER BY of the index's own order keeps PostgreSQL on it: for a
 * range it expects to hold much of the table it would otherwise scan the
 * table until the cap's worth of the project's rows turned up, about three
 * times slower. Params: $1 project, $2 from,
 * $3 to, $4 cap.
 */
export const COUNT_PROJECT_LOGS_IN_RANGE = `SELECT COUNT(*)::int AS n FROM (
  SELECT 1 FROM log_entries WHERE project_id = $1 AND ts >= $2 AND ts <= $3 ORDER BY project_id, ts LIMIT $4) AS s`;

/** The project's newest entry below an id: one step along (project_id, id). Params: project, beforeId. */
export const NEWEST_PROJECT_LOG_TIME = `SELECT id, ts FROM log_entries
  WHERE project_id = $1 AND id < $2 ORDER BY id DESC LIMIT 1`;

/**
 * The newest id in a time range, from (project_id, ts) INCLUDE (id), index
 * only. `id + 0` keeps PostgreSQL from turning MAX(id) into a backward walk
 * of the primary key (which, for a range far in the past, steps over every
 * newer row). Params: project, from, to, beforeId.
 */
export const NEWEST_PROJECT_LOG_ID_IN_RANGE = `SELECT MAX(id + 0) AS id FROM log_entries
  WHERE project_id = $1 AND ts >= $2 AND ts <= $3 AND id < $4`;

/**
 * A narrow time range: its few ids first (MATERIALIZED keeps the planner on
 * (project_id, ts) instead of walking the primary key backwards through
 * everything newer), then the other conditions on those rows only.
 * Params: project, from, to, beforeId, minLevel, needle1, needle2, limit
 * (null: all).
 */
export const QUERY_PROJECT_LOGS_IN_RANGE = `WITH in_range AS MATERIALIZED (
    SELECT id FROM log_entries WHERE project_id = $(project) AND ts >= $(from) AND ts <= $(to) AND id < $(beforeId))
  SELECT ${LOG_COLUMNS} FROM log_entries
  WHERE project_id = $(project) AND id IN (SELECT id FROM in_range) AND level >= $(minLevel)
    AND strpos(body, $(needle1)) > 0 AND strpos(body, $(needle2)) > 0
  ORDER BY id DESC LIMIT $(limit)`;

// ---- live-stream settling (see lastLogId in log-entries.ts) ------------------

/**
 * The advisory-lock class of ingestion marks: key = class << 32 | project id,
 * so pg_locks shows classid = this class and objid = the project id.
 */
export const INGEST_MARK_CLASS = 1818978151;

/**
 * The tag of ingestion floors: key = tag << 53 | floor, where the floor is
 * the identity sequence's last value when the transaction marked itself
 * (every id it draws is above it). Ids stay below 2^53, so pg_locks shows
 * classid = tag << 21 | floor >> 32 and objid = the floor's low 32 bits; no
 * other advisory key of logkeep has these high bits.
 */
export const INGEST_FLOOR_TAG = 701;

/**
 * $1: mark class, $2: project ids, $3: floor tag. Takes a shared mark per
 * project and the transaction's floor (shared, so ingesters never wait for
 * each other here) and answers the backend's pid. count(*) runs every
 * lock of the union. Also answers each project's largest id ("lastIds",
 * a JSON object by project id; 0: none): one backward probe of
 * (project_id, id) each; and, for presealed blocks (log-index/presealed.ts),
 * the newest dictionary id of each project whose tail is empty
 * ("emptyTails"). Its snapshot is taken after the project rows were
 * locked, so no other ingestion of these projects can change either.
 */
export const MARK_INGESTING = `SELECT pg_backend_pid() AS pid, count(*) AS locks,
    (SELECT json_object_agg(p.id, ${MAX_PROJECT_ID('p.id')})
      FROM unnest($2::bigint[]) AS p(id)) AS "lastIds",
    (SELECT json_object_agg(p.id, d.id) FROM unnest($2::bigint[]) AS p(id)
      CROSS JOIN LATERAL (SELECT max(id) AS id FROM log_dictionaries WHERE project_id = p.id) AS d
      WHERE d.id IS NOT NULL AND COALESCE((SELECT entries FROM log_tails WHERE project_id = p.id), 0) = 0) AS "emptyTails"
  FROM (
    SELECT pg_advisory_xact_lock_shared(($1::bigint << 32) | p.id) FROM unnest($2::bigint[]) AS p(id)
    UNION ALL
    SELECT pg_advisory_xact_lock_shared(($3::bigint << 53)
      + COALESCE(pg_sequence_last_value(pg_get_serial_sequence('log_entries', 'id')::regclass), 0))) AS l`;

/** Advisory locks held in this database (not session ones waiting: only granted). */
const ADVISORY = `SELECT virtualtransaction, pid, classid::bigint AS classid, objid::bigint AS objid FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 1
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/**
 * One snapshot: the largest visible id, and the transactions marked on
 * projects $2 right now ($1: mark class, $3: floor tag), each with its
 * backend pid and its floor (null when it holds none). The snapshot is
 * taken before pg_locks is read.
 */
export const SETTLE_POSITION = `WITH locks AS MATERIALIZED (${ADVISORY}),
  marked AS (SELECT DISTINCT virtualtransaction, pid FROM locks WHERE classid = $1::bigint AND objid = ANY($2::bigint[])),
  floors AS (SELECT virtualtransaction, min(((classid & 2097151) << 32) | objid) AS floor FROM locks
    WHERE classid >> 21 = $3::bigint GROUP BY virtualtransaction)
  SELECT ${MAX_VISIBLE_ID} AS horizon,
    (SELECT COALESCE(json_agg(json_build_object('vxid', m.virtualtransaction, 'pid', m.pid, 'floor', f.floor)), '[]'::json)
      FROM marked AS m LEFT JOIN floors AS f USING (virtualtransaction)) AS ingesting`;

/** Which of the transactions $2 still hold their marks ($1: mark class). */
export const STILL_INGESTING = `SELECT ARRAY(SELECT DISTINCT virtualtransaction FROM (${ADVISORY}) AS l
    WHERE classid = $1::bigint AND virtualtransaction = ANY($2::text[])) AS waiting`;
