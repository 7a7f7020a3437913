/**
 * `logkeep ingest`: sends NDJSON or JSON-array files (or standard input)
 * to `POST /v1/logs`, in batches of at most 1,000 entries or 1 MiB,
 * gzip-compressed, one batch in flight, retried with backoff on 429, 5xx
 * or no answer (the client library's transport and backoff). Each
 * rejection is reported by file and line (or array index), and the
 * summary counts what was accepted and rejected. A line that is not JSON is
 * rejected here without being sent.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { encodeBatchBody } from '../../lib/client/body-compression.js';
import { answerByteLimit } from '../../lib/client/ingest-answer.js';
import { postBatch } from '../../lib/client/ingest-transport.js';
import { DEFAULT_BACKOFF, retryDelay } from '../../lib/client/backoff.js';
import { CliError, EXIT, exitCodeForStatus, usageError } from './errors.js';
import { parseCommand } from './filters.js';
import { loadCredentials } from './profile.js';

/** Entries per batch: the service's own answer lists up to 1,000 rejections, so every one of a batch can be reported. */
export const BATCH_MAX_ENTRIES = 1000;
/** Bytes of JSON per batch: a tenth of the service's default body limit, so one slow batch never holds much. */
export const BATCH_MAX_BYTES = 1024 * 1024;
/** A JSON-array file is read whole; past this size, send NDJSON instead (read line by line). */
export const JSON_FILE_MAX_BYTES = 64 * 1024 * 1024;
/** Attempts of one batch before the command gives up. */
const BATCH_ATTEMPTS = 8;
/** Rejections printed one by one; the rest are counted. */
const REJECTIONS_SHOWN = 20;
/** Compress bodies from this size on. */
const COMPRESS_ABOVE_BYTES = 1024;
/** How long a batch may go without a byte of answer, and in all. */
const REQUEST_TIMEOUT_MS = 30_000;

export const INGEST_HELP = `Usage: logkeep ingest [files…] [options]

Sends log entries from NDJSON files (one JSON object per line) or JSON
files holding an array, or from standard input (no file, or -).

Options:
  -p, --project <id>            The project to write to (required with an access key; a secret key names its own)
      --quiet                   Print only the summary
      --profile <name>          The stored profile to use`;

interface Source {
  /** file:line, or file[index] */
  where: string;
  text: string;
}

interface Totals {
  sent: number;
  accepted: number;
  rejected: number;
  shown: number;
}

export async function runIngest(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parseCommand(argv, { project: { type: 'string', short: 'p' }, quiet: { type: 'boolean' } }, true);
  if (values.help) return void process.stdout.write(`${INGEST_HELP}\n`);
  const credentials = await loadCredentials(values.profile as string | undefined);
  const key = credentials.key;
  if (key === null)
    throw new CliError('ingest needs an access key with `ingest` (or a project secret key): run `logkeep login --key …` or set LOGKEEP_KEY', EXIT.unauthorized);
  const project = values.project as string | undefined;
  if (key.startsWith('lka_') && project === undefined) throw usageError('--project is required with an access key');
  const url = new URL(credentials.url);
  const path = `${url.pathname.replace(/\/+$/, '')}/v1/logs${key.startsWith('lka_') ? `?project_id=${encodeURIComponent(project!)}` : ''}`;
  const dispatcher = new Pool(url.origin, { headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
  const totals: Totals = { sent: 0, accepted: 0, rejected: 0, shown: 0 };
  const reject = (where: string, error: string, message: string) => {
    totals.rejected += 1;
    if (!values.quiet && totals.shown < REJECTIONS_SHOWN) {
      totals.shown += 1;
      process.stderr.write(`${where}: ${error}: ${message}\n`);
    }
  };

  const send = async (batch: Source[]) => {
    if (batch.length === 0) return;
    const encoded = await encodeBatchBody(`[${batch.map((s) => s.text).join(',')}]`, COMPRESS_ABOVE_BYTES);
    const signal = new AbortController().signal;
    for (let attempt = 1; ; attempt++) {
      const outcome = await postBatch(
        { dispatcher, origin: url.origin, path, secretKey: key, timeoutMs: REQUEST_TIMEOUT_MS, totalTimeoutMs: 2 * REQUEST_TIMEOUT_MS, signal, now: Date.now },
        encoded,
        answerByteLimit(batch.length),
      );
      if (outcome.kind === 'delivered') {
        totals.sent += batch.length;
        const listed = outcome.body?.rejected ?? [];
        totals.accepted += outcome.body?.accepted ?? batch.length - listed.length;
        for (const r of listed) reject(batch[r.index]?.where ?? `entry ${r.index}`, r.error, r.message);
        // Rejections past the ones listed are counted, not described.
        const unlisted = (outcome.body?.rejectedCount ?? listed.length) - listed.length;
        for (let i = 0; i < unlisted; i++) reject('(not listed)', 'rejected', 'more rejections than the answer lists');
        return;
      }
      if (outcome.kind === 'refused') throw new CliError(`ingest: ${outcome.reason}`, exitCodeForStatus(outcome.status));
      if (attempt >= BATCH_ATTEMPTS) throw new CliError(`ingest: gave up after ${attempt} attempts: ${outcome.reason}`, EXIT.failure);
      await new Promise((resolve) => setTimeout(resolve, retryDelay(attempt, outcome.retryAfterMs, DEFAULT_BACKOFF, Math.random)));
    }
  };

  try {
    let batch: Source[] = [];
    let bytes = 0;
    for await (const source of readSources(positionals.length === 0 ? ['-'] : positionals, reject)) {
      const size = Buffer.byteLength(source.text, 'utf8') + 1;
      if (batch.length > 0 && (batch.length >= BATCH_MAX_ENTRIES || bytes + size > BATCH_MAX_BYTES)) {
        await send(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(source);
      bytes += size;
    }
    await send(batch);
  } finally {
    await dispatcher.close();
  }
  if (totals.rejected > totals.shown) process.stderr.write(`… and ${totals.rejected - totals.shown} more rejections\n`);
  process.stdout.write(`accepted ${totals.accepted}, rejected ${totals.rejected}\n`);
  if (totals.rejected > 0) process.exitCode = EXIT.partial;
}

/** Every entry of the inputs in order; lines that are not JSON are rejected here. */
async function* readSources(inputs: readonly string[], reject: (where: string, error: string, message: string) => void): AsyncGenerator<Source> {
  for (const input of inputs) {
    const name = input === '-' ? 'stdin' : input;
    if (input !== '-' && (await looksLikeArray(input))) {
      const size = (await stat(input)).size;
      if (size > JSON_FILE_MAX_BYTES) throw new CliError(`${input}: a JSON array over ${JSON_FILE_MAX_BYTES} bytes; send it as NDJSON instead`, EXIT.usage);
      let array: unknown;
      try {
        array = JSON.parse(await readFile(input, 'utf8'));
      } catch (err) {
        throw new CliError(`${input}: not valid JSON (${(err as Error).message})`, EXIT.usage);
      }
      if (!Array.isArray(array)) throw new CliError(`${input}: not a JSON array`, EXIT.usage);
      for (let i = 0; i < array.length; i++) yield { where: `${name}[${i}]`, text: JSON.stringify(array[i]) };
      continue;
    }
    const lines = createInterface({ input: input === '-' ? process.stdin : createReadStream(input), crlfDelay: Infinity });
    let n = 0;
    for await (const line of lines) {
      n += 1;
      if (line.trim() === '') continue;
      try {
        JSON.parse(line);
      } catch {
        reject(`${name}:${n}`, 'validation_error', 'the line is not JSON');
        continue;
      }
      yield { where: `${name}:${n}`, text: line };
    }
  }
}

/** Whether a file's first non-blank character opens a JSON array. */
async function looksLikeArray(path: string): Promise<boolean> {
  const stream = createReadStream(path, { start: 0, end: 4095, encoding: 'utf8' });
  let head = '';
  for await (const chunk of stream) head += chunk as string;
  return head.trimStart().startsWith('[');
}
