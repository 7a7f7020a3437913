/**
 * The table of startup settings and how each one is read from its sources
 * (precedence, empty values, secret files). Pure: the flags, the
 * environment and the file reader are passed in, so every rule is testable
 * without a process.
 */
import { CONFIG_DEFAULTS, type LogServiceConfig } from './core/config.js';

/** Where a resolved value came from, as `--print-config` shows it. */
export type SettingSource = 'cli' | 'env' | 'default';

/**
 * How a setting's text becomes a value. `optional-*` settings are null when
 * unset; a `secret` has no flag and may come from `<NAME>_FILE`.
 */
export type SettingKind = 'string' | 'optional-string' | 'integer' | 'optional-integer' | 'boolean' | 'list' | 'secret';

export type SettingKey = keyof LogServiceConfig;

export interface SettingSpec {
  key: SettingKey;
  kind: SettingKind;
  /** `--http-port`; null for secrets, which have no flag. */
  flag: string | null;
  /** `SERVICE_HTTP_PORT`: the flag upper-cased, `-` as `_`, prefixed. */
  env: string;
  /** One of the database settings, the only ones `create-admin` reads. */
  database: boolean;
  /** One line for `--help`. */
  description: string;
}

const DATABASE_KEYS: ReadonlySet<SettingKey> = new Set<SettingKey>([
  'dbBackend',
  'dbPath',
  'dbServerHost',
  'dbServerPort',
  'dbServerDatabase',
  'dbServerUsername',
  'dbServerPassword',
  'dbServerPoolSize',
  'dbServerSslMode',
  'dbReadPoolSize',
]);

/** `dbServerSslMode` → `db-server-ssl-mode`. */
function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** `--http-port` (or the key's kebab form) → `SERVICE_HTTP_PORT` (rule 2). */
export function envNameFor(name: string): string {
  return `SERVICE_${name.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`;
}

function setting(key: SettingKey, kind: SettingKind, description: string): SettingSpec {
  const name = kebab(key);
  return {
    key,
    kind,
    flag: kind === 'secret' ? null : `--${name}`,
    env: envNameFor(name),
    database: DATABASE_KEYS.has(key),
    description,
  };
}

/** Every setting, in table order (which is also `--help`, `--print-config` and the documentation's order). */
export const SETTINGS: readonly SettingSpec[] = [
  setting('httpHost', 'string', 'Address to listen on'),
  setting('httpPort', 'integer', 'Port to listen on'),
  setting('httpMaxHeaderBytes', 'integer', 'Largest request line plus headers, in bytes (larger: 431)'),
  setting('httpMaxUrlBytes', 'integer', 'Longest request URL, in bytes (longer: 400)'),
  setting('httpHeadersTimeoutSeconds', 'integer', "Seconds a client gets to send a request's headers"),
  setting('httpRequestTimeoutSeconds', 'integer', 'Seconds a client gets to send a whole request, body included'),
  setting('httpKeepAliveTimeoutSeconds', 'integer', 'Seconds an idle keep-alive connection stays open'),
  setting('httpMaxConnections', 'integer', 'Most connections open at once; more are closed at once'),
  setting('dbBackend', 'string', "Storage backend: 'file' (SQLite) or 'server' (PostgreSQL)"),
  setting('dbPath', 'optional-string', 'SQLite database file (required with the file backend)'),
  setting('dbServerHost', 'optional-string', 'PostgreSQL host (required with the server backend)'),
  setting('dbServerPort', 'integer', 'PostgreSQL port'),
  setting('dbServerDatabase', 'optional-string', 'PostgreSQL database (required with the server backend)'),
  setting('dbServerUsername', 'optional-string', 'PostgreSQL user (required with the server backend)'),
  setting('dbServerPassword', 'secret', 'PostgreSQL password (required with the server backend)'),
  setting('dbServerPoolSize', 'integer', 'PostgreSQL connections, 1 to 64'),
  setting('dbServerSslMode', 'string', "PostgreSQL TLS: 'disable', 'require' (certificate not checked) or 'verify-full'"),
  setting('jwtSecret', 'secret', 'Access-token signing secret (required, never generated)'),
  setting('jwtIssuer', 'string', "Value of the tokens' iss claim"),
  setting('passwordHashMaxWaiting', 'integer', 'Password hashes that may wait their turn; past it sign-ins answer 503'),
  setting('maxIngestBodyBytes', 'integer', 'Largest POST /v1/logs body, in bytes'),
  setting('retentionPurgeIntervalSeconds', 'integer', 'Seconds between retention sweeps'),
  setting('rateLimitEnabled', 'boolean', 'Rate-limit credential-sensitive endpoints'),
  setting('rateLimitBucketCapacity', 'integer', 'Rate-limit bucket capacity'),
  setting('rateLimitRefillPerMinute', 'integer', 'Rate-limit tokens refilled per minute'),
  setting('rateLimitMaxKeys', 'integer', 'Most rate-limit keys kept'),
  setting('trustedProxyHops', 'integer', 'Proxies in front whose X-Forwarded-For is trusted (0: ignore it)'),
  setting('corsAllowedOrigins', 'list', 'Comma-separated origins allowed by CORS (empty: no CORS headers)'),
  setting('auditRetentionDays', 'optional-integer', 'Days audit entries are kept (unset: forever)'),
  setting('authEventRetentionDays', 'optional-integer', 'Days auth.* audit entries are kept (unset: forever)'),
  setting('auditPurgeBatchSize', 'integer', 'Audit rows deleted per purge chunk'),
  setting('dbReadPoolSize', 'integer', 'SQLite read connections, 0 to 16 (file backend only)'),
  setting('sseHeartbeatIntervalSeconds', 'integer', 'Seconds between live-stream heartbeats'),
  setting('sseMaxStreams', 'integer', 'Most live streams open at once (more: 429)'),
  setting('sseMaxStreamsPerUser', 'integer', 'Most live streams one user may have open (more: 429)'),
  setting('metricsEnabled', 'boolean', 'Serve Prometheus metrics at GET /metrics'),
  setting('metricsToken', 'secret', 'Bearer token GET /metrics requires (unset: none)'),
  setting('logLevel', 'string', 'Own diagnostics: trace, debug, info, warn (or warning), error, fatal or silent'),
  setting('logFormat', 'string', "Own diagnostics format: 'console' or 'json'"),
  setting('logFile', 'optional-string', 'Own diagnostics file (unset: the console)'),
  setting('logMaxFileBytes', 'integer', 'Own log file size before rotation, in bytes'),
  setting('logMaxFiles', 'integer', 'Rotated own log files kept besides the current one (file.1 … file.N)'),
  setting('bootstrapAdminEnabled', 'boolean', 'Create the first administrator when there are no users'),
  setting('bootstrapAdminUsername', 'string', 'Username of the first administrator'),
  setting('bootstrapAdminPassword', 'secret', 'Password of the first administrator (unset: generated and printed once)'),
  setting('consoleEnabled', 'boolean', 'Serve the web console at /console/'),
  setting('publicUrl', 'optional-string', 'Address people reach this service at, with any path prefix (single sign-on redirects)'),
  setting('oidcIssuer', 'optional-string', 'OpenID Connect issuer URL (unset: single sign-on is off)'),
  setting('oidcClientId', 'optional-string', 'Client id registered at the OpenID provider'),
  setting('oidcClientSecret', 'secret', 'Client secret registered at the OpenID provider (unset: a public client, PKCE only)'),
  setting('oidcScopes', 'list', 'Comma-separated scopes to ask the provider for (must include openid)'),
  setting('oidcProviderName', 'string', 'Name on the sign-in button ("Sign in with <name>")'),
  setting('oidcAutoCreate', 'boolean', "Create an account at a person's first single sign-on (off: an admin links them first)"),
  setting('oidcAdminClaim', 'optional-string', 'Provider group (or claim=value) whose members are made administrators'),
  setting('oidcGroupsClaim', 'string', "ID token claim listing the person's provider groups"),
  setting('oidcGroupTeams', 'list', 'Comma-separated <provider group>=<team id> pairs: provider groups kept in step with teams'),
  setting('passwordLoginEnabled', 'boolean', 'Allow password sign-in (off: only create-admin accounts use passwords)'),
  setting('accessKeyMaxDays', 'integer', 'Longest lifetime of an access key, in days (1 to 3650)'),
  setting('alertAllowPrivateTargets', 'boolean', 'Let alert destinations resolve to loopback, private, link-local or metadata addresses'),
  setting('alertSmtpUrl', 'secret', 'SMTP server for alert e-mail, smtp:// or smtps:// (unset: no e-mail destinations)'),
  setting('alertEmailFrom', 'optional-string', 'From address of alert e-mail (required with SERVICE_ALERT_SMTP_URL)'),
];

/** The settings with a flag, by flag name. */
export const SETTINGS_BY_FLAG: ReadonlyMap<string, SettingSpec> = new Map(SETTINGS.filter((s) => s.flag !== null).map((s) => [s.flag as string, s]));

/** Every `SERVICE_*` name that means something, the secrets' `_FILE` forms included. */
export const KNOWN_ENV_NAMES: ReadonlySet<string> = new Set(SETTINGS.flatMap((s) => (s.kind === 'secret' ? [s.env, `${s.env}_FILE`] : [s.env])));

/** The variables of a process environment; an empty value counts as unset (rule 2). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Reads a file's whole text; throws when it cannot. */
export type ReadTextFile = (path: string) => string;

/** A flag's value as written: text, or true/false for a bare `--flag` / `--no-flag`. */
export interface FlagValue {
  value: string | boolean;
  /** As written (`--no-rate-limit-enabled`), for messages. */
  spelled: string;
}

export interface SettingOrigin {
  source: SettingSource;
  /** The flag or variable the value was read from (`SERVICE_JWT_SECRET_FILE`); null for a default. */
  from: string | null;
}

/** One setting read from its sources: its value and origin, or why it could not be read. */
export type SettingReading = { ok: true; value: unknown; origin: SettingOrigin } | { ok: false; problem: string };

const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = { true: true, false: false, 1: true, 0: false, yes: true, no: false };

/** `true`, `false`, `1`, `0`, `yes`, `no` in any case (rule 5); anything else is null. */
export function parseBoolean(text: string): boolean | null {
  const value = BOOLEAN_WORDS[text.toLowerCase()];
  return value === undefined ? null : value;
}

/** A plain decimal integer, optionally negative (so a range message can follow); `10k`, `1.5`, `` are null. */
export function parseInteger(text: string): number | null {
  return /^-?[0-9]+$/.test(text) ? Number(text) : null;
}

/** Comma-separated, blanks trimmed, empty items dropped: `` is the empty list. */
export function parseList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** The text of a secret file with one trailing newline (`\n` or `\r\n`) removed. */
export function stripTrailingNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

function envValue(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Reads one setting: flag, else environment, else default (rule 1). Values
 * are quoted in problems except for secrets, which are never echoed.
 */
export function readSetting(spec: SettingSpec, flags: ReadonlyMap<string, FlagValue>, env: Environment, readFile: ReadTextFile): SettingReading {
  if (spec.kind === 'secret') return readSecret(spec, env, readFile);
  const flag = spec.flag === null ? undefined : flags.get(spec.flag);
  if (flag !== undefined) return convert(spec, flag.value, { source: 'cli', from: spec.flag }, flag.spelled);
  const text = envValue(env, spec.env);
  if (text !== undefined) return convert(spec, text, { source: 'env', from: spec.env }, spec.env);
  return { ok: true, value: CONFIG_DEFAULTS[spec.key as keyof typeof CONFIG_DEFAULTS], origin: { source: 'default', from: null } };
}

function convert(spec: SettingSpec, raw: string | boolean, origin: SettingOrigin, name: string): SettingReading {
  const ok = (value: unknown): SettingReading => ({ ok: true, value, origin });
  const fail = (why: string): SettingReading => ({ ok: false, problem: `${name}: ${why}` });
  if (typeof raw === 'boolean') {
    // Only boolean flags are parsed into true/false (bare `--x` or `--no-x`).
    return spec.kind === 'boolean' ? ok(raw) : fail('needs a value');
  }
  switch (spec.kind) {
    case 'boolean': {
      const value = parseBoolean(raw);
      return value === null ? fail(`'${raw}' is not a boolean (use true, false, 1, 0, yes or no)`) : ok(value);
    }
    case 'integer':
    case 'optional-integer': {
      const value = parseInteger(raw);
      return value === null ? fail(`'${raw}' is not a plain integer`) : ok(value);
    }
    case 'list':
      return ok(parseList(raw));
    case 'optional-string':
      // Only a flag can be empty here (an empty variable is unset): `--db-path=` means "none".
      return ok(raw === '' ? null : raw);
    case 'string':
      return raw === '' ? fail('must not be empty') : ok(raw);
    case 'secret':
      return fail('is a secret and has no flag');
  }
}

/** A secret from `NAME` or the file named by `NAME_FILE`, never both (rule 3). */
function readSecret(spec: SettingSpec, env: Environment, readFile: ReadTextFile): SettingReading {
  const fileVariable = `${spec.env}_FILE`;
  const direct = envValue(env, spec.env);
  const path = envValue(env, fileVariable);
  if (direct !== undefined && path !== undefined) {
    return { ok: false, problem: `${spec.env} and ${fileVariable} are both set; set only one of them` };
  }
  if (direct !== undefined) return { ok: true, value: direct, origin: { source: 'env', from: spec.env } };
  if (path === undefined) return { ok: true, value: null, origin: { source: 'default', from: null } };
  try {
    return { ok: true, value: stripTrailingNewline(readFile(path)), origin: { source: 'env', from: fileVariable } };
  } catch (err) {
    // The path is the operator's own setting, not the secret: naming it helps.
    const code = (err as NodeJS.ErrnoException | null)?.code;
    return { ok: false, problem: `${fileVariable}: cannot read the file '${path}'${code ? ` (${code})` : ''}` };
  }
}

/** `SERVICE_*` variables that match no setting: they only warn (rule 4). */
export function unknownEnvironmentWarnings(env: Environment): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('SERVICE_') && envValue(env, name) !== undefined && !KNOWN_ENV_NAMES.has(name))
    .sort()
    .map((name) => `unknown environment variable ${name} is ignored`);
}
