/**
 * `logkeep export`: every entry matching the filters as NDJSON, newest
 * first, to a file or standard output, optionally gzip-compressed. It holds
 * one page at a time (each written, and the writer drained, before the next
 * is asked for), so memory stays flat however many entries there are.
 * After an interruption it prints the cursor to resume from; a page that
 * fails with 5xx or no answer is asked again a few times first.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { backoffDelay, DEFAULT_BACKOFF } from '../../lib/client/backoff.js';
import { ApiSession } from './api.js';
import { CliError, EXIT } from './errors.js';
import { FILTER_HELP, FILTER_OPTIONS, filterQuery, parseCommand } from './filters.js';
import { API_PAGE_MAX } from './query-command.js';
import { loadCredentials } from './profile.js';

/** Attempts of one page before the export stops (and prints its cursor). */
const PAGE_ATTEMPTS = 5;

export const EXPORT_HELP = `Usage: logkeep export (--project <id> | --group <id>) [filters] [options]

Writes every matching entry as NDJSON, newest first, in constant memory.

${FILTER_HELP}
Options:
  -o, --output <file>           Write here instead of standard output (appended to with --cursor)
      --gzip                    Compress (gzip); with --cursor and --output the file gains another gzip member
      --cursor <cursor>         Resume an interrupted export where it stopped (it prints the cursor)
      --profile <name>          The stored profile to use`;

export async function runExport(argv: readonly string[]): Promise<void> {
  const { values } = parseCommand(argv, { ...FILTER_OPTIONS, output: { type: 'string', short: 'o' }, gzip: { type: 'boolean' }, cursor: { type: 'string' } });
  if (values.help) return void process.stdout.write(`${EXPORT_HELP}\n`);
  const filters = filterQuery(values);
  const session = new ApiSession(await loadCredentials(values.profile as string | undefined));
  const output = values.output as string | undefined;
  const sink: Writable = output === undefined ? process.stdout : createWriteStream(output, { flags: values.cursor === undefined ? 'w' : 'a' });
  const gzip = values.gzip ? createGzip() : null;
  if (gzip) gzip.pipe(sink);
  const target: Writable = gzip ?? sink;
  const progress = process.stderr.isTTY === true;
  const started = Date.now();

  let cursor = (values.cursor as string | undefined) ?? null;
  let written = 0;
  const interrupted = new AbortController();
  const onSignal = () => interrupted.abort();
  process.once('SIGINT', onSignal);
  try {
    do {
      if (interrupted.signal.aborted) throw new CliError('interrupted', EXIT.failure);
      const page = new URLSearchParams(filters);
      page.set('limit', String(API_PAGE_MAX));
      if (cursor !== null) page.set('cursor', cursor);
      const body = await pageWithRetries(session, page);
      if (body.items.length > 0 && !target.write(body.items.map((e) => `${JSON.stringify(e)}\n`).join(''))) await once(target, 'drain');
      written += body.items.length;
      cursor = body.next_cursor;
      if (progress)
        process.stderr.write(
          `\r${written.toLocaleString('en')} entries, ${Math.round(written / Math.max(0.001, (Date.now() - started) / 1000)).toLocaleString('en')}/s `,
        );
    } while (cursor !== null);
  } catch (err) {
    if (progress) process.stderr.write('\n');
    if (cursor !== null) process.stderr.write(`export stopped after ${written} entries; resume with --cursor ${cursor}\n`);
    else if (written === 0) process.stderr.write('export stopped before the first page\n');
    throw err;
  } finally {
    process.removeListener('SIGINT', onSignal);
    await finish(target, sink, output !== undefined);
  }
  if (progress) process.stderr.write('\n');
  process.stderr.write(`exported ${written} entries\n`);
}

async function pageWithRetries(session: ApiSession, page: URLSearchParams): Promise<{ items: unknown[]; next_cursor: string | null }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await session.getJson('/v1/logs', page, 'export')) as { items: unknown[]; next_cursor: string | null };
    } catch (err) {
      // A refusal (4xx) will not change; an outage may.
      if (!(err instanceof CliError) || err.exitCode !== EXIT.failure || attempt >= PAGE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, DEFAULT_BACKOFF, Math.random)));
    }
  }
}

/** Ends the gzip stream (its trailer) and the file, and waits for both; standard output is left open. */
async function finish(target: Writable, sink: Writable, ownSink: boolean): Promise<void> {
  if (target !== sink) {
    target.end();
    await once(target, 'end').catch(() => undefined);
  }
  if (ownSink) {
    if (target === sink) sink.end();
    await once(sink, 'close').catch(() => undefined);
  } else if (target !== sink) {
    // gzip piped into stdout: wait until its last bytes were handed over.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
