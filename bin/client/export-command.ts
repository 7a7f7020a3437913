/**
 * `logkeep export`: every entry matching the filters as NDJSON, newest
 * first, to a file or standard output, optionally gzip-compressed. It holds
 * at most two pages at a time (the next is asked for while the writer
 * drains the last, and written once it has), so memory stays flat however
 * many entries there are.
 * After an interruption it prints the cursor to resume from; a page that
 * fails with 5xx or no answer is asked again a few times first.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { backoffDelay, DEFAULT_BACKOFF } from '../../lib/client/backoff.js';
import { ApiSession, USER_AGENT } from './api.js';
import { CliError, EXIT, httpError } from './errors.js';
import { FILTER_HELP, FILTER_OPTIONS, filterQuery, parseCommand } from './filters.js';
import { API_PAGE_MAX } from './query-command.js';
import { loadCredentials } from './profile.js';

/** Attempts of one page before the export stops (and prints its cursor). */
const PAGE_ATTEMPTS = 5;

/** As undici's (fetch's) headers and body timeouts. */
const PAGE_IDLE_TIMEOUT_MS = 300_000;
/** A page of 200 entries is far smaller; an answer past this is not a page of the service's (and is not buffered further). */
const PAGE_MAX_BYTES = 64 * 1024 * 1024;

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
  const pages = new PageReader(session);
  const output = values.output as string | undefined;
  const sink: Writable = output === undefined ? process.stdout : createWriteStream(output, { flags: values.cursor === undefined ? 'w' : 'a' });
  const gzip = values.gzip ? createGzip() : null;
  if (gzip) gzip.pipe(sink);
  const target: Writable = gzip ?? sink;
  const progress = process.stderr.isTTY === true;
  const started = Date.now();

  let cursor = (values.cursor as string | undefined) ?? null;
  let written = 0;
  let draining: Promise<unknown> | null = null;
  // The page whose write is still draining starts at `drainingFrom`: until the drain confirms it, a resume starts there.
  let drainingFrom: string | null = null;
  let resumeFrom: string | null = cursor;
  const interrupted = new AbortController();
  const onSignal = () => interrupted.abort();
  process.once('SIGINT', onSignal);
  try {
    do {
      if (interrupted.signal.aborted) throw new CliError('interrupted', EXIT.failure);
      const page = new URLSearchParams(filters);
      page.set('limit', String(API_PAGE_MAX));
      if (cursor !== null) page.set('cursor', cursor);
      resumeFrom = draining ? drainingFrom : cursor;
      const body = await pageWithRetries(pages, page);
      await draining;
      draining = null;
      resumeFrom = cursor;
      if (body.items.length > 0 && !target.write(body.items.map((e) => `${JSON.stringify(e)}\n`).join(''))) {
        draining = once(target, 'drain');
        draining.catch(() => undefined); // awaited before the next write, or after the last page
        drainingFrom = cursor;
      }
      written += body.items.length;
      cursor = body.next_cursor;
      resumeFrom = draining ? drainingFrom : cursor;
      if (progress)
        process.stderr.write(
          `\r${written.toLocaleString('en')} entries, ${Math.round(written / Math.max(0.001, (Date.now() - started) / 1000)).toLocaleString('en')}/s `,
        );
    } while (cursor !== null);
    await draining;
  } catch (err) {
    if (progress) process.stderr.write('\n');
    if (resumeFrom !== null) process.stderr.write(`export stopped after ${written} entries; resume with --cursor ${resumeFrom}\n`);
    else
      process.stderr.write(
        written === 0
          ? 'export stopped before the first page\n'
          : `export stopped after ${written} entries, within the first page: export again without --cursor\n`,
      );
    throw err;
  } finally {
    process.removeListener('SIGINT', onSignal);
    pages.close();
    await finish(target, sink, output !== undefined);
  }
  if (progress) process.stderr.write('\n');
  process.stderr.write(`exported ${written} entries\n`);
}

interface Page {
  items: unknown[];
  next_cursor: string | null;
}

async function pageWithRetries(pages: PageReader, page: URLSearchParams): Promise<Page> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await pages.read(page);
    } catch (err) {
      // A refusal (4xx) will not change; an outage may.
      if (!(err instanceof CliError) || err.exitCode !== EXIT.failure || attempt >= PAGE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, DEFAULT_BACKOFF, Math.random)));
    }
  }
}

/**
 * Pages of `GET /v1/logs` over one keep-alive connection, through node:http
 * rather than fetch: for the same pages fetch kept the process's RSS well
 * higher, past the export's budget (docs/measurements.md, "Command line").
 * Errors read as ApiSession's do; a page with no progress for
 * PAGE_IDLE_TIMEOUT_MS fails as an outage would (fetch's own limit).
 */
class PageReader {
  private readonly secure: boolean;
  private readonly agent: HttpAgent;

  constructor(private readonly session: ApiSession) {
    this.secure = new URL(session.url).protocol === 'https:';
    this.agent = this.secure ? new HttpsAgent({ keepAlive: true, maxSockets: 1 }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  }

  async read(query: URLSearchParams): Promise<Page> {
    const url = new URL(`${this.session.url}/v1/logs?${query.toString()}`);
    const headers = { authorization: `Bearer ${await this.session.bearer()}`, 'user-agent': USER_AGENT, accept: 'application/json' };
    let answer: { status: number; text: string };
    try {
      answer = await new Promise((resolve, reject) => {
        const request = this.secure ? httpsRequest : httpRequest;
        const req = request(url, { agent: this.agent, headers }, (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let bytes = 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > PAGE_MAX_BYTES) req.destroy(new Error(`an answer over ${PAGE_MAX_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
          res.on('close', () => {
            if (!res.complete) reject(new Error('the connection closed before the answer ended'));
          });
        });
        req.setTimeout(PAGE_IDLE_TIMEOUT_MS, () => req.destroy(new Error('no answer')));
        req.on('error', reject);
        req.end();
      });
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new CliError(`cannot reach ${url.origin}: ${code ?? (err as Error).message}`, EXIT.failure);
    }
    let body: unknown = null;
    try {
      body = answer.text ? JSON.parse(answer.text) : null;
    } catch {
      if (answer.status < 300) throw new CliError(`the service answered ${answer.status} with a body that is not JSON`, EXIT.failure);
    }
    if (answer.status < 200 || answer.status >= 300) throw httpError(answer.status, body, 'export');
    return body as Page;
  }

  close(): void {
    this.agent.destroy();
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
