/**
 * `logkeep/pino`: a pino transport that ships a pino logger's entries to
 * logkeep through `IngestClient`:
 *
 *   pino(pino.transport({ target: 'logkeep/pino', options: { url, key } }))
 *
 * pino runs it in a worker thread; entries are batched and retried by the
 * client, and closing the logger's stream (a normal process exit included)
 * closes the client, which delivers what is still buffered.
 */
import { writeSync } from 'node:fs';
import build from 'pino-abstract-transport';
import { IngestClient } from './ingest-client.js';
import type { IngestClientOptions, IngestLogEntry, IngestLogLevel } from './ingest-types.js';

/**
 * The transport's options: where to send and the project key, plus the
 * `IngestClient` options that are plain data. pino copies the options into
 * its worker thread, so functions (callbacks, a dispatcher) cannot cross:
 * a batch given up and an entry the server rejected are written to stderr.
 */
export interface PinoTransportOptions
  extends Omit<IngestClientOptions, 'secretKey' | 'onRejected' | 'onError' | 'onRetry' | 'dispatcher' | 'clock' | 'random'> {
  /** A project secret key (`slk_…`). */
  key: string;
}

/** The event of an entry that has neither `msg` nor `err.message`. */
export const NO_MESSAGE = '(no message)';

/** Keys the server assigns itself and rejects in a submitted entry. */
const SERVER_ASSIGNED = new Set(['id', 'project_id', 'received_at']);

// pino's own keys that the mapping consumes.
const CONSUMED = new Set(['level', 'msg', 'time', 'name']);

// pino's standard numeric levels, highest first.
const LEVEL_FLOORS: readonly [number, IngestLogLevel][] = [
  [60, 'critical'],
  [50, 'error'],
  [40, 'warning'],
  [30, 'info'],
];

const LEVEL_LABELS: Record<string, IngestLogLevel> = {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  warn: 'warning',
  error: 'error',
  fatal: 'critical',
};

/**
 * pino's level to logkeep's: 10 (trace) and 20 (debug) → `debug`, 30 → `info`,
 * 40 → `warning`, 50 → `error`, 60 → `critical`. A custom numeric level takes
 * the nearest standard level at or below it (35 → `info`; below 30 → `debug`).
 * A label (pino's `formatters.level` may send one) maps by name; anything
 * else is `info`.
 */
export function pinoLevel(level: unknown): IngestLogLevel {
  if (typeof level === 'number') return LEVEL_FLOORS.find(([floor]) => level >= floor)?.[1] ?? 'debug';
  if (typeof level === 'string') return LEVEL_LABELS[level] ?? 'info';
  return 'info';
}

function eventOf(record: Record<string, unknown>): string {
  if (typeof record.msg === 'string' && record.msg !== '') return record.msg;
  const err = record.err;
  if (err !== null && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    const message = (err as { message: string }).message;
    if (message !== '') return message;
  }
  return NO_MESSAGE;
}

// Epoch milliseconds of 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z:
// logkeep takes four-digit years only, and toISOString() writes others as
// `+010000-…`, which it refuses.
const EARLIEST_TIME_MS = -62_167_219_200_000;
const LATEST_TIME_MS = 253_402_300_799_999;

// The date-times logkeep accepts: YYYY-MM-DD[T ]HH:MM[:SS[.fraction]] then Z, ±HH:MM or nothing.
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-](\d{2}):(\d{2}))?$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Whether logkeep accepts `text` as a timestamp: the shape above, and a date and time that exist. */
function isAcceptedDateTime(text: string): boolean {
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  return m[8] === undefined || (Number(m[8]) <= 23 && Number(m[9]) <= 59);
}

/**
 * pino's `time` as a logkeep `timestamp`, or undefined when it gives none
 * logkeep would accept: epoch milliseconds (pino's default) within the
 * years 0000–9999 become ISO 8601; a string is passed as it is when it is
 * an ISO 8601 date-time logkeep accepts (pino's `isoTime`). Anything else
 * (nanoseconds, 1e20, a string that is not a date, an object) is undefined.
 */
export function pinoTimestamp(time: unknown): string | undefined {
  if (typeof time === 'number') {
    return time >= EARLIEST_TIME_MS && time <= LATEST_TIME_MS ? new Date(time).toISOString() : undefined;
  }
  if (typeof time === 'string' && isAcceptedDateTime(time)) return time;
  return undefined;
}

// An own property even for `__proto__` (which plain assignment would turn into the prototype).
function setField(entry: IngestLogEntry, key: string, value: unknown): void {
  Object.defineProperty(entry, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * One pino log record (the parsed JSON line) as a logkeep entry:
 * - `level` → `level`, by `pinoLevel`;
 * - `msg` → `event`; without a message, `err.message` (what `logger.error(err)`
 *   produces), else `'(no message)'`, because logkeep requires an event;
 * - `time` (epoch milliseconds) → `timestamp` as ISO 8601; a string time
 *   (pino's `isoTime`) is passed as it is; no time lets the client set one;
 * - a `time` logkeep could not take (see `pinoTimestamp`) keeps the entry:
 *   its `timestamp` is left to the client (the time the transport received
 *   it) and the value is kept as it was under `pino_time`;
 * - `name` → `logger`;
 * - every other field (`pid`, `hostname`, `err`, `request_id`, your nested
 *   objects) is kept as it is, so it stays filterable (`context.hostname=…`).
 *
 * A field the server assigns (`id`, `project_id`, `received_at`) would make
 * the server reject the entry, and a field named like a key the mapping fills
 * (`event`, `timestamp`, `logger`, `pino_time`) would be overwritten; such a
 * field is kept under `pino_<name>` instead (`pino_id`, `pino_event`). So is
 * a `msg` or `name` that is not a string.
 */
export function pinoToEntry(record: Record<string, unknown>): IngestLogEntry {
  const entry: IngestLogEntry = { level: pinoLevel(record.level), event: eventOf(record) };
  if (Object.hasOwn(record, 'time')) {
    const timestamp = pinoTimestamp(record.time);
    if (timestamp !== undefined) entry.timestamp = timestamp;
    else entry.pino_time = record.time;
  }
  if (typeof record.name === 'string') entry.logger = record.name;
  else if (Object.hasOwn(record, 'name')) entry.pino_name = record.name;
  if (Object.hasOwn(record, 'msg') && typeof record.msg !== 'string') entry.pino_msg = record.msg;
  for (const [key, value] of Object.entries(record)) {
    if (CONSUMED.has(key)) continue;
    let renamed = SERVER_ASSIGNED.has(key) ? `pino_${key}` : key;
    while (Object.hasOwn(entry, renamed)) renamed = `pino_${renamed}`;
    setField(entry, renamed, value);
  }
  return entry;
}

// Straight to file descriptor 2: a worker's process.stderr is relayed through
// the main thread and loses what is written while the process exits. Never
// throws (a full non-blocking pipe answers EAGAIN): a warning must not be
// what kills the worker.
function warn(message: string): void {
  try {
    writeSync(2, `logkeep/pino: ${message}\n`);
  } catch {
    // Nowhere left to report to.
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The transport pino loads by the name `logkeep/pino`. No record stops it:
 * a line that is not JSON, or a record that cannot be mapped or serialised
 * (nested too deep for JSON.stringify, say), is dropped, counted, and
 * reported on stderr; the records after it are shipped as usual.
 */
export default function pinoTransport(options: PinoTransportOptions) {
  const { key, ...clientOptions } = options;
  const client = new IngestClient({
    ...clientOptions,
    secretKey: key,
    onRejected: ({ error, message }) => warn(`the server rejected an entry (${error}: ${message})`),
    onError: (err) => warn(`gave up on ${err.entries.length} entries (${err.kind}): ${err.message}`),
  });
  let dropped = 0;
  const drop = (why: string) => {
    dropped++;
    warn(`dropped a record: ${why} (${dropped} dropped so far)`);
  };
  return build(
    async (source) => {
      // pino-abstract-transport skips a line that is not JSON (or is null) and says so with this event.
      source.on('unknown', (line: unknown) => drop(`a line that is not a JSON object (${String(line).length} characters)`));
      for await (const record of source) {
        try {
          // pino-abstract-transport wraps a JSON value that is not an object as `{data, time}`; an array gets the same.
          const object = Array.isArray(record) ? { data: record } : (record as Record<string, unknown>);
          await client.log(pinoToEntry(object));
        } catch (err) {
          drop(errorText(err));
        }
      }
    },
    {
      // Called when the stream ends (logger closed, process exiting): deliver what is buffered.
      close: async () => {
        await client.close();
      },
    },
  );
}
