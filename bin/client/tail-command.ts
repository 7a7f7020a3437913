/**
 * `logkeep tail`: follows `GET /v1/logs/stream`. Every entry is printed
 * once, in id order: the position is the id of the last entry printed,
 * sent back as `Last-Event-ID` on every reconnection (a dropped
 * connection, the service's `server_shutdown`, a restart), so the service
 * replays exactly what followed it; an entry at or below it is never
 * printed again. The stream's own refusals (`token_revoked`,
 * `project_blocked`) and any 4xx end the command.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { backoffDelay, DEFAULT_BACKOFF } from '../../lib/client/backoff.js';
import { ApiSession, USER_AGENT, send } from './api.js';
import { CliError, EXIT, exitCodeForStatus, httpError, usageError } from './errors.js';
import { FILTER_HELP, FILTER_OPTIONS, filterQuery, parseCommand, positiveInt } from './filters.js';
import { entryLine, type LogEntry } from './output.js';
import { loadCredentials } from './profile.js';

/** The longest SSE frame kept while it arrives: an entry is at most 1 MiB of JSON, escaped into `data:` lines. */
const MAX_FRAME_CHARS = 4 * 1024 * 1024;

export const TAIL_HELP = `Usage: logkeep tail (--project <id> | --group <id>) [filters] [options]

Follows new entries live, reconnecting after any interruption without
missing or repeating one.

${FILTER_HELP}
Options:
      --since-id <id>           Start after this entry id (0: every stored entry first)
      --limit <n>               Stop after printing n entries
      --ndjson                  One entry per line, as JSON
      --profile <name>          The stored profile to use`;

export async function runTail(argv: readonly string[]): Promise<void> {
  const { values } = parseCommand(argv, { ...FILTER_OPTIONS, 'since-id': { type: 'string' }, limit: { type: 'string' }, ndjson: { type: 'boolean' } });
  if (values.help) return void process.stdout.write(`${TAIL_HELP}\n`);
  const filters = filterQuery(values);
  const limit = values.limit === undefined ? Infinity : positiveInt(values.limit, '--limit', 1);
  let position: number | null = null;
  if (values['since-id'] !== undefined) {
    position = Number(values['since-id']);
    if (!Number.isSafeInteger(position) || position < 0) throw usageError('--since-id must be a non-negative integer');
  }
  const session = new ApiSession(await loadCredentials(values.profile as string | undefined));
  const write = (entry: LogEntry) => process.stdout.write(values.ndjson ? `${JSON.stringify(entry)}\n` : `${entryLine(entry, process.stdout)}\n`);

  let printed = 0;
  let failures = 0;
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  while (!stop.signal.aborted && printed < limit) {
    const outcome = await followOnce(session, filters, position, stop.signal, (entry) => {
      // Never twice: a replay starts after the position, and anything at or below it is dropped.
      if (position !== null && entry.id <= position) return true;
      write(entry);
      position = entry.id;
      printed += 1;
      failures = 0;
      return printed < limit;
    });
    if (outcome.kind === 'done' || stop.signal.aborted) break;
    if (outcome.kind === 'ended') {
      if (outcome.reason === 'token_revoked') throw new CliError('the stream ended: the credentials were revoked (token_revoked)', EXIT.unauthorized);
      if (outcome.reason === 'project_blocked') throw new CliError('the stream ended: the project is blocked (project_blocked)', EXIT.forbidden);
    }
    failures += 1;
    const delay = backoffDelay(failures, { ...DEFAULT_BACKOFF, baseDelayMs: 100, maxDelayMs: 5_000 }, Math.random);
    if (outcome.kind === 'lost' && failures > 1) process.stderr.write(`reconnecting in ${Math.round(delay)} ms (${outcome.reason})\n`);
    await sleep(delay, stop.signal);
  }
}

type FollowOutcome = { kind: 'done' } | { kind: 'ended'; reason: string } | { kind: 'lost'; reason: string };

/** One connection: entries handed to `onEntry` (false: enough) until it ends, is lost or enough were printed. */
async function followOnce(
  session: ApiSession,
  filters: URLSearchParams,
  position: number | null,
  stop: AbortSignal,
  onEntry: (entry: LogEntry) => boolean,
): Promise<FollowOutcome> {
  const connection = new AbortController();
  const onStop = () => connection.abort();
  stop.addEventListener('abort', onStop, { once: true });
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${await session.bearer()}`, accept: 'text/event-stream', 'user-agent': USER_AGENT };
    if (position !== null) headers['last-event-id'] = String(position);
    let res: Response;
    try {
      res = await send(`${session.url}/v1/logs/stream?${filters.toString()}`, { headers, signal: connection.signal });
    } catch (err) {
      return { kind: 'lost', reason: err instanceof Error ? err.message : String(err) };
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the status says enough
      }
      // Overloaded or restarting: try again; anything else is the answer.
      if (res.status === 429 || res.status >= 500) return { kind: 'lost', reason: `HTTP ${res.status}` };
      const error = httpError(res.status, body, 'tail');
      throw new CliError(error.message, exitCodeForStatus(res.status));
    }
    let outcome: FollowOutcome | null = null;
    const parser = createParser({
      onEvent(event: EventSourceMessage) {
        if (outcome !== null) return;
        if (event.event === 'log') {
          const entry = JSON.parse(event.data) as LogEntry;
          if (!onEntry(entry)) outcome = { kind: 'done' };
        } else if (event.event === 'end') {
          outcome = { kind: 'ended', reason: (JSON.parse(event.data) as { reason: string }).reason };
        }
      },
      maxBufferSize: MAX_FRAME_CHARS,
      onError() {
        outcome = { kind: 'lost', reason: 'a malformed event' };
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (outcome !== null) break;
      }
    } catch (err) {
      if (outcome === null) return { kind: 'lost', reason: err instanceof Error ? err.message : String(err) };
    }
    return outcome ?? { kind: 'lost', reason: 'the connection closed' };
  } finally {
    stop.removeEventListener('abort', onStop);
    connection.abort();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
