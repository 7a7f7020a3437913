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

/**
 * One pino log record (the parsed JSON line) as a logkeep entry:
 * - `level` → `level`, by `pinoLevel`;
 * - `msg` → `event`; without a message, `err.message` (what `logger.error(err)`
 *   produces), else `'(no message)'`, because logkeep requires an event;
 * - `time` (epoch milliseconds) → `timestamp` as ISO 8601; a string time
 *   (pino's `isoTime`) is passed as it is; no time lets the client set one;
 * - `name` → `logger`;
 * - every other field (`pid`, `hostname`, `err`, `request_id`, your nested
 *   objects) is kept as it is, so it stays filterable (`context.hostname=…`).
 *
 * A field the server assigns (`id`, `project_id`, `received_at`) would make
 * the server reject the entry, and a field named like a key the mapping fills
 * (`event`, `timestamp`, `logger`) would be overwritten; such a field is
 * kept under `pino_<name>` instead (`pino_id`, `pino_event`).
 */
export function pinoToEntry(record: Record<string, unknown>): IngestLogEntry {
  const entry: IngestLogEntry = { level: pinoLevel(record.level), event: eventOf(record) };
  if (typeof record.time === 'number' && Number.isFinite(record.time)) entry.timestamp = new Date(record.time).toISOString();
  else if (typeof record.time === 'string') entry.timestamp = record.time;
  if (typeof record.name === 'string') entry.logger = record.name;
  for (const [key, value] of Object.entries(record)) {
    if (CONSUMED.has(key)) continue;
    const renamed = SERVER_ASSIGNED.has(key) || key in entry ? `pino_${key}` : key;
    entry[renamed] = value;
  }
  return entry;
}

// Straight to file descriptor 2: a worker's process.stderr is relayed through
// the main thread and loses what is written while the process exits.
function warn(message: string): void {
  writeSync(2, `logkeep/pino: ${message}\n`);
}

/** The transport pino loads by the name `logkeep/pino`. */
export default function pinoTransport(options: PinoTransportOptions) {
  const { key, ...clientOptions } = options;
  const client = new IngestClient({
    ...clientOptions,
    secretKey: key,
    onRejected: ({ error, message }) => warn(`the server rejected an entry (${error}: ${message})`),
    onError: (err) => warn(`gave up on ${err.entries.length} entries (${err.kind}): ${err.message}`),
  });
  return build(
    async (source) => {
      for await (const record of source) {
        // pino-abstract-transport parses each line; anything else is not a record.
        if (record === null || typeof record !== 'object') continue;
        await client.log(pinoToEntry(record as Record<string, unknown>));
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
