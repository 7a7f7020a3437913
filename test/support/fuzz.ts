/**
 * Hostile HTTP requests for the route fuzz (fast-check generators), a raw
 * client that can send what `fetch` refuses (invalid UTF-8, chunked bodies,
 * odd paths), and the checks every answer must pass: no 5xx, no internals.
 *
 * A request is plain data (caller by name, path, headers, body text) so a
 * counterexample prints as something a person can replay.
 */
import fc from 'fast-check';
import { type Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { Route } from '../../lib/http/route.js';

// ---------------------------------------------------------------- checks

/** Text that only appears in a response when internals leak out. */
export const LEAK_PATTERNS: readonly RegExp[] = [
  /\bat (?:async |new )?[\w$.<>[\]]+ \([^)]*(?::\d+:\d+|<anonymous>|index \d+)\)/, // a stack frame `at fn (file:1:2)`
  /\bat (?:file:|node:|\/)/, // a stack frame without a function name
  /\b[A-Z]?[A-Za-z]*Error:/, // `Error:`, `RangeError:`, `SqliteError:` …
  /\/lib\//,
  /\.ts:/,
  /\.[cm]?js:\d/,
  /node_modules|node:internal/,
  /SQLITE_/,
  /syntax error at or near/,
  /violates/,
  /relation "/,
  /column "/,
  /duplicate key value/,
  /invalid byte sequence/,
  /unsupported Unicode escape/,
  /invalid input syntax/,
  /out of range for type/,
  /Maximum call stack/,
  /\bECONN[A-Z]+/,
];

/** The first leak pattern found in `text`, or null. */
export function leakIn(text: string): string | null {
  for (const p of LEAK_PATTERNS) {
    const m = p.exec(text);
    if (m) return m[0];
  }
  return null;
}

export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** A 200 event stream, closed by the client as soon as its head arrived. */
  streamed: boolean;
}

/** Why a response is unacceptable, or null when it is fine. */
export function problemWith(method: string, res: WireResponse): string | null {
  if (res.status >= 500) return `status ${res.status}: ${res.text.slice(0, 300)}`;
  const leak = leakIn(res.text);
  if (leak !== null) return `internals in the body (${JSON.stringify(leak)}): ${res.text.slice(0, 300)}`;
  // Headers over the limit stop the parser mid-request, before any route: a bare 431 (see server-bounds.ts).
  if (res.status === 431) return res.text === '' ? null : `status 431 with a body: ${res.text.slice(0, 300)}`;
  if (res.status >= 400 && method !== 'HEAD') {
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return `status ${res.status} without a JSON error body: ${res.text.slice(0, 300)}`;
    }
    if (typeof body !== 'object' || body === null || typeof (body as { error?: unknown }).error !== 'string') {
      return `status ${res.status} without an error code: ${res.text.slice(0, 300)}`;
    }
  }
  return null;
}

// ---------------------------------------------------------------- values

const CONTROL = fc.constantFrom('\u0000', '\u0001', '\u0007', '\b', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u2028', '\u2029', '\ufeff', '\uffff');
const LONE_SURROGATE = fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d', '\ude00b');
const SPECIAL = fc.constantFrom(
  '',
  ' ',
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'null',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '99999999999999999999999',
  "' OR '1'='1",
  '"; DROP TABLE users; --',
  '\\',
  '%',
  '%zz',
  '%00',
  '*',
  'a*',
  '**',
  '"',
  'NEAR(',
  'a OR b',
  '§',
  '§000000000000',
  '../../etc/passwd',
  'me',
  'admin',
  'İ',
  'ß',
  '😀',
  'e\u0301',
);
// Built once: tens of KiB each.
const LONG = fc.constantFrom('x'.repeat(40_000), 'é'.repeat(20_000), '\u0000'.repeat(10_000), '😀'.repeat(10_000), `${'ab'.repeat(100)} `.repeat(150));

/** Any string worth throwing at a text field; never one that looks like leaked internals itself. */
export const hostileString: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
    { weight: 3, arbitrary: SPECIAL },
    { weight: 2, arbitrary: CONTROL },
    // U+0000 on its own: text columns of PostgreSQL refuse it, so it gets a weight of its own.
    { weight: 3, arbitrary: fc.constantFrom('\u0000', 'a\u0000b') },
    { weight: 2, arbitrary: LONE_SURROGATE },
    { weight: 1, arbitrary: LONG },
    { weight: 2, arbitrary: fc.array(fc.oneof(CONTROL, LONE_SURROGATE, SPECIAL, fc.string({ maxLength: 4 })), { maxLength: 5 }).map((a) => a.join('')) },
  )
  .filter((s) => leakIn(s) === null);

/** Percent-encodes text; a lone surrogate becomes the (invalid) UTF-8 bytes a careless encoder would send. */
export function percentEncode(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

/** Raw fragments that no encoder produces. */
const ENCODING_GARBAGE = fc.constantFrom('%', '%z', '%zz', '%00', '%FF%FE', '%E2%82', '%C0%AF', '%ED%A0%80', '+', '&', '=', '==', ';', '#', '%25', '%%');

const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom(
    '1e309',
    '-1e309',
    '-0',
    '0',
    '1.5',
    '1e-400',
    '2.0',
    '1E2',
    '123456789012345678901234567890',
    '9007199254740993',
    '-9007199254740993',
    '36501',
    '1e3',
  ),
);

/** JSON text nested `depth` levels deep, built as a string (JSON.stringify would overflow first). */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

const deepJsonText = fc.tuple(fc.constantFrom(100, 2_500, 5_000, 20_000), fc.constantFrom('array' as const, 'object' as const)).map(([d, k]) => deepJson(d, k));

/** An object as JSON text from key/value-text pairs: keeps duplicate keys and raw number spellings. */
export function objectText(pairs: readonly (readonly [string, string | undefined])[]): string {
  return `{${pairs
    .filter((p): p is readonly [string, string] => p[1] !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}}`;
}

const hostileKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', '', '.', 'a.b', 'id', 'level'), hostileString);

/** Any JSON value as text: hostile strings and numbers, wrong types, odd keys, sometimes very deep. */
export const anyJsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('null', 'true', 'false'),
    numberText,
    hostileString.map((s) => JSON.stringify(s)),
    fc.array(tie('value'), { maxLength: 4 }).map((a) => `[${a.join(',')}]`),
    fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 }).map(objectText),
  ),
})).value;

// ---------------------------------------------------------------- bodies

/** An ordinary word, so a value gets past the first check and its hostile part reaches the next one. */
const word = fc.stringMatching(/^[a-z][a-z0-9-]{2,12}$/);

/** Text for a string field: hostile on its own, or hidden behind an ordinary prefix or suffix. */
export const fieldText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: word },
  { weight: 2, arbitrary: fc.tuple(word, hostileString).map(([w, h]) => `${w}${h}`) },
  { weight: 1, arbitrary: fc.tuple(hostileString, word).map(([h, w]) => `${h}${w}`) },
);

/** Values that get a field past its type check, so the hostile part reaches the code behind it. */
function fieldValues(ids: readonly number[]) {
  const str = fieldText.map((s) => JSON.stringify(s));
  const password = fc.oneof(
    str,
    fieldText.map((s) => JSON.stringify(`password-${s}`)),
  );
  const id = fc.oneof(fc.constantFrom(...ids).map(String), fc.integer({ min: 1, max: 60 }).map(String), numberText);
  const count = fc.oneof(
    { weight: 3, arbitrary: fc.oneof(fc.integer({ min: 1, max: 36500 }).map(String), fc.constant('null')) },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom('0', '36501', '9007199254740991', '9007199254740992'), numberText) },
  );
  const oneOf = (...values: string[]) =>
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values).map((v) => JSON.stringify(v)) }, { weight: 1, arbitrary: str });
  return {
    name: str,
    username: str,
    password,
    current_password: password,
    new_password: password,
    display_name: fc.oneof(str, fc.constant('null')),
    email: fc.oneof(
      str,
      fc.constant('null'),
      fc.tuple(word, fieldText).map(([w, h]) => JSON.stringify(`${w}@${h || 'x'}`)),
    ),
    label: fc.oneof(str, fc.constant('null')),
    retention_days: count,
    max_entries: count,
    max_bytes: count,
    user_id: id,
    subject_id: id,
    scope_id: fc.oneof(id, fc.constant('null')),
    subject_type: oneOf('user', 'team'),
    role: oneOf('admin', 'owner', 'user'),
    scope_type: oneOf('global', 'group', 'project'),
  };
}

/** A JSON object over the fields the routes read, each usually well typed, plus hostile extras. */
function fieldObjectText(ids: readonly number[]): fc.Arbitrary<string> {
  const fields = fieldValues(ids);
  const known = fc.record(
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, fc.oneof({ weight: 9, arbitrary: v }, { weight: 1, arbitrary: anyJsonText })])) as Record<
      string,
      fc.Arbitrary<string>
    >,
    { requiredKeys: [] },
  );
  const extras = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...Object.keys(fields)), hostileKey), anyJsonText), { maxLength: 3 });
  return fc.tuple(known, extras).map(([k, e]) => objectText([...Object.entries(k), ...e]));
}

const LEVELS = ['debug', 'info', 'warning', 'error', 'critical'];
const VALID_INSTANTS = ['2024-05-01T12:00:00Z', '2024-05-01 12:00', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z', '1970-01-01T00:00:00-23:59'];
const INSTANTS = [...VALID_INSTANTS, '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T00:00:00+99:99', '+275760-09-13T00:00:00Z'];
const CORRELATION = ['session_id', 'request_id', 'connection_generation', 'tool_call_id', 'message_id', 'operation_id'];

/** Mostly `valid`, sometimes anything: an entry with one wrong field is rejected before its hostile parts are read. */
const mostly = (valid: fc.Arbitrary<string>) => fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: anyJsonText });

/** One submitted log entry: mostly valid in shape, with hostile content. */
const entryText: fc.Arbitrary<string> = (() => {
  const str = fieldText.map((s) => JSON.stringify(s));
  const fields: Record<string, fc.Arbitrary<string>> = {
    level: mostly(fc.constantFrom(...LEVELS).map((l) => JSON.stringify(l))),
    event: mostly(fieldText.map((s) => JSON.stringify(s || 'event'))),
    timestamp: mostly(fc.constantFrom(...VALID_INSTANTS).map((t) => JSON.stringify(t))),
    category: mostly(str),
    logger: mostly(str),
    context: fc.oneof(anyJsonText, deepJsonText),
    ...Object.fromEntries(CORRELATION.map((f) => [f, mostly(f === 'connection_generation' ? fc.oneof(str, numberText) : str)])),
  };
  const known = fc.record(fields, { requiredKeys: ['level', 'event', 'timestamp'] });
  const extras = fc.array(fc.tuple(hostileKey, fc.oneof(anyJsonText, deepJsonText)), { maxLength: 3 });
  return fc.tuple(known, extras).map(([k, e]) => objectText([...Object.entries(k), ...e]));
})();

const FORM_KEYS = ['grant_type', 'username', 'password', 'refresh_token', 'token', 'token_type_hint', 'client_id', 'scope'];

function formText(usernames: readonly string[]): fc.Arbitrary<string> {
  const value = fc.oneof(
    fc.constantFrom('password', 'refresh_token', 'client_credentials', 'access_token', ...usernames).map(percentEncode),
    hostileString.map(percentEncode),
    ENCODING_GARBAGE,
  );
  const pair = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...FORM_KEYS), value).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: fc.tuple(hostileString.map(percentEncode), value).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: ENCODING_GARBAGE },
  );
  return fc.array(pair, { maxLength: 6 }).map((p) => p.join('&'));
}

/** Bytes that are not UTF-8, written as latin1 characters (each one byte on the wire). */
const INVALID_UTF8 = fc.constantFrom('\xff\xfe', '\xc3\x28', '\xa0\xa1', '\xe2\x28\xa1', '\xf0\x90\x28\xbc', '\xed\xa0\x80', '\xc0\xaf', '\x80');

export interface FuzzBody {
  text: string;
  /** latin1: every character is one byte (used to send invalid UTF-8). */
  encoding: 'utf8' | 'latin1';
  /** No Content-Length: sent in two chunks with chunked transfer encoding. */
  chunked: boolean;
}

function bodyFor(route: Route | null, ids: readonly number[], usernames: readonly string[]): fc.Arbitrary<FuzzBody | null> {
  const utf8 = (text: fc.Arbitrary<string>) => text.map((t) => ({ text: t, encoding: 'utf8' as const }));
  const kinds = fc.oneof(
    { weight: route?.bodyLimit === 'ingest' ? 1 : 6, arbitrary: utf8(fieldObjectText(ids)) },
    {
      weight: route?.bodyLimit === 'ingest' ? 6 : 1,
      arbitrary: utf8(
        fc.array(fc.oneof({ weight: 4, arbitrary: entryText }, { weight: 1, arbitrary: anyJsonText }), { maxLength: 5 }).map((a) => `[${a.join(',')}]`),
      ),
    },
    { weight: route?.envelope === 'oauth' ? 6 : 1, arbitrary: utf8(formText(usernames)) },
    { weight: 2, arbitrary: utf8(fc.oneof(anyJsonText, deepJsonText)) },
    {
      weight: 1,
      arbitrary: utf8(
        fc.constantFrom('', ' ', '{', '[', '{"a":1,}', 'nul', '\ufeff{}', '{"__proto__":{"admin":true}}', '{"a":1,"a":2}', '"\\ud800"', '{"name":"\\u0000"}'),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('{"name":"', '{"username":"', '[{"level":"info","event":"', 'grant_type=password&username='), INVALID_UTF8)
        .map(([head, bytes]) => ({
          text: head.startsWith('grant') ? `${head}${bytes}` : `${head}${bytes}"}${head.startsWith('[') ? ',"timestamp":"2024-05-01T12:00:00Z"}]' : ''}`,
          encoding: 'latin1' as const,
        })),
    },
  );
  return fc.option(
    fc.tuple(kinds, fc.boolean()).map(([b, chunked]) => ({ ...b, chunked })),
    { freq: 6 },
  );
}

// ---------------------------------------------------------------- paths and queries

/** Path ids: real ones, and everything a careless parser would take for one. */
export function pathIdFor(ids: readonly number[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ids).map(String) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 60 }).map(String) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '0',
        '-1',
        '00',
        '01',
        '1.0',
        '1e3',
        '+1',
        '%201',
        '0x1',
        '9007199254740991',
        '9007199254740993',
        '9999999999999999',
        '99999999999999999999',
        'abc',
        'me',
        '%00',
        '%zz',
        '%',
        '%2F',
        '..',
        '-0',
        'NaN',
        'Infinity',
      ),
    },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length > 0).map(percentEncode) },
  );
}

const QUERY_ID_KEYS = ['group_id', 'project_id', 'actor_user_id', 'target_id', 'subject_id', 'scope_id'];
const QUERY_KEYS = [
  ...QUERY_ID_KEYS,
  'limit',
  'cursor',
  'name',
  'username',
  'level',
  'from',
  'to',
  'q',
  'category',
  'logger',
  ...CORRELATION,
  'since_id',
  'action',
  'target_type',
  'subject_type',
  'scope_type',
  'context.a',
  'context.user.id',
  'context.',
  'context..x',
  'context.__proto__',
  'context.constructor.prototype',
];

function queryValue(key: string, ids: readonly number[], cursors: readonly string[]): fc.Arbitrary<string> {
  const plausible: Record<string, fc.Arbitrary<string>> = {
    limit: fc.constantFrom('0', '1', '200', '201', '-1', '1e3', '99999999999999999999', '1.5'),
    cursor: fc.constantFrom(...cursors, '.', 'a.b', 'MQ.AAAA', 'OTk5OTk5OTk5OTk5OTk5OTk5OQ.AAAAAAAAAAAAAAAAAAAAAA', 'x'.repeat(300)),
    level: fc.constantFrom(...LEVELS, 'INFO', 'warn'),
    from: fc.constantFrom(...INSTANTS),
    to: fc.constantFrom(...INSTANTS),
    since_id: fc.constantFrom('0', '1', '9999999999999999', '99999999999999999', '-1'),
    subject_type: fc.constantFrom('user', 'team'),
    scope_type: fc.constantFrom('global', 'group', 'project'),
    q: fc.constantFrom('a*', 'ab* cd*', '*', 'x'.repeat(100), 'NEAR(a b)', '"quoted"', 'a AND b', '§', 'café*'),
  };
  const own = QUERY_ID_KEYS.includes(key) ? pathIdFor(ids) : plausible[key]?.map(percentEncode);
  const hostile = fc.oneof(hostileString.map(percentEncode), ENCODING_GARBAGE);
  return own ? fc.oneof({ weight: 3, arbitrary: own }, { weight: 1, arbitrary: hostile }) : hostile;
}

/** A query string (with its `?`), or '' — repeated keys, unknown keys and raw encoding garbage included. */
export function queryFor(ids: readonly number[], cursors: readonly string[]): fc.Arbitrary<string> {
  const known = fc.constantFrom(...QUERY_KEYS).chain((k) => queryValue(k, ids, cursors).map((v) => `${k}=${v}`));
  const pair = fc.oneof(
    { weight: 6, arbitrary: known },
    { weight: 1, arbitrary: fc.tuple(hostileString, hostileString).map(([k, v]) => `context.${percentEncode(k)}=${percentEncode(v)}`) },
    { weight: 1, arbitrary: fc.tuple(hostileString, hostileString).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`) },
    { weight: 1, arbitrary: ENCODING_GARBAGE },
  );
  // Lists scoped by one project or group are asked for one of those first, most of the time.
  const scope = fc.option(
    fc.tuple(fc.constantFrom('project_id', 'group_id'), fc.constantFrom(...ids)).map(([k, id]) => `${k}=${id}`),
    { freq: 3 },
  );
  return fc.tuple(scope, fc.array(pair, { maxLength: 6 }), fc.option(MANY_TERMS, { freq: 50 })).map(([s, p, many]) => {
    const all = [...(s === null ? [] : [s]), ...p, ...(many === null ? [] : [many])];
    return all.length ? `?${all.join('&')}` : '';
  });
}

/**
 * Hundreds of search terms or filters in one query, as many as fit the
 * service's URL limit (8 KiB): a query planner's depth is finite. Longer
 * URLs are refused before any parsing (the LONG strings reach that case).
 */
const MANY_TERMS = fc.constantFrom(
  `q=${Array.from({ length: 1_000 }, (_, i) => `w${i}`).join('+')}`,
  `q=${Array.from({ length: 1_000 }, (_, i) => `w${i}*`).join('+')}`,
  Array.from({ length: 400 }, (_, i) => `context.k${i}=v+${i}`).join('&'),
);

// ---------------------------------------------------------------- callers and headers

export type CallerName = 'admin' | 'user' | 'key';

/** Who sends the request: a real caller by name, no credentials, raw text, or a forgery made from the admin's token. */
export type FuzzAuth =
  | { caller: CallerName }
  | { caller: 'anonymous' }
  | { raw: string }
  | { forge: 'alg-none' | 'payload-changed' | 'key-prefixed-jwt' | 'jwt-as-basic' };

const rawAuth: fc.Arbitrary<FuzzAuth> = fc
  .oneof(
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'bearer x',
      'Basic YWRtaW46YWRtaW4=',
      'Bearer slk_',
      'Bearer slk_00',
      'Bearer a.b.c',
      'Bearer ..',
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.',
    ),
    hostileString.map((s) => `Bearer ${headerSafe(s)}`),
    hostileString.map((s) => `Bearer slk_${headerSafe(s)}`),
  )
  .map((raw): FuzzAuth => ({ raw }));
const forgedAuth = fc.constantFrom<FuzzAuth>({ forge: 'alg-none' }, { forge: 'payload-changed' }, { forge: 'key-prefixed-jwt' }, { forge: 'jwt-as-basic' });

/** Callers weighted by the route's credential kind: mostly ones that get past authentication, always some that do not. */
function authFor(route: Route | null): fc.Arbitrary<FuzzAuth> {
  const w = (caller: FuzzAuth, weight: number) => ({ weight, arbitrary: fc.constant(caller) });
  const kind = route?.auth ?? 'none';
  return fc.oneof(
    w({ caller: 'admin' }, kind === 'user' ? 6 : 1),
    w({ caller: 'user' }, kind === 'user' ? 4 : 1),
    w({ caller: 'key' }, kind === 'project-key' ? 12 : 1),
    w({ caller: 'anonymous' }, kind === 'none' ? 4 : 1),
    { weight: 1, arbitrary: rawAuth },
    { weight: 1, arbitrary: forgedAuth },
  );
}

/** Keeps the characters Node lets a header value carry (tab, printable ASCII, latin1). */
export function headerSafe(text: string): string {
  return text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '').trim();
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '',
  ';;;',
  'application/json; charset=\x00',
];

/** The one origin the fuzzed service allows, so CORS answers (and preflights) are fuzzed too. */
export const ALLOWED_ORIGIN = 'https://app.example';

const headersArb: fc.Arbitrary<Record<string, string>> = (() => {
  const hostileHeader = hostileString.map(headerSafe);
  return fc.record(
    {
      'content-type': fc.oneof(fc.constantFrom(...CONTENT_TYPES).map(headerSafe), hostileHeader),
      'x-forwarded-for': fc.oneof(fc.constantFrom('1.2.3.4', '::1', 'unknown, 1.2.3.4', ',,,', '999.999.999.999'), hostileHeader),
      'last-event-id': fc.oneof(fc.constantFrom('0', '1', '-1', '99999999999999999', ' 5 ', 'x'), hostileHeader),
      origin: fc.oneof(fc.constantFrom(ALLOWED_ORIGIN, 'https://evil.example', 'null'), hostileHeader),
      'access-control-request-method': fc.oneof(fc.constantFrom('POST', 'DELETE'), hostileHeader),
      'user-agent': hostileHeader,
      accept: fc.constantFrom('text/event-stream', 'application/json', '*/*', 'text/html'),
    },
    { requiredKeys: [] },
  );
})();

// ---------------------------------------------------------------- requests

export interface FuzzRequest {
  method: string;
  /** Path and query string, as sent on the request line. */
  path: string;
  auth: FuzzAuth;
  headers: Record<string, string>;
  body: FuzzBody | null;
}

/** What the generators know about the service under test. */
export interface FuzzWorld {
  /** Ids of objects that exist (users, groups, teams, projects, keys, grants). */
  ids: readonly number[];
  /** Usernames that exist, and real cursors, so some requests get past the first checks. */
  usernames: readonly string[];
  cursors: readonly string[];
  /** Path ids the fuzz must not use on a route (the callers' own records). */
  spared(route: Route, param: string): readonly string[];
}

/** Requests for one row of the route table: its method and path, every `:param` replaced. */
export function requestFor(route: Route, world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const params = route.path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
  const paramValues = fc.tuple(...params.map((p) => pathIdFor(world.ids).filter((v) => !world.spared(route, p).includes(v))));
  return fc
    .record({
      values: paramValues,
      query: queryFor(world.ids, world.cursors),
      auth: authFor(route),
      headers: headersArb,
      body: bodyFor(route, world.ids, world.usernames),
    })
    .map(({ values, query, auth, headers, body }) => {
      let i = 0;
      const path = route.path.replace(/:[A-Za-z]+/g, () => values[i++]!);
      return printable({ method: route.method, path: `${path}${query}`, auth, headers, body });
    });
}

/** Counterexamples print as one short line (a 20,000-level body would fill the screen). */
function printable(r: FuzzRequest): FuzzRequest {
  return Object.defineProperty(r, fc.toStringMethod, { value: () => describeRequest(r), enumerable: false });
}

/** Requests for paths and methods the table does not serve (or serves under another method). */
export function strayRequest(routes: readonly Route[], world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const templates = [...new Set(routes.map((r) => r.path)), '/', '/v1', '/v1/', '/healthz', '/v2/logs'];
  const path = fc.oneof(
    fc
      .constantFrom(...templates)
      .chain((t) => fc.tuple(...t.split('/').map((seg) => (seg.startsWith(':') ? pathIdFor(world.ids) : fc.constant(seg)))).map((s) => s.join('/'))),
    fc.tuple(fc.constantFrom(...templates), fc.constantFrom('/', '//', '/x', '%2F', '/..', '/%00', '?', '#')).map(([t, tail]) => `${t}${tail}`),
    fc
      .array(
        fc.oneof(
          hostileString.map(percentEncode),
          ENCODING_GARBAGE.filter((g) => g !== '#' && g !== '&'),
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((s) => `/${s.join('/')}`),
  );
  // Request targets a URL parser may read as naming a host: protocol-relative and absolute forms.
  const prefix = fc.constantFrom('', '', '', '/', '//evil.example', '//x:99999', '//[', '//%zz', 'http://localhost', 'http://x:99999', 'http://[::1');
  return fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'),
      path: fc.tuple(prefix, path, queryFor(world.ids, world.cursors)).map(([x, p, q]) => `${x}${p.replace(/^\/*/, '/')}${q}`),
      auth: authFor(null),
      headers: headersArb,
      body: bodyFor(null, world.ids, world.usernames),
    })
    .map(printable);
}

// ---------------------------------------------------------------- sending

export interface Credentials {
  admin: string;
  user: string;
  key: string;
}

function authorizationOf(auth: FuzzAuth, creds: Credentials): string | undefined {
  if ('raw' in auth) return auth.raw;
  if ('forge' in auth) {
    const [head, payload, signature] = creds.admin.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    switch (auth.forge) {
      case 'alg-none':
        return `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
      case 'payload-changed':
        return `Bearer ${head}.${b64({ ...claims, sub: '99999999999999999999', tv: '1e309', roles: [{ role: 'admin', scope_type: 'global' }] })}.${signature}`;
      case 'key-prefixed-jwt':
        return `Bearer slk_${creds.admin}`;
      case 'jwt-as-basic':
        return `Basic ${creds.admin}`;
    }
  }
  if (auth.caller === 'anonymous') return undefined;
  return `Bearer ${creds[auth.caller]}`;
}

/** Sends one fuzz request over a real socket and reads the answer (an event stream only up to its head). */
export function send(baseUrl: string, agent: Agent, r: FuzzRequest, creds: Credentials): Promise<WireResponse> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { ...r.headers };
  const authorization = authorizationOf(r.auth, creds);
  if (authorization !== undefined) headers.authorization = authorization;
  const bytes = r.body === null ? null : Buffer.from(r.body.text, r.body.encoding);
  if (bytes !== null && r.method !== 'HEAD') {
    // Explicit: Node sends GET and DELETE bodies with neither header otherwise.
    if (r.body!.chunked) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = String(bytes.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: r.method, path: r.path, headers, agent }, (res) => {
      const status = res.statusCode ?? 0;
      if (status === 200 && String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status, headers: res.headers, text: '', streamed: true });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), streamed: false }));
      res.on('error', reject);
    });
    // A guard against a hung test, not an assertion about speed.
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer to ${r.method} ${r.path} in 60 s`)));
    req.on('error', reject);
    if (bytes === null || r.method === 'HEAD') req.end();
    else if (r.body!.chunked) {
      const half = Math.floor(bytes.length / 2);
      req.write(bytes.subarray(0, half));
      req.end(bytes.subarray(half));
    } else req.end(bytes);
  });
}

/** One line that replays the request by hand (long values cut). */
export function describeRequest(r: FuzzRequest): string {
  const cut = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…(${s.length} chars)` : s);
  const who = 'raw' in r.auth ? `raw ${JSON.stringify(cut(r.auth.raw))}` : 'forge' in r.auth ? `forged ${r.auth.forge}` : r.auth.caller;
  const body = r.body === null ? 'no body' : `${r.body.encoding} body ${JSON.stringify(cut(r.body.text))}${r.body.chunked ? ' (chunked)' : ''}`;
  return `${r.method} ${cut(r.path)} as ${who}, headers ${JSON.stringify(r.headers, (_k, v: string) => (typeof v === 'string' ? cut(v) : v))}, ${body}`;
}
