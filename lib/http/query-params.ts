/**
 * Typed reads of query-string parameters; a bad value answers 400
 * `invalid_request` naming the parameter (D4). An empty value counts as
 * absent.
 */
import { invalidRequest } from '../errors.js';
import { rejectNul } from '../admin/text-fields.js';

const ID = /^[1-9][0-9]{0,15}$/;

function raw(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  return value === null || value === '' ? undefined : value;
}

/** A positive integer id, or undefined when absent. */
export function queryId(query: URLSearchParams, name: string): number | undefined {
  const value = raw(query, name);
  if (value === undefined) return undefined;
  if (!ID.test(value) || !Number.isSafeInteger(Number(value))) throw invalidRequest(`${name} must be a positive integer.`, name, 'invalid');
  return Number(value);
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

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * `YYYY-MM-DD[T ]HH:MM[:SS[.fraction]]` with `Z`, `±HH:MM` or no offset
 * (meaning UTC), the shape D21 accepts; impossible dates are null.
 */
export function parseInstant(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const local = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const check = new Date(local);
  // Date.UTC rolls 31 February over into March: reject instead.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  const zone = m[8];
  if (zone === undefined || zone.toUpperCase() === 'Z') return local;
  const sign = zone[0] === '-' ? -1 : 1;
  const [zh, zm] = [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))];
  if (zh > 23 || zm > 59) return null;
  return local - sign * (zh * 60 + zm) * 60_000;
}
