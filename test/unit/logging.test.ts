/**
 * `lib/logging.ts`: levels, the two formats, console routing, the redaction
 * safety net, and the log file rotated by size.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../lib/core/errors.js';
import { createServiceLogging, type LoggingOptions } from '../../lib/logging.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'logkeep-logging-'));
  dirs.push(d);
  return d;
}

function sinks() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } };
}

function options(overrides: Partial<LoggingOptions> & Pick<LoggingOptions, 'stdout' | 'stderr'>): LoggingOptions {
  return { level: 'info', format: 'console', file: null, maxFileBytes: 10 * 1024 * 1024, maxFiles: 5, ...overrides };
}

describe('own logging', () => {
  it('console format: one readable line per record, info to stdout, warnings and errors to stderr, below the level dropped', async () => {
    const s = sinks();
    const { logger, close } = createServiceLogging(options({ level: 'info', stdout: s.stdout, stderr: s.stderr }));
    logger.debug('hidden detail');
    logger.info('request', { method: 'GET', path: '/v1/groups', status: 200 });
    logger.warn('careful');
    logger.error('broken', { code: 7 });
    logger.error('failed', { error: new Error('boom') });
    await close();
    assert.equal(s.out.length, 1);
    assert.match(s.out[0]!, /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] INFO: request \{"method":"GET","path":"\/v1\/groups","status":200\}\n$/);
    assert.equal(s.err.length, 3);
    assert.match(s.err[0]!, /WARN: careful/);
    assert.match(s.err[1]!, /ERROR: broken \{"code":7\}/);
    // An error and its stack stay on the record's one line.
    assert.match(s.err[2]!, /^\[[^\]]+\] ERROR: failed \{"error":\{"type":"Error","message":"boom","stack":"Error: boom\\n[^\n]*\}\}\n$/);
  });

  it('json format: one object per line with the level name, an ISO time, the message and the fields', async () => {
    const s = sinks();
    const { logger } = createServiceLogging(options({ level: 'debug', format: 'json', stdout: s.stdout, stderr: s.stderr }));
    logger.debug('starting', { port: 8080 });
    logger.error('failed', { error: new Error('boom') });
    const debug = JSON.parse(s.out[0]!);
    assert.equal(debug.level, 'debug');
    assert.equal(debug.msg, 'starting');
    assert.equal(debug.port, 8080);
    assert.match(debug.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const error = JSON.parse(s.err[0]!);
    assert.equal(error.level, 'error');
    assert.equal(error.error.message, 'boom');
  });

  it('silent drops everything', () => {
    const s = sinks();
    const { logger } = createServiceLogging(options({ level: 'silent', stdout: s.stdout, stderr: s.stderr }));
    logger.error('nothing');
    assert.deepEqual([s.out, s.err], [[], []]);
  });

  it('replaces fields under secret names, as a safety net behind the callers', () => {
    const s = sinks();
    const { logger } = createServiceLogging(options({ format: 'json', stdout: s.stdout, stderr: s.stderr }));
    logger.info('oops', {
      password: 'p-secret',
      refresh_token: 'r-secret',
      authorization: 'Bearer a-secret',
      headers: { authorization: 'Bearer h-secret' },
      form: { new_password: 'n-secret' },
      body: '{"k":"b-secret"}',
      kept: 'visible',
    });
    const text = s.out.join('');
    assert.ok(!/secret/.test(text), text);
    assert.match(text, /"kept":"visible"/);
    assert.match(text, /\[redacted\]/);
  });

  it('rotates the log file by size, keeping the current file and --log-max-files rotated ones', async () => {
    const dir = tempDir();
    const file = join(dir, 'logkeep.log');
    const s = sinks();
    const maxFileBytes = 1000;
    const { logger, close } = createServiceLogging(options({ format: 'json', file, maxFileBytes, maxFiles: 2, stdout: s.stdout, stderr: s.stderr }));
    for (let i = 0; i < 200; i++) logger.info('line', { i });
    await close();
    assert.deepEqual(readdirSync(dir).sort(), ['logkeep.log', 'logkeep.log.1', 'logkeep.log.2']);
    const lineBytes = Buffer.byteLength(readFileSync(`${file}.1`, 'utf8').split('\n')[0]!) + 1;
    for (const name of ['logkeep.log.1', 'logkeep.log.2']) {
      const size = statSync(join(dir, name)).size;
      // A line is never split: a file passes the limit by at most one line.
      assert.ok(size >= maxFileBytes && size < maxFileBytes + lineBytes, `${name}: ${size} bytes`);
    }
    const numbers = (name: string) =>
      readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).i as number);
    // Oldest first across the files, without a gap: .2 then .1 then the current file
    // (which is empty when the last line happened to complete a file).
    const kept = [...numbers('logkeep.log.2'), ...numbers('logkeep.log.1'), ...numbers('logkeep.log')];
    assert.equal(kept.at(-1), 199, 'close() flushed every line');
    assert.deepEqual(
      kept,
      Array.from({ length: kept.length }, (_, k) => 200 - kept.length + k),
    );
    assert.deepEqual([s.out, s.err], [[], []], 'nothing on the console when logging to a file');
  });

  it('refuses a log file it cannot write, as a configuration problem', () => {
    const s = sinks();
    assert.throws(
      () => createServiceLogging(options({ file: join(tempDir(), 'missing-dir', 'x.log'), stdout: s.stdout, stderr: s.stderr })),
      (err: unknown) => err instanceof ConfigError && /--log-file/.test(err.message),
    );
    const dir = tempDir();
    assert.throws(
      () => createServiceLogging(options({ file: dir, stdout: s.stdout, stderr: s.stderr })),
      (err: unknown) => err instanceof ConfigError,
    );
  });
});
