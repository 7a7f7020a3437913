/**
 * The resolved configuration of a logkeep service. The bin builds it from
 * flags, environment and defaults (`resolveConfig`); an embedder passes the
 * same shape (partially) to `createLogService`, which fills in defaults and
 * validates it with `normalizeConfig`.
 */
import { ConfigError } from './errors.js';

export type DbBackend = 'file' | 'server';
export type SslMode = 'disable' | 'require' | 'verify-full';
export type LogLevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
export type LogFormat = 'console' | 'json';

export interface LogServiceConfig {
  httpHost: string;
  httpPort: number;
  httpMaxHeaderBytes: number;
  httpMaxUrlBytes: number;
  httpHeadersTimeoutSeconds: number;
  httpRequestTimeoutSeconds: number;
  httpKeepAliveTimeoutSeconds: number;
  httpMaxConnections: number;
  dbBackend: DbBackend;
  dbPath: string | null;
  dbServerHost: string | null;
  dbServerPort: number;
  dbServerDatabase: string | null;
  dbServerUsername: string | null;
  dbServerPassword: string | null;
  dbServerPoolSize: number;
  dbServerSslMode: SslMode;
  jwtSecret: string;
  jwtIssuer: string;
  passwordHashMaxWaiting: number;
  maxIngestBodyBytes: number;
  retentionPurgeIntervalSeconds: number;
  rateLimitEnabled: boolean;
  rateLimitBucketCapacity: number;
  rateLimitRefillPerMinute: number;
  rateLimitMaxKeys: number;
  trustedProxyHops: number;
  corsAllowedOrigins: string[];
  auditRetentionDays: number | null;
  authEventRetentionDays: number | null;
  auditPurgeBatchSize: number;
  dbReadPoolSize: number;
  sseHeartbeatIntervalSeconds: number;
  sseMaxStreams: number;
  sseMaxStreamsPerUser: number;
  metricsEnabled: boolean;
  metricsToken: string | null;
  logLevel: LogLevelName;
  logFormat: LogFormat;
  logFile: string | null;
  logMaxFileBytes: number;
  logMaxFiles: number;
  bootstrapAdminEnabled: boolean;
  bootstrapAdminUsername: string;
  bootstrapAdminPassword: string | null;
  consoleEnabled: boolean;
  /** The address people reach this service at (scheme, host, any path prefix); needed for single sign-on's redirect address. */
  publicUrl: string | null;
  /** OpenID Connect issuer; null: single sign-on is off. */
  oidcIssuer: string | null;
  oidcClientId: string | null;
  oidcClientSecret: string | null;
  oidcScopes: string[];
  /** What the sign-in page's button says after "Sign in with". */
  oidcProviderName: string;
  oidcAutoCreate: boolean;
  /** A provider group (or `claim=value`) whose holders are made administrators. */
  oidcAdminClaim: string | null;
  oidcGroupsClaim: string;
  /** `provider group=team id` pairs, added to the mapping administrators set. */
  oidcGroupTeams: string[];
  passwordLoginEnabled: boolean;
  /** The longest an access key may live, in days: its `expires_at` is at most this far ahead. */
  accessKeyMaxDays: number;
  /** Let alert destinations resolve to loopback, private, link-local or metadata addresses. */
  alertAllowPrivateTargets: boolean;
  /** The SMTP server alert e-mail goes through (`smtps://user:password@host:465`); null: no e-mail destinations. */
  alertSmtpUrl: string | null;
  /** The From address of alert e-mail. */
  alertEmailFrom: string | null;
}

/** The database part alone: all that `createAdmin` needs. */
export type DatabaseConfig = Pick<
  LogServiceConfig,
  | 'dbBackend'
  | 'dbPath'
  | 'dbServerHost'
  | 'dbServerPort'
  | 'dbServerDatabase'
  | 'dbServerUsername'
  | 'dbServerPassword'
  | 'dbServerPoolSize'
  | 'dbServerSslMode'
  | 'dbReadPoolSize'
>;

export const DEFAULT_JWT_ISSUER = 'logkeep';

/** Every setting's default. */
export const CONFIG_DEFAULTS: Omit<LogServiceConfig, 'jwtSecret'> = {
  httpHost: '0.0.0.0',
  httpPort: 8080,
  // Access tokens carry every grant (about 65 bytes each): 64 KiB fits a few hundred.
  httpMaxHeaderBytes: 65536,
  httpMaxUrlBytes: 8192,
  httpHeadersTimeoutSeconds: 10,
  // Time to receive a whole request, body included; never applies to a response (live streams).
  httpRequestTimeoutSeconds: 120,
  httpKeepAliveTimeoutSeconds: 5,
  httpMaxConnections: 1024,
  dbBackend: 'file',
  dbPath: null,
  dbServerHost: null,
  dbServerPort: 5432,
  dbServerDatabase: null,
  dbServerUsername: null,
  dbServerPassword: null,
  dbServerPoolSize: 10,
  dbServerSslMode: 'require',
  jwtIssuer: DEFAULT_JWT_ISSUER,
  passwordHashMaxWaiting: 16,
  maxIngestBodyBytes: 10485760,
  retentionPurgeIntervalSeconds: 3600,
  rateLimitEnabled: true,
  rateLimitBucketCapacity: 10,
  rateLimitRefillPerMinute: 10,
  rateLimitMaxKeys: 10000,
  trustedProxyHops: 0,
  corsAllowedOrigins: [],
  auditRetentionDays: null,
  authEventRetentionDays: null,
  auditPurgeBatchSize: 500,
  dbReadPoolSize: 2,
  sseHeartbeatIntervalSeconds: 25,
  // Fewer than httpMaxConnections, so streams never take every connection.
  sseMaxStreams: 500,
  sseMaxStreamsPerUser: 20,
  metricsEnabled: false,
  metricsToken: null,
  logLevel: 'info',
  logFormat: 'console',
  logFile: null,
  logMaxFileBytes: 10485760,
  logMaxFiles: 5,
  bootstrapAdminEnabled: true,
  bootstrapAdminUsername: 'admin',
  bootstrapAdminPassword: null,
  consoleEnabled: true,
  publicUrl: null,
  oidcIssuer: null,
  oidcClientId: null,
  oidcClientSecret: null,
  oidcScopes: ['openid', 'profile', 'email'],
  oidcProviderName: 'single sign-on',
  oidcAutoCreate: false,
  oidcAdminClaim: null,
  oidcGroupsClaim: 'groups',
  oidcGroupTeams: [],
  passwordLoginEnabled: true,
  accessKeyMaxDays: 365,
  alertAllowPrivateTargets: false,
  alertSmtpUrl: null,
  alertEmailFrom: null,
};

/**
 * What an embedder passes: any subset of the settings, the JWT secret
 * required. `logLevel` also takes `warning`, read as `warn`.
 */
export type LogServiceSettings = Partial<Omit<LogServiceConfig, 'logLevel'>> & { jwtSecret: string; logLevel?: LogLevelName | 'warning' };

/**
 * `warning` is read as `warn`: log entries spell the level `warning`, and
 * people type it. The configuration (and `--print-config`) holds `warn`.
 */
export function canonicalLogLevel(level: unknown): unknown {
  return level === 'warning' ? 'warn' : level;
}

/**
 * Fills defaults into an embedder's settings and checks them; every problem
 * is reported together as a ConfigError.
 */
export function normalizeConfig(settings: LogServiceSettings): LogServiceConfig {
  const config = { ...CONFIG_DEFAULTS, ...stripUndefined(settings) } as LogServiceConfig;
  config.logLevel = canonicalLogLevel(config.logLevel) as LogLevelName;
  const problems = configProblems(config);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    ...config,
    corsAllowedOrigins: [...config.corsAllowedOrigins],
    oidcScopes: [...config.oidcScopes],
    oidcGroupTeams: [...config.oidcGroupTeams],
  }) as LogServiceConfig;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Every problem with a complete configuration (ranges, required settings,
 * cross-field rules), worded for an operator: flags and variable names,
 * never a secret's value. Shared by the bin's resolution and
 * `normalizeConfig`.
 */
export function configProblems(c: LogServiceConfig): string[] {
  const problems: string[] = [];
  const int = integerChecker(problems);
  if (typeof c.jwtSecret !== 'string' || c.jwtSecret.length === 0) {
    problems.push('SERVICE_JWT_SECRET (or SERVICE_JWT_SECRET_FILE) is required; it is never generated');
  }
  problems.push(...databaseConfigProblems(c));
  int('--http-port', c.httpPort, 0, 65535);
  int('--http-max-header-bytes', c.httpMaxHeaderBytes, 1024, 16 * 1024 * 1024);
  int('--http-max-url-bytes', c.httpMaxUrlBytes, 256, 16 * 1024 * 1024);
  int('--http-headers-timeout-seconds', c.httpHeadersTimeoutSeconds, 1, 3600);
  int('--http-request-timeout-seconds', c.httpRequestTimeoutSeconds, 1, 86400);
  // Node refuses a request timeout shorter than the header timeout.
  if (c.httpRequestTimeoutSeconds < c.httpHeadersTimeoutSeconds) {
    problems.push('--http-request-timeout-seconds must not be less than --http-headers-timeout-seconds');
  }
  int('--http-keep-alive-timeout-seconds', c.httpKeepAliveTimeoutSeconds, 1, 3600);
  int('--http-max-connections', c.httpMaxConnections, 1, 1_000_000);
  int('--password-hash-max-waiting', c.passwordHashMaxWaiting, 0, 100_000);
  int('--max-ingest-body-bytes', c.maxIngestBodyBytes, 1);
  int('--retention-purge-interval-seconds', c.retentionPurgeIntervalSeconds, 1);
  int('--rate-limit-bucket-capacity', c.rateLimitBucketCapacity, 1);
  int('--rate-limit-refill-per-minute', c.rateLimitRefillPerMinute, 1);
  int('--rate-limit-max-keys', c.rateLimitMaxKeys, 1);
  int('--trusted-proxy-hops', c.trustedProxyHops, 0);
  if (c.auditRetentionDays !== null) int('--audit-retention-days', c.auditRetentionDays, 1);
  if (c.authEventRetentionDays !== null) int('--auth-event-retention-days', c.authEventRetentionDays, 1);
  int('--audit-purge-batch-size', c.auditPurgeBatchSize, 1);
  int('--sse-heartbeat-interval-seconds', c.sseHeartbeatIntervalSeconds, 1);
  int('--sse-max-streams', c.sseMaxStreams, 1, 1_000_000);
  int('--sse-max-streams-per-user', c.sseMaxStreamsPerUser, 1, 1_000_000);
  if (c.metricsToken !== null && (c.metricsToken === '' || /\s/.test(c.metricsToken))) {
    // Name the variable, never the value.
    problems.push('SERVICE_METRICS_TOKEN must not be empty or contain whitespace');
  }
  int('--log-max-file-bytes', c.logMaxFileBytes, 1);
  // Ten years: an expiry is still a real date, never a way to make a key that outlives everyone.
  int('--access-key-max-days', c.accessKeyMaxDays, 1, 3650);
  int('--log-max-files', c.logMaxFiles, 1);
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(c.logLevel)) {
    problems.push('--log-level must be one of trace, debug, info, warn (or warning), error, fatal, silent');
  }
  if (c.logFormat !== 'console' && c.logFormat !== 'json') problems.push("--log-format must be 'console' or 'json'");
  if (!c.bootstrapAdminUsername) problems.push('--bootstrap-admin-username must not be empty');
  if (c.bootstrapAdminPassword !== null) {
    const chars = [...c.bootstrapAdminPassword].length;
    if (chars < 8 || Buffer.byteLength(c.bootstrapAdminPassword, 'utf8') > 72) {
      // Name the variable, never the value.
      problems.push('SERVICE_BOOTSTRAP_ADMIN_PASSWORD must be at least 8 characters and at most 72 bytes in UTF-8');
    }
  }
  problems.push(...ssoConfigProblems(c));
  if (c.alertSmtpUrl !== null && !/^smtps?:\/\/[^\s]+$/.test(c.alertSmtpUrl)) {
    // Name the variable, never the value (it may hold a password).
    problems.push('SERVICE_ALERT_SMTP_URL must be an smtp:// or smtps:// URL');
  }
  if (c.alertEmailFrom !== null && !/^[^\s@]+@[^\s@]+$/.test(c.alertEmailFrom)) problems.push('--alert-email-from must be an e-mail address');
  if (c.alertSmtpUrl !== null && c.alertEmailFrom === null) problems.push('--alert-email-from is required when SERVICE_ALERT_SMTP_URL is set');
  return problems;
}

/** Whether a URL's host is this machine (plain http is allowed there, for trying things out and for tests). */
export function isLoopbackUrl(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}

function httpUrlProblem(name: string, text: string, pathOnly: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${name} must be an absolute http(s) URL`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    return `${name} must use https (plain http only for localhost)`;
  }
  if (pathOnly && (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')) {
    return `${name} must not carry a query, a fragment or credentials`;
  }
  return null;
}

/** A `provider group=team id` pair of --oidc-group-teams, or null when malformed. */
export function parseGroupTeamPair(text: string): { group: string; teamId: number } | null {
  const at = text.lastIndexOf('=');
  if (at <= 0) return null;
  const group = text.slice(0, at).trim();
  const id = text.slice(at + 1).trim();
  if (group === '' || !/^[1-9][0-9]{0,14}$/.test(id)) return null;
  return { group, teamId: Number(id) };
}

/** The single sign-on settings: all or nothing, addresses well formed. */
function ssoConfigProblems(c: LogServiceConfig): string[] {
  const problems: string[] = [];
  if (c.publicUrl !== null) {
    const problem = httpUrlProblem('--public-url', c.publicUrl, true);
    if (problem) problems.push(problem);
  }
  if (!c.passwordLoginEnabled && c.oidcIssuer === null) {
    problems.push('--password-login-enabled=false needs --oidc-issuer: nobody but create-admin accounts could sign in');
  }
  for (const pair of c.oidcGroupTeams) {
    if (parseGroupTeamPair(pair) === null) problems.push(`--oidc-group-teams: '${pair}' is not <provider group>=<team id>`);
  }
  if (c.oidcIssuer === null) return problems;
  const problem = httpUrlProblem('--oidc-issuer', c.oidcIssuer, true);
  if (problem) problems.push(problem);
  if (!c.oidcClientId) problems.push('--oidc-client-id is required with --oidc-issuer');
  if (c.publicUrl === null) problems.push('--public-url is required with --oidc-issuer (the provider sends people back to <public-url>/v1/auth/oidc/callback)');
  if (!c.oidcScopes.includes('openid')) problems.push("--oidc-scopes must include 'openid'");
  if (!c.oidcGroupsClaim) problems.push('--oidc-groups-claim must not be empty');
  return problems;
}

/** The checks `create-admin` needs: the database settings alone. */
export function databaseConfigProblems(c: DatabaseConfig): string[] {
  const problems: string[] = [];
  const int = integerChecker(problems);
  if (c.dbBackend !== 'file' && c.dbBackend !== 'server') problems.push("--db-backend must be 'file' or 'server'");
  if (c.dbBackend === 'file' && !c.dbPath) problems.push('--db-path is required when --db-backend is file');
  if (c.dbBackend === 'server') {
    if (!c.dbServerHost) problems.push('--db-server-host is required when --db-backend is server');
    if (!c.dbServerDatabase) problems.push('--db-server-database is required when --db-backend is server');
    if (!c.dbServerUsername) problems.push('--db-server-username is required when --db-backend is server');
    if (c.dbServerPassword === null || c.dbServerPassword === undefined) {
      problems.push('SERVICE_DB_SERVER_PASSWORD (or SERVICE_DB_SERVER_PASSWORD_FILE) is required when --db-backend is server');
    }
  }
  if (!['disable', 'require', 'verify-full'].includes(c.dbServerSslMode)) {
    problems.push("--db-server-ssl-mode must be 'disable', 'require' or 'verify-full'");
  }
  int('--db-server-port', c.dbServerPort, 1, 65535);
  int('--db-server-pool-size', c.dbServerPoolSize, 1, 64);
  int('--db-read-pool-size', c.dbReadPoolSize, 0, 16);
  return problems;
}

function integerChecker(problems: string[]) {
  return (name: string, v: number, min: number, max = Number.MAX_SAFE_INTEGER): void => {
    if (!Number.isInteger(v) || v < min || v > max) problems.push(`${name} must be an integer from ${min} to ${max}`);
  };
}
