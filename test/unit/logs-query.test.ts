import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { filterIsEmpty, parseSinceId, readLogFilter, readLogListQuery, readLogScope, readLogStreamQuery } from '../../lib/logs/log-query-params.js';
import { createCursorCodec } from '../../lib/core/pagination.js';
import { LogServiceError } from '../../lib/core/errors.js';

const cursors = createCursorCodec('query-test-secret');

function fails(fn: () => unknown, field: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof LogServiceError);
    assert.equal(e.status, 400);
    assert.equal(e.code, 'invalid_request');
    assert.deepEqual(e.details, { field, reason: 'invalid' });
    return true;
  });
}

const qs = (s: string) => new URLSearchParams(s);

describe('log query scope (the first check)', () => {
  it('needs exactly one of project_id and group_id', () => {
    assert.deepEqual(readLogScope(qs('project_id=3')), { kind: 'project', projectId: 3 });
    assert.deepEqual(readLogScope(qs('group_id=12&level=bogus')), { kind: 'group', groupId: 12 });
    fails(() => readLogScope(qs('')), 'project_id');
    fails(() => readLogScope(qs('level=info')), 'project_id');
    fails(() => readLogScope(qs('project_id=1&group_id=2')), 'project_id');
    fails(() => readLogScope(qs('project_id=&group_id=2')), 'project_id');
  });

  it('needs a positive integer id', () => {
    for (const v of ['0', '-1', 'abc', '1.0', '01', '', '99999999999999999']) fails(() => readLogScope(qs(`project_id=${v}`)), 'project_id');
    fails(() => readLogScope(qs('group_id=x')), 'group_id');
  });
});

describe('log filters', () => {
  it('reads nothing into an open filter', () => {
    assert.deepEqual(readLogFilter(qs('project_id=1')), { minLevel: null, from: null, to: null, words: [], prefixes: [], exact: [] });
  });

  it('reads level as a minimum', () => {
    assert.equal(readLogFilter(qs('level=warning')).minLevel, 2);
    for (const v of ['WARNING', 'warn', '', '3']) fails(() => readLogFilter(qs(`level=${v}`)), 'level');
  });

  it('reads from/to with the entry timestamp parser', () => {
    const f = readLogFilter(qs('from=2024-01-01T00:00:00%2B01:00&to=2024-01-02 00:00'));
    assert.equal(f.from, Date.UTC(2023, 11, 31, 23));
    assert.equal(f.to, Date.UTC(2024, 0, 2));
    fails(() => readLogFilter(qs('from=yesterday')), 'from');
    fails(() => readLogFilter(qs('to=2024-02-30T00:00Z')), 'to');
    assert.ok(filterIsEmpty(readLogFilter(qs('from=2024-01-02T00:00Z&to=2024-01-01T00:00Z'))));
    assert.ok(!filterIsEmpty(readLogFilter(qs('from=2024-01-01T00:00Z&to=2024-01-01T00:00Z'))));
  });

  it('turns exact-match fields and context paths into paths and values, fields first, then context in query order', () => {
    const f = readLogFilter(qs('context.user.id=42&category=db&request_id=r-1&connection_generation=4&context.ok=true&logger=a.b'));
    assert.deepEqual(f.exact, [
      { path: ['category'], value: 'db' },
      { path: ['logger'], value: 'a.b' },
      { path: ['request_id'], value: 'r-1' },
      { path: ['connection_generation'], value: '4' },
      { path: ['user', 'id'], value: '42' },
      { path: ['ok'], value: 'true' },
    ]);
    assert.deepEqual(f.words, []);
    assert.deepEqual(f.prefixes, []);
  });

  it('ANDs repeated exact-match parameters and drops exact repeats', () => {
    const f = readLogFilter(qs('session_id=s1&category=db&session_id=s2&category=db&context.category=db&context.a.b=1&context.a.b=1&context.a.b=2'));
    assert.deepEqual(f.exact, [
      { path: ['category'], value: 'db' },
      { path: ['session_id'], value: 's1' },
      { path: ['session_id'], value: 's2' },
      { path: ['a', 'b'], value: '1' },
      { path: ['a', 'b'], value: '2' },
    ]);
    // Values are kept as sent: no trimming, no case folding, no word splitting.
    assert.deepEqual(readLogFilter(qs('context.k=%20Mixed%20Case%20')).exact, [{ path: ['k'], value: ' Mixed Case ' }]);
  });

  it('refuses a context path with an empty segment', () => {
    for (const key of ['context.', 'context..a', 'context.a.', 'context.a..b']) fails(() => readLogFilter(qs(`${key}=1`)), key);
  });

  it('reads q into words and prefixes', () => {
    const f = readLogFilter(qs('q=Disk full* disk'));
    assert.deepEqual(f.words, ['disk']);
    assert.deepEqual(f.prefixes, ['full']);
    assert.deepEqual(f.exact, []);
    const both = readLogFilter(qs('q=Σας 中文 err*&category=db'));
    assert.deepEqual(both.words, ['σας', '中文']);
    assert.deepEqual(both.prefixes, ['err']);
    assert.deepEqual(both.exact, [{ path: ['category'], value: 'db' }]);
    fails(() => readLogFilter(qs('q=***')), 'q');
  });

  it('bounds q: at most 16 distinct words and prefixes, each prefix at least 2 characters before its *', () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    assert.equal(readLogFilter(qs(`q=${words(16)}`)).words.length, 16);
    // Repeats and prefixes implied by a word do not count.
    assert.equal(readLogFilter(qs(`q=${words(16)} w0 w1* W2`)).words.length, 16);
    fails(() => readLogFilter(qs(`q=${words(17)}`)), 'q');
    fails(() => readLogFilter(qs(`q=${words(15)} ab* cd*`)), 'q');
    assert.deepEqual(readLogFilter(qs('q=ab* 中文*')).prefixes, ['ab', '中文']);
    for (const short of ['a*', 'x* disk', '中*', '7*']) fails(() => readLogFilter(qs(`q=${encodeURIComponent(short)}`)), 'q');
    assert.throws(() => readLogFilter(qs('q=a*')), /at least 2 letters or digits/);
  });

  it('bounds exact-match filters at 16 per query, named fields, context paths and repeats together', () => {
    const pairs = (n: number, at = 0) => Array.from({ length: n }, (_, i) => `context.k${i + at}=v`).join('&');
    assert.equal(readLogFilter(qs(pairs(16))).exact.length, 16);
    assert.equal(readLogFilter(qs(`${pairs(16)}&context.k0=v`)).exact.length, 16, 'an exact repeat adds nothing');
    fails(() => readLogFilter(qs(pairs(17))), 'context.k16');
    fails(() => readLogFilter(qs(`category=a&category=b&logger=c&${pairs(14)}`)), 'context.k13');
    fails(() => readLogFilter(qs(Array.from({ length: 17 }, (_, i) => `request_id=r${i}`).join('&'))), 'request_id');
  });

  it('refuses U+0000 in any filter value or context path, naming the parameter', () => {
    const nul = '%00';
    for (const field of [
      'category',
      'logger',
      'session_id',
      'request_id',
      'connection_generation',
      'tool_call_id',
      'message_id',
      'operation_id',
      'context.a.b',
      'q',
    ]) {
      fails(() => readLogFilter(qs(`${field}=x${nul}y`)), field);
    }
    fails(() => readLogFilter(qs(`context.a${nul}b=1`)), 'context.a\u0000b');
    for (const field of ['level', 'from', 'to']) fails(() => readLogFilter(qs(`${field}=${nul}`)), field);
    fails(() => readLogListQuery(qs(`limit=1${nul}`), cursors), 'limit');
    fails(() => readLogListQuery(qs(`cursor=${nul}`), cursors), 'cursor');
    fails(() => readLogStreamQuery(qs(`since_id=1${nul}`)), 'since_id');
    fails(() => readLogScope(qs(`project_id=1${nul}`)), 'project_id');
  });

  it('complains in order: level, from/to, context, q, then limit and cursor', () => {
    const all = 'level=x&from=x&to=x&context..=1&q=*&limit=0&cursor=x';
    fails(() => readLogListQuery(qs(all), cursors), 'level');
    fails(() => readLogListQuery(qs(all.replace('level=x&', '')), cursors), 'from');
    fails(() => readLogListQuery(qs(all.replace(/level=x&from=x&/, '')), cursors), 'to');
    fails(() => readLogListQuery(qs('context..=1&q=*&limit=0&cursor=x'), cursors), 'context..');
    fails(() => readLogListQuery(qs('q=*&limit=0&cursor=x'), cursors), 'q');
    fails(() => readLogListQuery(qs('limit=0&cursor=x'), cursors), 'limit');
    fails(() => readLogListQuery(qs('cursor=x'), cursors), 'cursor');
  });

  it('pages with the logs cursor namespace', () => {
    const c = cursors.encode('logs', 77);
    assert.deepEqual(readLogListQuery(qs(`limit=500&cursor=${c}`), cursors).page, { limit: 200, beforeId: 77 });
    fails(() => readLogListQuery(qs(`cursor=${cursors.encode('users', 77)}`), cursors), 'cursor');
  });

  it('reads since_id for the stream', () => {
    assert.equal(readLogStreamQuery(qs('since_id=0')).sinceId, 0);
    assert.equal(readLogStreamQuery(qs('')).sinceId, null);
    for (const v of ['-1', 'x', '1.5', '', '99999999999999999']) fails(() => readLogStreamQuery(qs(`since_id=${v}`)), 'since_id');
    fails(() => parseSinceId('abc', 'Last-Event-ID'), 'Last-Event-ID');
  });
});
