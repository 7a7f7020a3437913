/**
 * What makes a submitted log entry acceptable and a submitted batch
 * readable. Pure functions: no storage, no HTTP.
 *
 * The checks run in a fixed order and the first failure is the entry's
 * `validation_error` message, so a client always learns about the same
 * problem first whatever else is wrong with the entry.
 */
import { invalidRequest } from '../core/errors.js';
import { parseIsoTimestamp } from '../core/timestamps.js';
import { LEVELS, levelNumber } from '../search/levels.js';

/** The six correlation fields of a log entry. */
export const CORRELATION_FIELDS = ['session_id', 'request_id', 'connection_generation', 'tool_call_id', 'message_id', 'operation_id'] as const;

/**
 * Fields that are `null` on output when the entry did not submit them,
 * in the order the presenter appends them.
 */
export const NULLABLE_FIELDS = ['category', 'logger', ...CORRELATION_FIELDS] as const;

/** Keys the server assigns; an entry that submits one is rejected. */
export const SERVER_ASSIGNED_KEYS = ['id', 'project_id', 'received_at'] as const;

/**
 * The deepest nesting of objects and arrays an entry may have, the entry
 * object itself counting as the first level. Far beyond any real log entry,
 * and far below what the event loop's call stack survives when a library
 * walks a parsed value recursively (JSON.stringify overflows at a few
 * thousand levels), so an accepted entry can always be serialised.
 */
export const MAX_ENTRY_DEPTH = 100;

/** An entry that passed validation, with what storage needs from its fields. */
export interface ValidEntry {
  ok: true;
  /** The submitted object itself (never copied). */
  entry: Record<string, unknown>;
  level: number;
  timestamp: number;
}

export interface InvalidEntry {
  ok: false;
  /** The first failed rule, as text for `rejected[].message`. */
  message: string;
}

function own(entry: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(entry, key) ? entry[key] : undefined;
}

/** Applies the entry rules in order to one submitted value. */
export function validateEntry(value: unknown): ValidEntry | InvalidEntry {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: 'The entry is not a JSON object.' };
  }
  const entry = value as Record<string, unknown>;
  for (const key of SERVER_ASSIGNED_KEYS) {
    if (Object.hasOwn(entry, key)) return { ok: false, message: `The entry contains '${key}', which the server assigns.` };
  }
  const level = levelNumber(own(entry, 'level'));
  if (level === undefined) return { ok: false, message: `'level' must be one of ${LEVELS.join(', ')}.` };
  const event = own(entry, 'event');
  if (typeof event !== 'string' || event.length === 0) return { ok: false, message: "'event' must be a non-empty string." };
  const rawTimestamp = own(entry, 'timestamp');
  const timestamp = typeof rawTimestamp === 'string' ? parseIsoTimestamp(rawTimestamp) : null;
  if (timestamp === null) return { ok: false, message: "'timestamp' must be an ISO 8601 date-time." };
  for (const field of NULLABLE_FIELDS) {
    if (!Object.hasOwn(entry, field)) continue;
    const v = entry[field];
    if (v === null || typeof v === 'string') continue;
    if (field === 'connection_generation') {
      if (typeof v === 'number' && Number.isInteger(v)) continue;
      return { ok: false, message: `'${field}' must be a string, an integer or null.` };
    }
    return { ok: false, message: `'${field}' must be a string or null.` };
  }
  if (nestsDeeperThan(entry, MAX_ENTRY_DEPTH)) {
    return { ok: false, message: `The entry nests objects and arrays more than ${MAX_ENTRY_DEPTH} levels deep.` };
  }
  return { ok: true, entry, level, timestamp };
}

/**
 * Whether objects and arrays nest more than `max` levels in `root` (itself
 * level 1). Walks with its own stack: the value may be far deeper than the
 * call stack allows.
 */
function nestsDeeperThan(root: object, max: number): boolean {
  const stack: { value: object; depth: number }[] = [{ value: root, depth: 1 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.depth > max) return true;
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: item.depth + 1 });
    }
  }
  return false;
}

/**
 * The body must be a JSON array (of anything: each element is judged
 * on its own). Anything else is a 400 for the whole request.
 */
export function readBatch(parsed: unknown): unknown[] {
  if (!Array.isArray(parsed)) throw invalidRequest('The request body must be a JSON array of log entries.');
  return parsed;
}
