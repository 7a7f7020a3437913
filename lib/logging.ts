/**
 * The service's own diagnostics (the `--log-*`
 * settings): a `ServiceLogger` built on pino, writing `console` lines (one
 * readable line each, via pino-pretty's formatter) or `json` lines (one
 * object per line), to the console or to a file rotated by size
 * (rotating-file-stream, classic `file`, `file.1` … `file.N` numbering).
 *
 * Process-free: the caller passes the console streams (the bin passes
 * `process.stdout`/`process.stderr`) and closes the logging when it is done.
 * Everything is written synchronously except the file, whose pending lines
 * `close()` flushes.
 *
 * Secrets: the service never passes a password, token, secret key,
 * `Authorization` header or request body to the logger (tests drive real
 * requests carrying secrets and search every line); as a second line of
 * defence, fields under the usual secret names are replaced by `[redacted]`.
 */
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { pino, stdSerializers, stdTimeFunctions, type DestinationStream, type LevelWithSilent, type StreamEntry } from 'pino';
import PinoPretty from 'pino-pretty';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import type { LogFormat, LogLevelName } from './core/config.js';
import { ConfigError } from './core/errors.js';
import type { ServiceLogger } from './core/logger.js';

/** Where console lines go: anything with a synchronous-enough `write`. */
export interface TextSink {
  write(text: string): unknown;
}

export interface LoggingOptions {
  level: LogLevelName;
  format: LogFormat;
  /** null: the console. */
  file: string | null;
  /** A file reaching this size is rotated (a line is never split across two files). */
  maxFileBytes: number;
  /** Rotated files kept besides the current one: `file.1` (newest) … `file.N`. */
  maxFiles: number;
  /** Console destinations: debug and info to `stdout`, warnings and errors to `stderr`. */
  stdout: TextSink;
  stderr: TextSink;
}

export interface ServiceLogging {
  readonly logger: ServiceLogger;
  /** Flushes and closes the log file (nothing to do on the console). Idempotent. */
  close(): Promise<void>;
}

/** Field names whose values never reach a log line, at the top level or one level down. */
const SECRET_FIELDS = [
  'password',
  'new_password',
  'current_password',
  'token',
  'access_token',
  'refresh_token',
  'secret',
  'secret_key',
  'authorization',
  'cookie',
  'body',
];
const REDACT_PATHS = [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`), 'headers.authorization', 'req.headers.authorization'];

/**
 * Builds the logging the configuration asks for. Throws ConfigError when
 * the log file's directory does not exist or cannot be written (checked
 * here, so the bin exits 78 before opening the port).
 */
export function createServiceLogging(options: LoggingOptions): ServiceLogging {
  const format = options.format === 'json' ? (line: string) => line : consoleFormatter();
  const file = options.file === null ? null : openLogFile(options.file, options.maxFileBytes, options.maxFiles, options.stderr);
  const streams: StreamEntry[] = file
    ? [{ level: 'trace', stream: formatted(file.sink, format) }]
    : [
        { level: 'trace', stream: formatted(options.stdout, format) },
        { level: 'warn', stream: formatted(options.stderr, format) },
      ];
  const log = pino(
    {
      level: options.level as LevelWithSilent,
      timestamp: stdTimeFunctions.isoTime,
      // Readable level names in JSON; the console formatter reads pino's numbers.
      ...(options.format === 'json' ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
      serializers: { error: stdSerializers.err, err: stdSerializers.err },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    // dedupe: each line goes only to the highest matching stream (warnings to stderr alone).
    pino.multistream(streams, { dedupe: true }),
  );
  let closing: Promise<void> | null = null;
  return {
    logger: {
      debug: (msg, fields) => log.debug(fields ?? {}, msg),
      info: (msg, fields) => log.info(fields ?? {}, msg),
      warn: (msg, fields) => log.warn(fields ?? {}, msg),
      error: (msg, fields) => log.error(fields ?? {}, msg),
    },
    close() {
      closing ??= file ? file.close() : Promise.resolve();
      return closing;
    },
  };
}

/** One readable line per record, errors included: `[time] LEVEL: message {fields}`, times in UTC. */
function consoleFormatter(): (line: string) => string {
  const pretty = PinoPretty.prettyFactory({
    colorize: false,
    singleLine: true,
    translateTime: "UTC:yyyy-mm-dd'T'HH:MM:ss.l'Z'",
    ignore: 'pid,hostname',
    // Errors inline as JSON too (their stack's newlines escaped): one record is always one line.
    errorLikeObjectKeys: [],
  });
  return (line) => pretty(line);
}

function formatted(sink: TextSink, format: (line: string) => string): DestinationStream {
  return { write: (line: string) => void sink.write(format(line)) };
}

interface LogFile {
  sink: TextSink;
  close(): Promise<void>;
}

function openLogFile(path: string, maxFileBytes: number, maxFiles: number, stderr: TextSink): LogFile {
  const absolute = resolve(path);
  const directory = dirname(absolute);
  try {
    accessSync(directory, fsConstants.W_OK);
    if (existsSync(absolute)) {
      if (!statSync(absolute).isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
      accessSync(absolute, fsConstants.W_OK);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError([`--log-file: cannot write the log file ${absolute} (${code})`]);
  }
  const stream: RotatingFileStream = createStream(basename(absolute), {
    path: directory,
    size: `${maxFileBytes}B`,
    rotate: maxFiles,
  });
  // After an error the stream is closed for good: later lines go to stderr instead of being lost.
  let failed = false;
  stream.on('error', (err: Error) => {
    if (failed) return;
    failed = true;
    stderr.write(`logkeep: cannot write the log file ${absolute} (${err.message}); logging to stderr from now on\n`);
  });
  return {
    sink: { write: (text: string) => (failed ? stderr.write(text) : stream.write(text)) },
    close: () =>
      new Promise<void>((done) => {
        if (failed || stream.writableEnded) return done();
        stream.once('error', () => done());
        stream.end(() => done());
      }),
  };
}
