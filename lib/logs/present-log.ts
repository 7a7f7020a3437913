/**
 * LogEntry output, assembled from the stored compact JSON text instead of
 * re-serialising a parsed object: the submitted keys keep their order and
 * spelling (`__proto__` included, which an object spread would swallow), and
 * a page costs string concatenation, not JSON.stringify.
 *
 * Key order of every LogEntry: `id`, `project_id`, `received_at`, then the
 * submitted keys in their stored order, then whichever of `category`,
 * `logger`, `session_id`, `request_id`, `connection_generation`,
 * `tool_call_id`, `message_id`, `operation_id` the entry did not submit, as
 * `null`, in that order.
 */
import type { LogRow } from '../storage/types-logs.js';
import { isoTimestamp } from '../core/timestamps.js';
import { NULLABLE_FIELDS } from '../ingest/entry-validation.js';

/** The JSON text of one LogEntry. */
export function logEntryJson(row: LogRow): string {
  const body = row.body;
  // A stored body is a validated entry: an object with at least three keys.
  const inner = body.slice(1, -1);
  return `{"id":${row.id},"project_id":${row.projectId},"received_at":"${isoTimestamp(row.receivedAt)}",${inner}${absentFieldsAsNull(body)}}`;
}

/** `,"category":null,…` for the nullable fields the body does not have at top level. */
export function absentFieldsAsNull(body: string): string {
  let present: Set<string> | null = null;
  let out = '';
  for (const field of NULLABLE_FIELDS) {
    // JSON.stringify writes these names unescaped, so a body without the
    // quoted name surely lacks the key; one that has it may hold it nested or
    // inside a string, so only then is the body parsed.
    if (body.includes(`"${field}"`)) {
      present ??= topLevelKeys(body);
      if (present.has(field)) continue;
    }
    out += `,"${field}":null`;
  }
  return out;
}

function topLevelKeys(body: string): Set<string> {
  // JSON.parse defines every key as an own property (even `__proto__`), and
  // only the key names are read here.
  return new Set(Object.keys(JSON.parse(body) as object));
}

/** The JSON text of a `{items, next_cursor}` page of LogEntries. */
export function logPageJson(rows: readonly LogRow[], nextCursor: string | null): string {
  return `{"items":[${rows.map(logEntryJson).join(',')}],"next_cursor":${JSON.stringify(nextCursor)}}`;
}
