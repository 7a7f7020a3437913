/**
 * The query string of `GET /v1/logs` (and of the live stream) read into a
 * typed filter, in a fixed order: the scope first (`readLogScope`, before any
 * lookup), everything else only after the route's 404/403 checks
 * (`readLogListQuery`, `readLogStreamQuery`).
 *
 * Exact-match filters (`category`, `logger`, the correlation ids and every
 * `context.<path>`) become paths and values; `q` becomes words and prefixes.
 * Repeating a parameter ANDs its values, like distinct `context.` keys.
 */
import { invalidRequest } from '../core/errors.js';
import { readPageRequest, type CursorCodec, type PageRequest } from '../core/pagination.js';
import { CORRELATION_FIELDS } from '../ingest/entry-validation.js';
import { parseIsoTimestamp } from '../core/timestamps.js';
import { rejectNul } from '../core/text-fields.js';
import { ID_TEXT } from '../core/ids.js';
import { levelNumber, LEVELS } from '../search/levels.js';
import { parseTextQuery } from '../search/search-terms.js';
import type { ExactFilter, LogFilter } from '../search/log-filter.js';

export type { LogFilter };

/** Whose entries: one project, or every unblocked project of one group. */
export type LogScope = { kind: 'project'; projectId: number } | { kind: 'group'; groupId: number };

/** The cursor namespace of the log list. */
export const LOG_CURSOR_LIST = 'logs';

const EXACT_FIELDS = ['category', 'logger', ...CORRELATION_FIELDS] as const;
const CONTEXT_PREFIX = 'context.';

/**
 * The most exact-match filters one query may combine (`category`,
 * `logger`, the correlation fields and `context.<path>`, repeats
 * included). Each one is another index term to intersect and another
 * check on every candidate entry; real queries use a few.
 */
export const MAX_EXACT_FILTERS = 16;

/**
 * The first check: exactly one of `project_id` and `group_id`, as a
 * positive integer. Both or neither is 400 `{field: project_id, reason: invalid}`.
 */
export function readLogScope(query: URLSearchParams): LogScope {
  const projectId = query.get('project_id');
  const groupId = query.get('group_id');
  if ((projectId === null) === (groupId === null)) {
    throw invalidRequest('Exactly one of project_id and group_id is required.', 'project_id', 'invalid');
  }
  if (projectId !== null) {
    if (!ID_TEXT.test(projectId)) throw invalidRequest('project_id must be a positive integer.', 'project_id', 'invalid');
    return { kind: 'project', projectId: Number(projectId) };
  }
  if (!ID_TEXT.test(groupId!)) throw invalidRequest('group_id must be a positive integer.', 'group_id', 'invalid');
  return { kind: 'group', groupId: Number(groupId) };
}

/** The filters of the list and the stream, complaining in order: level, from/to, context, q, limit, cursor. */
export function readLogFilter(query: URLSearchParams): LogFilter {
  let minLevel: number | null = null;
  const rawLevel = query.get('level');
  if (rawLevel !== null) {
    const n = levelNumber(rawLevel);
    if (n === undefined) throw invalidRequest(`level must be one of ${LEVELS.join(', ')}.`, 'level', 'invalid');
    minLevel = n;
  }
  const from = readInstant(query, 'from');
  const to = readInstant(query, 'to');

  const exact = new Map<string, ExactFilter>();
  const addExact = (field: string, path: string[], value: string) => {
    rejectNul(value, field);
    exact.set(JSON.stringify([path, value]), { path, value });
    if (exact.size > MAX_EXACT_FILTERS) {
      throw invalidRequest(
        `A query may combine at most ${MAX_EXACT_FILTERS} exact-match filters (category, logger, correlation fields and context.<path>).`,
        field,
        'invalid',
      );
    }
  };
  for (const field of EXACT_FIELDS) {
    for (const value of query.getAll(field)) addExact(field, [field], value);
  }
  for (const [key, value] of query) {
    if (!key.startsWith(CONTEXT_PREFIX)) continue;
    rejectNul(key, key);
    const segments = key.slice(CONTEXT_PREFIX.length).split('.');
    if (segments.some((s) => s.length === 0)) {
      throw invalidRequest(`'${key}' is not a valid context path (empty segment).`, key, 'invalid');
    }
    addExact(key, segments, value);
  }

  const words: string[] = [];
  const prefixes: string[] = [];
  const q = query.get('q');
  if (q !== null) {
    rejectNul(q, 'q');
    const text = parseTextQuery(q);
    words.push(...text.words);
    prefixes.push(...text.prefixes);
  }
  return { minLevel, from, to, words, prefixes, exact: [...exact.values()] };
}

function readInstant(query: URLSearchParams, field: 'from' | 'to'): number | null {
  const raw = query.get(field);
  if (raw === null) return null;
  const ms = parseIsoTimestamp(raw);
  if (ms === null) throw invalidRequest(`${field} must be an ISO 8601 date-time.`, field, 'invalid');
  return ms;
}

/** `GET /v1/logs` after its scope checks: filters, then `limit` and `cursor`. */
export function readLogListQuery(query: URLSearchParams, cursors: CursorCodec): { filter: LogFilter; page: PageRequest } {
  const filter = readLogFilter(query);
  const page = readPageRequest(query, LOG_CURSOR_LIST, cursors);
  return { filter, page };
}

/** The stream after its scope checks: filters, then `since_id` (null when absent). */
export function readLogStreamQuery(query: URLSearchParams): { filter: LogFilter; sinceId: number | null } {
  const filter = readLogFilter(query);
  const raw = query.get('since_id');
  return { filter, sinceId: raw === null ? null : parseSinceId(raw, 'since_id') };
}

/**
 * A catch-up position: a non-negative integer id (`0` replays everything).
 * Also used for the `Last-Event-ID` header, named by `field`.
 */
export function parseSinceId(raw: string, field: string): number {
  if (!/^[0-9]{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw invalidRequest(`${field} must be a non-negative integer.`, field, 'invalid');
  }
  return Number(raw);
}

/** True when the filter cannot match anything (an empty time range), so no query is needed. */
export function filterIsEmpty(filter: LogFilter): boolean {
  return filter.from !== null && filter.to !== null && filter.from > filter.to;
}
