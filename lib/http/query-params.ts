/**
 * Typed reads of query-string parameters; a bad value answers 400
 * `invalid_request` naming the parameter. An empty value counts as
 * absent.
 */
import { invalidRequest } from '../core/errors.js';
import { parseId } from '../core/ids.js';
import { rejectNul } from '../core/text-fields.js';
import { parseIsoTimestamp } from '../core/timestamps.js';

function raw(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  return value === null || value === '' ? undefined : value;
}

/** A positive integer id, or undefined when absent. */
export function queryId(query: URLSearchParams, name: string): number | undefined {
  const value = raw(query, name);
  if (value === undefined) return undefined;
  const id = parseId(value);
  if (id === null) throw invalidRequest(`${name} must be a positive integer.`, name, 'invalid');
  return id;
}

/** A free string, or undefined when absent. */
export function queryString(query: URLSearchParams, name: string): string | undefined {
  return raw(query, name);
}

/** Free text that is stored or compared in the database: U+0000 answers 400 naming the parameter. */
export function queryText(query: URLSearchParams, name: string): string | undefined {
  const value = raw(query, name);
  rejectNul(value, name);
  return value;
}

/** One of `values`, or undefined when absent. */
export function queryEnum<T extends string>(query: URLSearchParams, name: string, values: readonly T[]): T | undefined {
  const value = raw(query, name);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) throw invalidRequest(`${name} must be one of ${values.join(', ')}.`, name, 'invalid');
  return value as T;
}

/** An ISO 8601 date-time as epoch milliseconds, or undefined when absent. */
export function queryInstant(query: URLSearchParams, name: string): number | undefined {
  const value = raw(query, name);
  if (value === undefined) return undefined;
  const ms = parseInstant(value);
  if (ms === null) throw invalidRequest(`${name} must be an ISO 8601 date-time.`, name, 'invalid');
  return ms;
}

/**
 * `YYYY-MM-DD[T ]HH:MM[:SS[.fraction]]` with `Z`, `±HH:MM` or no offset
 * (meaning UTC): the very parser that reads log entries' timestamps, so a
 * filter and an entry always agree on an instant. Impossible dates are null.
 */
export const parseInstant = parseIsoTimestamp;
