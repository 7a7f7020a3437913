/**
 * Helpers for the log HTTP tests: sending batches, reading every page of a
 * query, a deterministic mixed fixture, and a reference matcher written
 * straight from the filter rules (independent of the index), so query answers are
 * checked against the rules rather than against the implementation.
 */
import assert from 'node:assert/strict';
import { api, type ApiResponse } from './service.js';

export const LEVELS = ['debug', 'info', 'warning', 'error', 'critical'] as const;
const NULLABLE = ['category', 'logger', 'session_id', 'request_id', 'connection_generation', 'tool_call_id', 'message_id', 'operation_id'];

/** POST /v1/logs with a secret key; `body` is serialised unless it is already a string. */
export function ingest(url: string, secret: string | null, body: unknown): Promise<ApiResponse> {
  return api(url, 'POST', '/v1/logs', { token: secret, raw: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** Ingests and asserts every entry was accepted; returns the 202 body. */
export async function ingestAll(url: string, secret: string, entries: unknown[]): Promise<{ accepted: number; rejected: unknown[] }> {
  const res = await ingest(url, secret, entries);
  assert.equal(res.status, 202, res.text);
  assert.deepEqual(res.body.rejected, [], res.text);
  assert.equal(res.body.accepted, entries.length);
  return res.body;
}

/** GET /v1/logs with the given parameters (a query string or pairs). */
export function queryLogs(url: string, token: string, params: string | [string, string][]): Promise<ApiResponse> {
  const qs = typeof params === 'string' ? params : new URLSearchParams(params).toString();
  return api(url, 'GET', `/v1/logs?${qs}`, { token });
}

/** Follows next_cursor to the end; returns every item and every raw page text. */
export async function queryAllPages(url: string, token: string, params: [string, string][], limit: number): Promise<{ items: any[]; pages: string[] }> {
  const items: any[] = [];
  const pages: string[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1000; guard++) {
    const res = await queryLogs(url, token, [...params, ['limit', String(limit)], ...(cursor ? ([['cursor', cursor]] as [string, string][]) : [])]);
    assert.equal(res.status, 200, res.text);
    pages.push(res.text);
    items.push(...res.body.items);
    cursor = res.body.next_cursor;
    if (cursor === null) return { items, pages };
  }
  throw new Error('paging did not end');
}

/** The entry as GET /v1/logs returns it, minus the server fields. */
export function submittedPart(item: Record<string, unknown>, submitted: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(item)) {
    if (key === 'id' || key === 'project_id' || key === 'received_at') continue;
    if (NULLABLE.includes(key) && item[key] === null && !Object.hasOwn(submitted, key)) continue;
    Object.defineProperty(out, key, { value: item[key], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// ---- reference matcher ---------------------------------------------------------

function wordsOfText(text: string): string[] {
  return (text.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => [...w.toLowerCase()].slice(0, 64).join(''));
}

function valueWords(v: unknown, out: Set<string>): void {
  if (typeof v === 'string') for (const w of wordsOfText(v)) out.add(w);
  else if (typeof v === 'number') for (const w of wordsOfText(JSON.stringify(v))) out.add(w);
  else if (Array.isArray(v)) for (const x of v) valueWords(x, out);
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) valueWords((v as Record<string, unknown>)[k], out);
}

function instant(text: string): number {
  const ms = Date.parse(text);
  assert.ok(Number.isFinite(ms), `fixture timestamps must carry Z or an offset: ${text}`);
  return ms;
}

function leafMatches(leaf: unknown, wanted: string): boolean {
  if (typeof leaf === 'string') return leaf === wanted;
  if (typeof leaf === 'number' || typeof leaf === 'boolean') return JSON.stringify(leaf) === wanted;
  return false;
}

function atPath(entry: Record<string, unknown>, segments: string[]): unknown {
  let v: unknown = entry;
  for (const s of segments) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, s)) return undefined;
    v = (v as Record<string, unknown>)[s];
  }
  return v;
}

/** Whether `entry` matches the query parameters under the filter rules (scope and paging ignored). */
export function referenceMatches(entry: Record<string, unknown>, params: [string, string][]): boolean {
  for (const [key, value] of params) {
    if (key === 'level') {
      if (LEVELS.indexOf(entry.level as never) < LEVELS.indexOf(value as never)) return false;
    } else if (key === 'from') {
      if (instant(entry.timestamp as string) < instant(value)) return false;
    } else if (key === 'to') {
      if (instant(entry.timestamp as string) > instant(value)) return false;
    } else if (NULLABLE.includes(key)) {
      if (!Object.hasOwn(entry, key) || !leafMatches(entry[key], value)) return false;
    } else if (key.startsWith('context.')) {
      if (!leafMatches(atPath(entry, key.slice('context.'.length).split('.')), value)) return false;
    } else if (key === 'q') {
      const words = new Set<string>();
      valueWords(entry, words);
      for (const m of value.matchAll(/([\p{L}\p{N}]+)(\*?)/gu)) {
        const w = [...m[1]!.toLowerCase()].slice(0, 64).join('');
        if (m[2] === '*' ? ![...words].some((x) => x.startsWith(w)) : !words.has(w)) return false;
      }
    }
  }
  return true;
}

// ---- fixture ---------------------------------------------------------------------

/** A deterministic mix of entries exercising every filter (timestamps one minute apart, mixed offsets). */
export function mixedEntries(count: number, seed = 1): Record<string, unknown>[] {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const words = ['Disk', 'full', 'timeout', 'Überlauf', 'café', '数据库', 'connection', 'reset', 'retry', 'payment', 'user', 'login', 'ΣΟΦΙΑ', 'err42', 'warn'];
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const base = Date.UTC(2025, 2, 1, 0, 0) + i * 60_000;
    const offsetMin = pick([0, 0, 60, -330]);
    const local = new Date(base + offsetMin * 60_000).toISOString().slice(0, 19);
    const zone =
      offsetMin === 0
        ? 'Z'
        : `${offsetMin > 0 ? '+' : '-'}${String(Math.floor(Math.abs(offsetMin) / 60)).padStart(2, '0')}:${String(Math.abs(offsetMin) % 60).padStart(2, '0')}`;
    const entry: Record<string, unknown> = {
      level: pick(LEVELS),
      event: `${pick(words)} ${pick(words)} #${i}`,
      timestamp: `${local}${zone}`,
    };
    if (rnd() < 0.7) entry.category = pick(['db', 'http', 'auth', 'db.pool']);
    else if (rnd() < 0.5) entry.category = null;
    if (rnd() < 0.6) entry.logger = pick(['app.http', 'app.db', 'worker']);
    if (rnd() < 0.5) entry.request_id = `req-${Math.floor(rnd() * 8)}`;
    if (rnd() < 0.4) entry.session_id = `s${Math.floor(rnd() * 4)}`;
    if (rnd() < 0.5) entry.connection_generation = rnd() < 0.5 ? Math.floor(rnd() * 3) : String(Math.floor(rnd() * 3));
    if (rnd() < 0.3) entry.tool_call_id = pick(['t1', 't2']);
    if (rnd() < 0.3) entry.message_id = pick(['m1', 'm2', null]);
    if (rnd() < 0.3) entry.operation_id = pick(['op-a', 'op-b']);
    entry.user = { id: Math.floor(rnd() * 5), name: pick(['Ada', 'Grace', 'Linus']), admin: rnd() < 0.3 };
    if (rnd() < 0.5) entry.http = { status: pick([200, 404, 500]), path: `/api/${pick(words)}` };
    if (rnd() < 0.3) entry.tags = [pick(words), Math.floor(rnd() * 100)];
    if (rnd() < 0.2) entry['a.b'] = 'dotted';
    if (rnd() < 0.2) entry.a = { b: pick(['dotted', 'nested']) };
    if (rnd() < 0.1) Object.defineProperty(entry, '__proto__', { value: { polluted: pick(words) }, enumerable: true, writable: true, configurable: true });
    if (rnd() < 0.2) entry.duration = Math.round(rnd() * 1000) / 10;
    out.push(entry);
  }
  return out;
}

/**
 * Queries covering every filter alone and in combination (for the fixture
 * above); at least 50.
 */
export function fixtureQueries(): [string, string][][] {
  const t = (minutes: number) => new Date(Date.UTC(2025, 2, 1, 0, 0) + minutes * 60_000).toISOString();
  const single: [string, string][][] = [
    [],
    ...LEVELS.map((l): [string, string][] => [['level', l]]),
    [['category', 'db']],
    [['category', 'db.pool']],
    [['category', 'nothing']],
    [['logger', 'app.http']],
    [['request_id', 'req-3']],
    [['session_id', 's1']],
    [['connection_generation', '1']],
    [['connection_generation', '2']],
    [['tool_call_id', 't2']],
    [['message_id', 'm1']],
    [['message_id', 'null']],
    [['operation_id', 'op-a']],
    [['from', t(30)]],
    [['to', t(40)]],
    [
      ['from', t(20)],
      ['to', t(25)],
    ],
    [
      ['from', '2025-03-01T01:00:00+01:00'],
      ['to', '2025-03-01T00:10:00Z'],
    ],
    [['from', t(5000)]],
    [['q', 'disk']],
    [['q', 'DISK full']],
    [['q', 'café']],
    [['q', 'CAFÉ']],
    [['q', '数据库']],
    [['q', 'σοφια']],
    [['q', 'conn*']],
    [['q', 'err4*']],
    [['q', 'ada']],
    [['q', '404']],
    [['q', 'dotted']],
    [['q', 'zzzz']],
    [['q', 'polluted']],
    [['context.user.name', 'Ada']],
    [['context.user.id', '3']],
    [['context.user.admin', 'true']],
    [['context.http.status', '500']],
    [['context.a.b', 'dotted']],
    [['context.a.b', 'nested']],
    [['context.category', 'db']],
    [['context.connection_generation', '0']],
    [['context.tags', 'x']],
    [['context.user', '[object Object]']],
    [['context.duration', '12.5']],
    [['context.nothing.here', 'x']],
    [['context.__proto__.polluted', 'Disk']],
  ];
  const combined: [string, string][][] = [
    [
      ['level', 'warning'],
      ['category', 'db'],
    ],
    [
      ['level', 'error'],
      ['q', 'disk'],
    ],
    [['q', 'timeout retry']],
    [
      ['q', 'user'],
      ['context.user.name', 'Grace'],
    ],
    [
      ['category', 'http'],
      ['logger', 'app.http'],
      ['level', 'info'],
    ],
    [
      ['request_id', 'req-1'],
      ['session_id', 's2'],
    ],
    [
      ['from', t(10)],
      ['to', t(90)],
      ['level', 'warning'],
    ],
    [
      ['from', t(10)],
      ['to', t(90)],
      ['q', 'payment'],
    ],
    [
      ['context.user.id', '1'],
      ['context.user.admin', 'false'],
    ],
    [
      ['connection_generation', '0'],
      ['level', 'debug'],
    ],
    [
      ['q', 'reset*'],
      ['category', 'auth'],
      ['from', t(3)],
    ],
    [
      ['category', 'db'],
      ['category', 'http'],
    ],
  ];
  return [...single, ...combined];
}
