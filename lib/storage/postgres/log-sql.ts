/**
 * The log statements of the PostgreSQL backend (values through pg-promise's
 * formatter, like `sql.ts`). A batch travels as JSON array parameters
 * (encoded where it was prepared, storage/log-index/encoded-entries.ts) expanded by
 * json_array_elements. The search index is `log_blocks`, one row
 * per block of entries (storage/log-index/log-blocks.ts) with a tsvector built by
 * array_to_tsvector, so PostgreSQL never re-tokenizes logkeep's terms;
 * queries match them with a tsquery built from quoted lexemes.
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
 * $1: JSON array of rows `[project_id, received_at, ts, level, bytes, body]`,
 * read as jsonb so each row is parsed once (`->>` on a json value parses
 * it again per field); the body is a JSON string inside, which jsonb keeps
 * exactly. Rows are produced in array order, so the identity values they
 * draw ascend in that order; the caller sorts the returned ids to match.
 */
export const INSERT_LOG_ENTRIES = `INSERT INTO log_entries (project_id, received_at, ts, level, bytes, body)
  SELECT (x ->> 0)::bigint, (x ->> 1)::bigint, (x ->> 2)::bigint, (x ->> 3)::smallint, (x ->> 4)::integer, x ->> 5
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(x, n)
  ORDER BY t.n
  RETURNING id`;

/**
 * An encoded chunk's blocks `[first, last, terms]`: $1 the ids of the
 * chunk's entries (offset i is $1[i + 1]), $2 the project, $3 its project
 * term, $4 the JSON blocks.
 */
export const INSERT_CHUNK_BLOCKS = `INSERT INTO log_blocks (last_id, project_id, first_id, terms)
  SELECT ($1::bigint[])[(x ->> 1)::int + 1], $2, ($1::bigint[])[(x ->> 0)::int + 1],
    array_to_tsvector(string_to_array((x ->> 2) || ' ' || $3, ' '))
  FROM jsonb_array_elements($4::jsonb) AS x`;

/** $1: JSON array of blocks `{p, f, l, terms}` (terms space-separated). */
export const INSERT_LOG_BLOCKS = `INSERT INTO log_blocks (last_id, project_id, first_id, terms)
  SELECT x.l, x.p, x.f, array_to_tsvector(string_to_array(x.terms, ' '))
  FROM json_to_recordset($1::json) AS x(p bigint, f bigint, l bigint, terms text)`;

/**
 * $1: project ids, $2: entries to add, $3: bytes to add, $4: the
 * project's first id in the batch (parallel arrays). Adds to each project's
 * usage and to its tail's count (what the sealer finds work by), after the
 * project rows are locked: sealing and retention take a tail's row only
 * after any project row they lock, so the order never closes a cycle.
 */
export const ADD_PROJECT_USAGE = `WITH d AS (
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS d(id, n, b, first)
  ), usage AS (
    UPDATE projects AS p SET entry_count = p.entry_count + d.n, total_bytes = p.total_bytes + d.b
    FROM d WHERE p.id = d.id
    RETURNING 1
  )
  INSERT INTO log_tails AS t (project_id, entries, oldest_received_at)
    SELECT d.id, d.n, e.received_at FROM d JOIN log_entries AS e ON e.project_id = d.id AND e.id = d.first ORDER BY d.id
  ON CONFLICT (project_id) DO UPDATE
    SET entries = t.entries + excluded.entries, oldest_received_at = COALESCE(t.oldest_received_at, excluded.oldest_received_at)`;

/**
 * Adds a batch's counts to the rollup (log-rollup.ts). $1 projects, $2
 * spans, $3 starts, $4 levels, $5 counts (parallel arrays, each key once:
 * a key twice in one upsert is an error here).
 */
export const ADD_LOG_ROLLUP = `INSERT INTO log_rollup AS r (project_id, span, start, level, n)
  SELECT * FROM unnest($1::bigint[], $2::integer[], $3::bigint[], $4::smallint[], $5::bigint[])
  ON CONFLICT (project_id, span, start, level) DO UPDATE SET n = r.n + excluded.n`;

// ---- queries -------------------------------------------------------------------

export const SELECT_LAST_LOG_ID = `SELECT COALESCE(MAX(id), 0) AS id FROM log_entries`;

/** The largest visible id of the projects $1: one backward probe of (project_id, id) each. */
export const SELECT_LAST_LOG_ID_OF_PROJECTS = `SELECT COALESCE(MAX(last.id), 0) AS id
  FROM unnest($1::bigint[]) AS p(id), LATERAL (SELECT MAX(id) AS id FROM log_entries WHERE project_id = p.id) AS last`;

/**
 * Sent in front of a block step, in the same query string: a
 * multi-statement string runs as one implicit transaction, so it lasts for
 * that SELECT only (one round trip, nothing left on the pooled connection,
 * also when it fails). With no sequential scan, and every B-tree of
 * log_blocks kept out by `+ 0`, the planner takes the GIN bitmap, which
 * needs no tsvector read; on its own it would rather read the project's
 * blocks (small table) and test each tsvector, far slower. Index scans
 * stay on: they read the blocks' entries.
 */
export const BLOCK_SEARCH_SETTINGS = 'SET LOCAL enable_seqscan = off';

/**
 * The entry conditions of a block step: level, time, up to two exact-match
 * needles ('' when absent: strpos finds it at 1), and one ASCII word of `q`
 * (entry-match.ts `asciiWordNeedles`) in the text lower-cased under the "C"
 * collation (ASCII only, whatever the database's locale; translate() would
 * do the same much slower); `fold` (entry-match.ts `mayFoldFromNonAscii`)
 * also lets through any text holding U+212A or U+0130. pg-promise inlines
 * the values, so the planner drops the tests that cannot apply.
 */
const STEP_ENTRY_CONDITIONS = `(level + 0) >= $(minLevel) AND (ts + 0) >= $(from) AND (ts + 0) <= $(to)
      AND strpos(body, $(needle1)) > 0 AND strpos(body, $(needle2)) > 0
      AND ($(word) = '' OR strpos(lower(body COLLATE "C"), $(word)) > 0
        OR ($(fold) AND (strpos(body, '\u212a') > 0 OR strpos(body, '\u0130') > 0)))`;

/**
 * One step of a block walk (query-plan.ts `blockStep`) in one round trip:
 * the candidate blocks from the GIN index (`+ 0`: no B-tree bitmap is
 * ANDed in; the few found are sorted), then each block's entries on the
 * walk's side of `position` through the primary key, LEFT JOINed so a
 * block with no passing entry still comes back (one row, entry columns
 * null). OFFSET 0 keeps each block a separate index range: flattened, the
 * planner may hash-join the blocks against a scan of the whole table.
 * Only the first $(read) blocks found have their entries read: the others
 * come back alone (the gate is a one-time filter of the inner scan), for
 * the walk's next steps (BLOCK_ENTRIES), since finding a block costs the
 * same whether it is the 2nd or the 128th.
 * Params: tsquery, projects, position, after (exclusive bound on the
 * order's column), limit, offset (blocks skipped first), read, and the
 * STEP_ENTRY_CONDITIONS'.
 */
function blockStepSql(direction: 'newest' | 'oldest'): string {
  const newest = direction === 'newest';
  const order = newest ? 'last_id + 0 DESC' : 'first_id + 0 ASC';
  const blockWindow = newest ? '(first_id + 0) < $(position) AND (last_id + 0) < $(after)' : '(last_id + 0) > $(position) AND (first_id + 0) > $(after)';
  return `${BLOCK_SEARCH_SETTINGS};
  WITH blocks AS MATERIALIZED (
    SELECT last_id, project_id, first_id, row_number() OVER (ORDER BY ${order}) AS n FROM (
      SELECT last_id, project_id, first_id FROM log_blocks
      WHERE terms @@ $(tsquery)::tsquery AND (project_id + 0) = ANY($(projects)::bigint[]) AND ${blockWindow}
      ORDER BY ${order} LIMIT $(limit) OFFSET $(offset)) AS found)
  SELECT b.last_id AS "blockLastId", b.project_id AS "blockProjectId", b.first_id AS "blockFirstId", e.*
  FROM blocks AS b LEFT JOIN LATERAL (
    SELECT ${LOG_COLUMNS} FROM log_entries
    WHERE b.n <= $(read) AND project_id = b.project_id AND ${idWindow(direction)}
      AND ${STEP_ENTRY_CONDITIONS}
    OFFSET 0) AS e ON true
  ORDER BY b.n`;
}

/** A block's ids on the walk's side of `position`. */
function idWindow(direction: 'newest' | 'oldest'): string {
  return direction === 'newest' ? 'id >= b.first_id AND id <= least(b.last_id, $(position) - 1)' : 'id >= greatest(b.first_id, $(position) + 1) AND id <= b.last_id';
}

/**
 * The entries of blocks an earlier step found (as BLOCK_STEP reads them),
 * in the order given. Params: blockProjects, blockFirsts, blockLasts
 * (parallel arrays), position, and the STEP_ENTRY_CONDITIONS'.
 */
function blockEntriesSql(direction: 'newest' | 'oldest'): string {
  return `${BLOCK_SEARCH_SETTINGS};
  SELECT b.last_id AS "blockLastId", b.project_id AS "blockProjectId", b.first_id AS "blockFirstId", e.*
  FROM unnest($(blockProjects)::bigint[], $(blockFirsts)::bigint[], $(blockLasts)::bigint[]) WITH ORDINALITY AS b(project_id, first_id, last_id, n)
  LEFT JOIN LATERAL (
    SELECT ${LOG_COLUMNS} FROM log_entries
    WHERE project_id = b.project_id AND ${idWindow(direction)}
      AND ${STEP_ENTRY_CONDITIONS}
    OFFSET 0) AS e ON true
  ORDER BY b.n`;
}

export const BLOCK_ENTRIES = { newest: blockEntriesSql('newest'), oldest: blockEntriesSql('oldest') } as const;

export const BLOCK_STEP = { newest: blockStepSql('newest'), oldest: blockStepSql('oldest') } as const;

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
 * (project_id, id) each.
 */
export const MARK_INGESTING = `SELECT pg_backend_pid() AS pid, count(*) AS locks,
    (SELECT json_object_agg(p.id, COALESCE((SELECT MAX(id) FROM log_entries WHERE project_id = p.id), 0))
      FROM unnest($2::bigint[]) AS p(id)) AS "lastIds"
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
  SELECT (SELECT COALESCE(MAX(id), 0) FROM log_entries) AS horizon,
    (SELECT COALESCE(json_agg(json_build_object('vxid', m.virtualtransaction, 'pid', m.pid, 'floor', f.floor)), '[]'::json)
      FROM marked AS m LEFT JOIN floors AS f USING (virtualtransaction)) AS ingesting`;

/** Which of the transactions $2 still hold their marks ($1: mark class). */
export const STILL_INGESTING = `SELECT ARRAY(SELECT DISTINCT virtualtransaction FROM (${ADVISORY}) AS l
    WHERE classid = $1::bigint AND virtualtransaction = ANY($2::text[])) AS waiting`;
