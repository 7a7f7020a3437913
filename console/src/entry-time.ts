/**
 * An entry's `timestamp` as the service reads it (milliseconds since the
 * epoch): the same ISO 8601 shapes, a missing zone meaning UTC (where
 * `Date.parse` would take local time), digits past the millisecond dropped.
 * The context walk and the live chart compare times with the service's own
 * `from`/`to`, so they must agree with it to the millisecond.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?$/;

/** The instant of an entry's timestamp, or null for a text the service would not have stored. */
export function entryMs(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = ISO.exec(text);
  if (!m) return null;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  date.setUTCHours(Number(m[4]), Number(m[5]), m[6] === undefined ? 0 : Number(m[6]), m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0')));
  const zone = m[8];
  const offsetMinutes = zone === undefined || zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const ms = date.getTime() - offsetMinutes * 60_000;
  return Number.isNaN(ms) ? null : ms;
}

/** The earliest and latest instants the service's `from` and `to` accept (four-digit years). */
export const FIRST_MS = Date.parse('0000-01-01T00:00:00.000Z');
export const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');
