/**
 * The log statements of the PostgreSQL backend (values through pg-promise's
 * formatter, like `sql.ts`). A batch travels as one JSON array parameter
 * expanded by json_to_recordset; search terms become a tsvector with
 * array_to_tsvector, so PostgreSQL never re-tokenizes logkeep's terms, and
 * queries match them with a tsquery built from quoted lexemes.
 */

const LOG_COLUMNS = `id, project_id AS "projectId", received_at AS "receivedAt", body`;

// ---- ingestion ---------------------------------------------------------------

/**
 * Reads and locks the projects' counters until the transaction ends, in id
 * order so concurrent ingesters (in this or another process) never deadlock:
 * this row lock is what makes the quotas exact (D23).
 */
export const LOCK_PROJECT_USAGE = `SELECT id, max_entries AS "maxEntries", max_bytes AS "maxBytes",
    entry_count AS "entryCount", total_bytes AS "totalBytes"
  FROM projects WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`;

/**
 * $1: JSON array of `{p, r, t, l, b, body, terms}` (terms space-separated).
 * Rows are produced in array order, so the identity values they draw
 * ascend in that order; the caller sorts the returned ids to match.
 */
export const INSERT_LOG_ENTRIES = `INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body, terms)
  SELECT x.p, x.r, x.t, x.l, x.b, x.body, array_to_tsvector(string_to_array(x.terms, ' '))
  FROM ROWS FROM (json_to_recordset($1::json) AS (p bigint, r bigint, t bigint, l smallint, b integer, body text, terms text))
    WITH ORDINALITY AS x(p, r, t, l, b, body, terms, n)
  ORDER BY x.n
  RETURNING id`;

/** $1: project ids, $2: entries to add, $3: bytes to add (parallel arrays). */
export const ADD_PROJECT_USAGE = `UPDATE projects AS p
  SET entry_count = p.entry_count + d.n, total_bytes = p.total_bytes + d.b
  FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS d(id, n, b)
  WHERE p.id = d.id`;

// ---- queries -------------------------------------------------------------------

export const SELECT_LAST_LOG_ID = `SELECT COALESCE(MAX(id), 0) AS id FROM log_entries`;

/**
 * The filter shared by every query. Params by name: project (one id),
 * minLevel, from, to, tsquery (null when no term: the planner folds the
 * branch away because pg-promise inlines the value).
 */
const FILTER = `level >= $(minLevel) AND ts >= $(from) AND ts <= $(to)
    AND ($(tsquery) IS NULL OR terms @@ $(tsquery)::tsquery)`;

/**
 * The conditions of `GET /v1/logs`, each a fixed fragment with named
 * parameters, ANDed only when its filter is given: a neutral bound such as
 * `ts >= -2^53` is not free here, the planner takes it for a real range and
 * may walk (project_id, ts) instead of (project_id, id).
 */
export const LOG_CONDITIONS = {
  project: 'project_id = $(project)',
  projects: 'project_id = ANY($(projects)::bigint[])',
  /** Inside the per-project LATERAL below. */
  eachProject: 'project_id = p.id',
  beforeId: 'id < $(beforeId)',
  minLevel: 'level >= $(minLevel)',
  from: 'ts >= $(from)',
  to: 'ts <= $(to)',
  tsquery: 'terms @@ $(tsquery)::tsquery',
  /**
   * The projects, written so no B-tree can serve it (`+ 0`): the GIN-only
   * step of a term query filters rows by project after the GIN bitmap.
   */
  anyProjectUnindexed: '(project_id + 0) = ANY($(projects)::bigint[])',
  /** Likewise, so no primary-key range bitmap is ANDed with the GIN bitmap. */
  beforeIdUnindexed: '(id + 0) < $(beforeId)',
} as const;

/**
 * Sent in front of the GIN-only step of a term query, in the same query
 * string: a multi-statement string runs as one implicit transaction, so
 * these last for that SELECT only (one round trip, nothing left on the
 * pooled connection, also when it fails). No index scan (which would walk
 * the primary key backwards through the whole history for a rare term) and
 * no sequential scan: the planner takes the bitmap of the GIN index.
 */
export const TERM_SEARCH_SETTINGS = 'SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off';

/**
 * The newest `limit` entries of each of several projects with
 * `lowestId ≤ id < floor` (a floor per project) passing `conditions`
 * (LOG_CONDITIONS fragments), through each project's (project_id, id)
 * index. Params: projects, floors, lowestId, limit + the fragments'.
 */
export function selectLogsInIdRanges(conditions: readonly string[]): string {
  return `SELECT e.* FROM unnest($(projects)::bigint[], $(floors)::bigint[]) AS p(id, floor)
  CROSS JOIN LATERAL (SELECT ${LOG_COLUMNS} FROM log_entries
    WHERE project_id = p.id AND id >= $(lowestId) AND id < p.floor AND ${conditions.join(' AND ')}
    ORDER BY id DESC LIMIT $(limit)) AS e`;
}

/**
 * A window step of a term query, for several projects in one statement:
 * each project's newest `window` rows below its own `before` (its
 * (project_id, id) index), every one with its id and whether it passes
 * `conditions` (LOG_CONDITIONS fragments; the tsquery without project
 * terms); the entry's columns only for those that pass. Params: projects,
 * befores, windows (parallel arrays) + the fragments'.
 */
export function selectTermWindows(conditions: readonly string[]): string {
  const hit = conditions.join(' AND ');
  return `SELECT p.id AS "windowProject", w.id, (${hit}) AS hit,
      CASE WHEN ${hit} THEN w.received_at END AS "receivedAt", CASE WHEN ${hit} THEN w.body END AS body
  FROM unnest($(projects)::bigint[], $(befores)::bigint[], $(windows)::int[]) AS p(id, before, size)
  CROSS JOIN LATERAL (SELECT id, received_at, body, level, ts, terms FROM log_entries
    WHERE project_id = p.id AND id < p.before ORDER BY id DESC LIMIT p.size) AS w`;
}

/** Newest first under `conditions` (fragments of LOG_CONDITIONS). Params: limit + the fragments'. */
export function selectLogsNewestFirst(conditions: readonly string[]): string {
  return `SELECT ${LOG_COLUMNS} FROM log_entries WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $(limit)`;
}

/** Entries of a project in a time range, counted up to a cap (index only). Params: $1 project, $2 from, $3 to, $4 cap. */
export const COUNT_PROJECT_LOGS_IN_RANGE = `SELECT COUNT(*)::int AS n FROM (
  SELECT 1 FROM log_entries WHERE project_id = $1 AND ts >= $2 AND ts <= $3 LIMIT $4) AS s`;

/** The newest id in a time range, from (project_id, ts) INCLUDE (id). Params: project, from, to, beforeId. */
export const NEWEST_PROJECT_LOG_ID_IN_RANGE = `SELECT MAX(id) AS id FROM log_entries
  WHERE project_id = $1 AND ts >= $2 AND ts <= $3 AND id < $4`;

/**
 * A narrow time range: its few ids first (MATERIALIZED keeps the planner on
 * (project_id, ts) instead of walking the primary key backwards through
 * everything newer), then the other conditions on those rows only.
 * `conditions` are LOG_CONDITIONS fragments. Params: project, from, to,
 * beforeId, limit + the fragments'.
 */
export function selectLogsInRange(conditions: readonly string[]): string {
  return `WITH in_range AS MATERIALIZED (
    SELECT id FROM log_entries WHERE project_id = $(project) AND ts >= $(from) AND ts <= $(to) AND id < $(beforeId))
  SELECT ${LOG_COLUMNS} FROM log_entries
  WHERE id IN (SELECT id FROM in_range)${conditions.map((c) => ` AND ${c}`).join('')}
  ORDER BY id DESC LIMIT $(limit)`;
}

/**
 * Several projects without a term: each project's newest page through its
 * own (project_id, id) walk (LATERAL), then the pages merged. `conditions`
 * include LOG_CONDITIONS.eachProject. Params: projects, limit + the fragments'.
 */
export function selectLogsPerProjectNewestFirst(conditions: readonly string[]): string {
  return `SELECT e.* FROM unnest($(projects)::bigint[]) AS p(id)
  CROSS JOIN LATERAL (${selectLogsNewestFirst(conditions)}) AS e
  ORDER BY e.id DESC LIMIT $(limit)`;
}

// ---- live-stream settling (see lastLogId in postgres-logs.ts) ------------------

/**
 * The advisory-lock class of ingestion marks: key = class << 32 | project id,
 * so pg_locks shows classid = this class and objid = the project id.
 */
export const INGEST_MARK_CLASS = 1818978151;

/** $1: mark class, $2: project ids. Shared, so ingesters never wait for each other here. */
export const MARK_INGESTING = `SELECT pg_advisory_xact_lock_shared(($1::bigint << 32) | p.id) FROM unnest($2::bigint[]) AS p(id)`;

/** Transactions holding an ingestion mark in this database ($1: mark class); the callers narrow it with $2. */
const MARKED = `SELECT DISTINCT virtualtransaction FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid = $1::bigint::oid
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/** One snapshot: the largest visible id, and the ingestion marked on projects $2 right now. */
export const SETTLE_POSITION = `SELECT (SELECT COALESCE(MAX(id), 0) FROM log_entries) AS horizon,
  ARRAY(${MARKED} AND objid = ANY($2::bigint[]::oid[])) AS waiting`;

/** Which of the transactions $2 still hold their marks. */
export const STILL_INGESTING = `SELECT ARRAY(${MARKED} AND virtualtransaction = ANY($2::text[])) AS waiting`;

/** Several projects, oldest first above afterId. Params: projects, afterId, limit + FILTER's. */
export const QUERY_PROJECTS_LOGS_ASC = `SELECT e.* FROM unnest($(projects)::bigint[]) AS p(id)
  CROSS JOIN LATERAL (
    SELECT ${LOG_COLUMNS} FROM log_entries
    WHERE project_id = p.id AND id > $(afterId) AND ${FILTER}
    ORDER BY id ASC LIMIT $(limit)) AS e
  ORDER BY e.id ASC LIMIT $(limit)`;
