/**
 * Startup configuration, rule by rule,
 * through the pure resolver: argv, an environment and an in-memory file
 * reader in, an invocation (or every problem) out.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_DEFAULTS, configProblems, normalizeConfig, type LogServiceConfig } from '../../lib/core/config.js';
import { ConfigError } from '../../lib/core/errors.js';
import { KNOWN_ENV_NAMES, SETTINGS, envNameFor, parseBoolean, parseInteger, parseList, stripTrailingNewline } from '../../lib/config-sources.js';
import { parseCommandLine, renderPrintConfig, resolveInvocation, type Invocation } from '../../lib/config-resolve.js';

const SECRET = 'jwt-secret-value-0123456789abcdef0123';
const BASE_ENV = { SERVICE_JWT_SECRET: SECRET };
const BASE_ARGS = ['--db-path', '/tmp/logkeep.db'];

type Files = Record<string, string>;

/** An in-memory file system for `_FILE` secrets; a missing path throws ENOENT like fs does. */
function fileReader(files: Files = {}) {
  return (path: string): string => {
    const text = files[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
    return text;
  };
}

function resolve(argv: string[], env: Record<string, string | undefined> = BASE_ENV, files: Files = {}): Invocation {
  return resolveInvocation(argv, env, fileReader(files));
}

/** Resolves and expects a serve configuration. */
function serveConfig(argv: string[], env: Record<string, string | undefined> = BASE_ENV, files: Files = {}) {
  const invocation = resolve(argv, env, files);
  if (invocation.action !== 'serve' && invocation.action !== 'print-config') {
    assert.fail(`expected a configuration, got ${JSON.stringify(invocation)}`);
  }
  return invocation;
}

/** Resolves and expects problems; returns them. */
function problemsOf(argv: string[], env: Record<string, string | undefined> = BASE_ENV, files: Files = {}): string[] {
  const invocation = resolve(argv, env, files);
  if (invocation.action !== 'invalid') assert.fail(`expected problems, got ${invocation.action}`);
  assert.ok(invocation.problems.length > 0);
  return invocation.problems;
}

function assertProblem(problems: string[], pattern: RegExp): void {
  assert.ok(
    problems.some((p) => pattern.test(p)),
    `no problem matches ${pattern}:\n${problems.join('\n')}`,
  );
}

/** The flags and variables of the documented table, written out, so the table in code cannot drift from it. */
const SPEC_FLAGS = [
  '--http-host',
  '--http-port',
  '--http-max-header-bytes',
  '--http-max-url-bytes',
  '--http-headers-timeout-seconds',
  '--http-request-timeout-seconds',
  '--http-keep-alive-timeout-seconds',
  '--http-max-connections',
  '--db-backend',
  '--db-path',
  '--db-server-host',
  '--db-server-port',
  '--db-server-database',
  '--db-server-username',
  '--db-server-pool-size',
  '--db-server-ssl-mode',
  '--jwt-issuer',
  '--password-hash-max-waiting',
  '--max-ingest-body-bytes',
  '--retention-purge-interval-seconds',
  '--rate-limit-enabled',
  '--rate-limit-bucket-capacity',
  '--rate-limit-refill-per-minute',
  '--rate-limit-max-keys',
  '--trusted-proxy-hops',
  '--cors-allowed-origins',
  '--audit-retention-days',
  '--auth-event-retention-days',
  '--audit-purge-batch-size',
  '--db-read-pool-size',
  '--sse-heartbeat-interval-seconds',
  '--sse-max-streams',
  '--sse-max-streams-per-user',
  '--metrics-enabled',
  '--log-level',
  '--log-format',
  '--log-file',
  '--log-max-file-bytes',
  '--log-max-files',
  '--bootstrap-admin-enabled',
  '--bootstrap-admin-username',
  '--console-enabled',
  '--public-url',
  '--oidc-issuer',
  '--oidc-client-id',
  '--oidc-scopes',
  '--oidc-provider-name',
  '--oidc-auto-create',
  '--oidc-admin-claim',
  '--oidc-groups-claim',
  '--oidc-group-teams',
  '--password-login-enabled',
  '--access-key-max-days',
  '--alert-allow-private-targets',
  '--alert-email-from',
];
const SPEC_SECRETS = [
  'SERVICE_DB_SERVER_PASSWORD',
  'SERVICE_JWT_SECRET',
  'SERVICE_METRICS_TOKEN',
  'SERVICE_BOOTSTRAP_ADMIN_PASSWORD',
  'SERVICE_OIDC_CLIENT_SECRET',
  'SERVICE_ALERT_SMTP_URL',
];

describe('the settings table', () => {
  it('has exactly the documented flags, and the secrets without a flag', () => {
    assert.deepEqual(
      SETTINGS.filter((s) => s.flag !== null).map((s) => s.flag),
      SPEC_FLAGS,
    );
    assert.deepEqual(
      SETTINGS.filter((s) => s.kind === 'secret')
        .map((s) => s.env)
        .sort(),
      [...SPEC_SECRETS].sort(),
    );
    assert.ok(SETTINGS.filter((s) => s.kind === 'secret').every((s) => s.flag === null));
  });

  it('names each variable after its flag: upper case, underscores, SERVICE_ prefix (rule 2)', () => {
    assert.equal(envNameFor('--http-port'), 'SERVICE_HTTP_PORT');
    for (const s of SETTINGS) if (s.flag) assert.equal(s.env, envNameFor(s.flag));
  });

  it('covers every configuration field', () => {
    assert.deepEqual(SETTINGS.map((s) => s.key).sort(), Object.keys({ ...CONFIG_DEFAULTS, jwtSecret: '' }).sort());
  });

  it("knows the secrets' _FILE variables", () => {
    for (const name of SPEC_SECRETS) assert.ok(KNOWN_ENV_NAMES.has(`${name}_FILE`));
    assert.ok(!KNOWN_ENV_NAMES.has('SERVICE_HTTP_PORT_FILE'));
  });
});

describe('precedence: flag, then environment, then default (rule 1)', () => {
  it('uses the default when neither is set', () => {
    const { config, sources } = serveConfig(BASE_ARGS);
    assert.equal(config.httpPort, 8080);
    assert.deepEqual(sources.httpPort, { source: 'default', from: null });
  });

  it('uses the environment over the default', () => {
    const { config, sources } = serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_HTTP_PORT: '9001' });
    assert.equal(config.httpPort, 9001);
    assert.deepEqual(sources.httpPort, { source: 'env', from: 'SERVICE_HTTP_PORT' });
  });

  it('uses the flag over the environment, for every kind of setting', () => {
    const env = {
      ...BASE_ENV,
      SERVICE_HTTP_PORT: '9001',
      SERVICE_HTTP_HOST: '10.0.0.1',
      SERVICE_RATE_LIMIT_ENABLED: 'true',
      SERVICE_CORS_ALLOWED_ORIGINS: 'https://env.example',
      SERVICE_DB_PATH: '/env/path.db',
    };
    const { config, sources } = serveConfig(
      ['--http-port', '9002', '--http-host=127.0.0.1', '--no-rate-limit-enabled', '--cors-allowed-origins', 'https://cli.example', '--db-path', '/cli.db'],
      env,
    );
    assert.equal(config.httpPort, 9002);
    assert.equal(config.httpHost, '127.0.0.1');
    assert.equal(config.rateLimitEnabled, false);
    assert.deepEqual(config.corsAllowedOrigins, ['https://cli.example']);
    assert.equal(config.dbPath, '/cli.db');
    assert.deepEqual(sources.httpPort, { source: 'cli', from: '--http-port' });
    assert.deepEqual(sources.rateLimitEnabled, { source: 'cli', from: '--rate-limit-enabled' });
  });

  it('reads the database path from the environment alone', () => {
    const { config } = serveConfig([], { ...BASE_ENV, SERVICE_DB_PATH: '/env/path.db' });
    assert.equal(config.dbPath, '/env/path.db');
  });

  it('returns a frozen configuration', () => {
    const { config } = serveConfig(BASE_ARGS);
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.corsAllowedOrigins));
  });
});

describe('an empty environment variable counts as unset (rule 2)', () => {
  it('falls back to the default', () => {
    const { config, sources } = serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_HTTP_PORT: '', SERVICE_LOG_LEVEL: '' });
    assert.equal(config.httpPort, 8080);
    assert.equal(config.logLevel, 'info');
    assert.equal(sources.httpPort?.source, 'default');
  });

  it('an empty secret is missing, and does not clash with its _FILE form', () => {
    assertProblem(problemsOf(BASE_ARGS, { SERVICE_JWT_SECRET: '' }), /SERVICE_JWT_SECRET .*required/);
    const { config } = serveConfig(BASE_ARGS, { SERVICE_JWT_SECRET: '', SERVICE_JWT_SECRET_FILE: '/run/secrets/jwt' }, { '/run/secrets/jwt': SECRET });
    assert.equal(config.jwtSecret, SECRET);
  });

  it('an empty unknown SERVICE_ variable does not warn', () => {
    const invocation = serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_NOTHING: '' });
    assert.deepEqual(invocation.warnings, []);
  });
});

describe('secrets: environment or _FILE, never a flag (rule 3)', () => {
  it('reads a secret from the file its _FILE variable names, one trailing newline stripped', () => {
    const files = { '/s/jwt': `${SECRET}\n`, '/s/db': 'db-pass\r\n', '/s/boot': 'bootstrap-pass\n\n' };
    const { config, sources } = serveConfig(
      BASE_ARGS,
      {
        SERVICE_JWT_SECRET_FILE: '/s/jwt',
        SERVICE_DB_SERVER_PASSWORD_FILE: '/s/db',
        SERVICE_BOOTSTRAP_ADMIN_PASSWORD_FILE: '/s/boot',
      },
      files,
    );
    assert.equal(config.jwtSecret, SECRET);
    assert.equal(config.dbServerPassword, 'db-pass');
    assert.equal(config.bootstrapAdminPassword, 'bootstrap-pass\n', 'only one newline is stripped');
    assert.deepEqual(sources.jwtSecret, { source: 'env', from: 'SERVICE_JWT_SECRET_FILE' });
  });

  it('reads the metrics token from SERVICE_METRICS_TOKEN_FILE; metrics stay off unless enabled', () => {
    const off = serveConfig(BASE_ARGS);
    assert.equal(off.config.metricsEnabled, false);
    assert.equal(off.config.metricsToken, null);
    const { config, sources } = serveConfig(
      [...BASE_ARGS, '--metrics-enabled'],
      { ...BASE_ENV, SERVICE_METRICS_TOKEN_FILE: '/s/metrics' },
      { '/s/metrics': 'scrape-token-1\n' },
    );
    assert.equal(config.metricsEnabled, true);
    assert.equal(config.metricsToken, 'scrape-token-1');
    assert.deepEqual(sources.metricsToken, { source: 'env', from: 'SERVICE_METRICS_TOKEN_FILE' });
    assert.equal(serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_METRICS_ENABLED: 'yes' }).config.metricsEnabled, true);
  });

  it('a metrics token with whitespace is a problem, never echoed', () => {
    const problems = problemsOf(BASE_ARGS, { ...BASE_ENV, SERVICE_METRICS_TOKEN: 'two words' });
    assertProblem(problems, /SERVICE_METRICS_TOKEN must not be empty or contain whitespace/);
    assert.ok(!problems.join('\n').includes('two words'));
  });

  it('keeps a file without a trailing newline as it is', () => {
    assert.equal(stripTrailingNewline('abc'), 'abc');
    assert.equal(stripTrailingNewline('abc\n'), 'abc');
    assert.equal(stripTrailingNewline('abc\r\n'), 'abc');
    assert.equal(stripTrailingNewline('a\nb\n'), 'a\nb');
    assert.equal(stripTrailingNewline('abc\r'), 'abc\r');
  });

  it('setting both forms is a problem naming both variables, never the value', () => {
    const problems = problemsOf(BASE_ARGS, { SERVICE_JWT_SECRET: SECRET, SERVICE_JWT_SECRET_FILE: '/s/jwt' }, { '/s/jwt': 'file-secret-value' });
    assertProblem(problems, /SERVICE_JWT_SECRET and SERVICE_JWT_SECRET_FILE are both set/);
    assert.ok(!problems.join('\n').includes(SECRET));
    assert.ok(!problems.join('\n').includes('file-secret-value'));
  });

  it('an unreadable _FILE is a problem naming the variable and the path', () => {
    const problems = problemsOf(BASE_ARGS, { SERVICE_JWT_SECRET_FILE: '/missing/jwt' });
    assertProblem(problems, /SERVICE_JWT_SECRET_FILE: cannot read the file '\/missing\/jwt' \(ENOENT\)/);
  });

  it('a secret has no flag: the would-be flag is unknown and points at the variable, without echoing the value', () => {
    const problems = problemsOf([...BASE_ARGS, '--jwt-secret=hunter2-secret-value']);
    assertProblem(problems, /unknown option --jwt-secret: secrets have no flag; set SERVICE_JWT_SECRET or SERVICE_JWT_SECRET_FILE/);
    assert.ok(!problems.join('\n').includes('hunter2-secret-value'));
    assertProblem(problemsOf([...BASE_ARGS, '--db-server-password', 'x']), /SERVICE_DB_SERVER_PASSWORD_FILE/);
  });

  it('an empty _FILE content is a value (an empty database password is possible this way)', () => {
    const { config } = serveConfig(
      ['--db-backend', 'server', '--db-server-host', 'h', '--db-server-database', 'd', '--db-server-username', 'u'],
      { ...BASE_ENV, SERVICE_DB_SERVER_PASSWORD_FILE: '/s/empty' },
      { '/s/empty': '\n' },
    );
    assert.equal(config.dbServerPassword, '');
  });
});

describe('validation collects every problem (rule 4)', () => {
  it('reports all problems together', () => {
    const problems = problemsOf(['--http-port', '10k', '--rate-limit-enabled=maybe', '--bogus'], {});
    assertProblem(problems, /--http-port: '10k' is not a plain integer/);
    assertProblem(problems, /--rate-limit-enabled: 'maybe' is not a boolean/);
    assertProblem(problems, /unknown option --bogus/);
    assertProblem(problems, /SERVICE_JWT_SECRET .*required/);
    assertProblem(problems, /--db-path is required/);
    assert.equal(problems.length, 5);
  });

  it('an unknown flag stops startup', () => {
    assert.deepEqual(problemsOf([...BASE_ARGS, '--htp-port', '80']), ['unknown option --htp-port']);
    assert.deepEqual(problemsOf([...BASE_ARGS, '-x']), ['unknown option -x']);
  });

  it('an unknown SERVICE_ variable only warns', () => {
    const invocation = serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_HTTP_PROT: '80', SERVICE_HTTP_PORT_FILE: '/x', OTHER: 'y' });
    assert.deepEqual(invocation.warnings, [
      'unknown environment variable SERVICE_HTTP_PORT_FILE is ignored',
      'unknown environment variable SERVICE_HTTP_PROT is ignored',
    ]);
  });

  it('unknown commands, stray arguments, repeated flags and missing values are problems', () => {
    assertProblem(problemsOf(['start', ...BASE_ARGS]), /unknown command 'start'/);
    assertProblem(problemsOf(['serve', 'extra', ...BASE_ARGS]), /unexpected argument 'extra'/);
    assertProblem(problemsOf([...BASE_ARGS, '--http-port', '1', '--http-port=2']), /--http-port is given more than once/);
    assertProblem(problemsOf([...BASE_ARGS, '--rate-limit-enabled', '--no-rate-limit-enabled']), /--rate-limit-enabled is given more than once/);
    assertProblem(problemsOf([...BASE_ARGS, '--http-port']), /--http-port needs a value/);
    assertProblem(problemsOf(['--db-path', '--http-port', '1']), /--db-path needs a value/);
  });

  it('accepts `serve` as the command and the default', () => {
    assert.equal(resolve(['serve', ...BASE_ARGS]).action, 'serve');
    assert.equal(resolve(BASE_ARGS).action, 'serve');
  });
});

describe('booleans (rule 5)', () => {
  it('accept true, false, 1, 0, yes, no in any case', () => {
    for (const [text, value] of [
      ['true', true],
      ['FALSE', false],
      ['1', true],
      ['0', false],
      ['Yes', true],
      ['nO', false],
    ] as const) {
      assert.equal(parseBoolean(text), value);
      assert.equal(serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_RATE_LIMIT_ENABLED: text }).config.rateLimitEnabled, value);
      assert.equal(serveConfig([...BASE_ARGS, `--bootstrap-admin-enabled=${text}`]).config.bootstrapAdminEnabled, value);
    }
  });

  it('reject anything else, naming where it came from', () => {
    for (const text of ['on', 'off', 'y', 't', '2', 'truee', ' true']) assert.equal(parseBoolean(text), null);
    assertProblem(problemsOf(BASE_ARGS, { ...BASE_ENV, SERVICE_RATE_LIMIT_ENABLED: 'on' }), /^SERVICE_RATE_LIMIT_ENABLED: 'on' is not a boolean/);
    assertProblem(problemsOf([...BASE_ARGS, '--rate-limit-enabled=']), /--rate-limit-enabled: '' is not a boolean/);
  });

  it('--flag is true and --no-flag false, for both boolean settings', () => {
    const off = { ...BASE_ENV, SERVICE_RATE_LIMIT_ENABLED: 'no', SERVICE_BOOTSTRAP_ADMIN_ENABLED: 'no' };
    const on = serveConfig([...BASE_ARGS, '--rate-limit-enabled', '--bootstrap-admin-enabled'], off).config;
    assert.equal(on.rateLimitEnabled, true);
    assert.equal(on.bootstrapAdminEnabled, true);
    const negated = serveConfig([...BASE_ARGS, '--no-rate-limit-enabled', '--no-bootstrap-admin-enabled']).config;
    assert.equal(negated.rateLimitEnabled, false);
    assert.equal(negated.bootstrapAdminEnabled, false);
  });

  it('a bare boolean flag does not take the next argument as its value', () => {
    const invocation = resolve([...BASE_ARGS, '--rate-limit-enabled', 'serve']);
    assert.equal(invocation.action, 'serve');
  });

  it('--no-flag takes no value, and only booleans have a --no- form', () => {
    assertProblem(problemsOf([...BASE_ARGS, '--no-rate-limit-enabled=true']), /--no-rate-limit-enabled takes no value/);
    assertProblem(problemsOf([...BASE_ARGS, '--no-http-port']), /unknown option --no-http-port/);
  });
});

describe('integers and ranges (rule 5)', () => {
  it('accept plain decimal integers only', () => {
    assert.equal(parseInteger('8080'), 8080);
    assert.equal(parseInteger('007'), 7);
    for (const text of ['10k', '1.5', '', ' 8', '8 ', '+8', '0x10', '1e3', '1_000', 'NaN', 'Infinity']) {
      assert.equal(parseInteger(text), null, text);
    }
    assert.equal(serveConfig([...BASE_ARGS, '--http-port', '08081']).config.httpPort, 8081);
  });

  it('reject other text from a flag or a variable', () => {
    assertProblem(problemsOf([...BASE_ARGS, '--max-ingest-body-bytes', '10k']), /^--max-ingest-body-bytes: '10k' is not a plain integer$/);
    assertProblem(problemsOf([...BASE_ARGS, '--http-port=1.5']), /--http-port: '1.5' is not a plain integer/);
    assertProblem(problemsOf([...BASE_ARGS, '--http-port=']), /--http-port: '' is not a plain integer/);
    assertProblem(problemsOf(BASE_ARGS, { ...BASE_ENV, SERVICE_LOG_MAX_FILES: '5 files' }), /^SERVICE_LOG_MAX_FILES: '5 files'/);
  });

  it('check ranges', () => {
    assertProblem(problemsOf([...BASE_ARGS, '--http-port', '65536']), /--http-port must be an integer from 0 to 65535/);
    assertProblem(problemsOf([...BASE_ARGS, '--trusted-proxy-hops', '-1']), /--trusted-proxy-hops must be an integer from 0/);
    assertProblem(problemsOf([...BASE_ARGS, '--db-server-pool-size', '65']), /--db-server-pool-size must be an integer from 1 to 64/);
    assertProblem(problemsOf([...BASE_ARGS, '--db-server-pool-size', '0']), /--db-server-pool-size must be an integer from 1 to 64/);
    assertProblem(problemsOf([...BASE_ARGS, '--db-read-pool-size', '17']), /--db-read-pool-size must be an integer from 0 to 16/);
    assertProblem(problemsOf([...BASE_ARGS, '--audit-retention-days', '0']), /--audit-retention-days must be an integer from 1/);
    assertProblem(problemsOf([...BASE_ARGS, '--max-ingest-body-bytes', '99999999999999999999']), /--max-ingest-body-bytes must be an integer/);
    assert.equal(serveConfig([...BASE_ARGS, '--db-read-pool-size', '0']).config.dbReadPoolSize, 0);
  });

  it('bounds the HTTP server, password-hash waiting and live streams by default, each settable', () => {
    const defaults = serveConfig(BASE_ARGS).config;
    assert.deepEqual(
      [
        defaults.httpMaxHeaderBytes,
        defaults.httpMaxUrlBytes,
        defaults.httpHeadersTimeoutSeconds,
        defaults.httpRequestTimeoutSeconds,
        defaults.httpKeepAliveTimeoutSeconds,
        defaults.httpMaxConnections,
        defaults.passwordHashMaxWaiting,
        defaults.sseMaxStreams,
        defaults.sseMaxStreamsPerUser,
      ],
      [65536, 8192, 10, 120, 5, 1024, 16, 500, 20],
    );
    const set = serveConfig([...BASE_ARGS, '--http-max-header-bytes', '1048576', '--sse-max-streams-per-user', '2'], {
      ...BASE_ENV,
      SERVICE_HTTP_MAX_CONNECTIONS: '10',
      SERVICE_PASSWORD_HASH_MAX_WAITING: '0',
    }).config;
    assert.equal(set.httpMaxHeaderBytes, 1048576);
    assert.equal(set.sseMaxStreamsPerUser, 2);
    assert.equal(set.httpMaxConnections, 10);
    assert.equal(set.passwordHashMaxWaiting, 0);
  });

  it('refuses unusable HTTP bounds, and a request timeout shorter than the header timeout', () => {
    assertProblem(problemsOf([...BASE_ARGS, '--http-max-header-bytes', '100']), /--http-max-header-bytes must be an integer from 1024/);
    assertProblem(problemsOf([...BASE_ARGS, '--http-max-connections', '0']), /--http-max-connections must be an integer from 1/);
    assertProblem(problemsOf([...BASE_ARGS, '--http-keep-alive-timeout-seconds', '0']), /--http-keep-alive-timeout-seconds must be an integer from 1/);
    assertProblem(problemsOf([...BASE_ARGS, '--sse-max-streams', '0']), /--sse-max-streams must be an integer from 1/);
    assertProblem(
      problemsOf([...BASE_ARGS, '--http-headers-timeout-seconds', '30', '--http-request-timeout-seconds', '20']),
      /--http-request-timeout-seconds must not be less than --http-headers-timeout-seconds/,
    );
  });

  it('retention days are unset (null) by default and integers when set', () => {
    const unset = serveConfig(BASE_ARGS).config;
    assert.equal(unset.auditRetentionDays, null);
    assert.equal(unset.authEventRetentionDays, null);
    const set = serveConfig([...BASE_ARGS, '--audit-retention-days', '30'], { ...BASE_ENV, SERVICE_AUTH_EVENT_RETENTION_DAYS: '7' }).config;
    assert.equal(set.auditRetentionDays, 30);
    assert.equal(set.authEventRetentionDays, 7);
  });
});

describe('strings, lists and choices', () => {
  it('CORS origins are comma-separated; empty means none', () => {
    assert.deepEqual(parseList(' https://a.example , https://b.example,,'), ['https://a.example', 'https://b.example']);
    assert.deepEqual(serveConfig([...BASE_ARGS, '--cors-allowed-origins=']).config.corsAllowedOrigins, []);
    assert.deepEqual(serveConfig(BASE_ARGS).config.corsAllowedOrigins, []);
    assert.deepEqual(serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_CORS_ALLOWED_ORIGINS: 'https://a.example,https://b.example' }).config.corsAllowedOrigins, [
      'https://a.example',
      'https://b.example',
    ]);
  });

  it('keeps string values exactly as typed (no number conversion)', () => {
    const { config } = serveConfig([...BASE_ARGS, '--bootstrap-admin-username', '00123', '--jwt-issuer', '1e3']);
    assert.equal(config.bootstrapAdminUsername, '00123');
    assert.equal(config.jwtIssuer, '1e3');
  });

  it('an empty flag clears an optional setting and is refused for a required one', () => {
    assertProblem(problemsOf(['--db-path=']), /--db-path is required when --db-backend is file/);
    assertProblem(problemsOf([...BASE_ARGS, '--http-host=']), /--http-host: must not be empty/);
  });

  it('checks the choices', () => {
    assertProblem(problemsOf([...BASE_ARGS, '--db-backend', 'mysql']), /--db-backend must be 'file' or 'server'/);
    assertProblem(problemsOf([...BASE_ARGS, '--db-server-ssl-mode', 'prefer']), /--db-server-ssl-mode must be/);
    assertProblem(problemsOf([...BASE_ARGS, '--log-level', 'verbose']), /--log-level must be one of/);
    assertProblem(problemsOf([...BASE_ARGS, '--log-format', 'xml']), /--log-format must be/);
  });

  it('reads --log-level warning as warn, from the flag, the variable and the embedding key', () => {
    const fromFlag = serveConfig([...BASE_ARGS, '--log-level', 'warning']);
    assert.equal(fromFlag.config.logLevel, 'warn');
    assert.equal(serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_LOG_LEVEL: 'warning' }).config.logLevel, 'warn');
    assert.equal(normalizeConfig({ jwtSecret: SECRET, dbPath: '/tmp/logkeep.db', logLevel: 'warning' }).logLevel, 'warn');
    const printed = renderPrintConfig(serveConfig(['--print-config', ...BASE_ARGS, '--log-level', 'warning']));
    assert.match(printed, /^--log-level +warn +cli$/m);
    assertProblem(problemsOf([...BASE_ARGS, '--log-level', 'warnings']), /--log-level must be one of .*warn \(or warning\)/);
  });
});

describe('settings required by the backend', () => {
  it('the file backend requires --db-path', () => {
    assert.deepEqual(problemsOf([]), ['--db-path is required when --db-backend is file']);
  });

  it('the server backend requires host, database, username and password, all reported together', () => {
    const problems = problemsOf(['--db-backend', 'server']);
    assert.equal(problems.length, 4);
    assertProblem(problems, /--db-server-host is required/);
    assertProblem(problems, /--db-server-database is required/);
    assertProblem(problems, /--db-server-username is required/);
    assertProblem(problems, /SERVICE_DB_SERVER_PASSWORD .*is required/);
  });

  it('a non-default --db-read-pool-size under the server backend only warns', () => {
    const server = ['--db-backend', 'server', '--db-server-host', 'h', '--db-server-database', 'd', '--db-server-username', 'u'];
    const env = { ...BASE_ENV, SERVICE_DB_SERVER_PASSWORD: 'pw' };
    assert.deepEqual(serveConfig(server, env).warnings, []);
    assert.deepEqual(serveConfig([...server, '--db-read-pool-size', '4'], env).warnings, [
      '--db-read-pool-size applies to the file backend only; it is ignored with --db-backend server',
    ]);
    assert.deepEqual(serveConfig([...BASE_ARGS, '--db-read-pool-size', '4']).warnings, []);
  });
});

describe('the JWT secret (rule 7)', () => {
  it('is required and never generated', () => {
    assert.deepEqual(problemsOf(BASE_ARGS, {}), ['SERVICE_JWT_SECRET (or SERVICE_JWT_SECRET_FILE) is required; it is never generated']);
  });

  it("normalizeConfig (the embedder's path) reports through ConfigError with the same checks", () => {
    assert.throws(
      () => normalizeConfig({ jwtSecret: '', dbPath: null }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.deepEqual(err.problems, configProblems({ ...CONFIG_DEFAULTS, jwtSecret: '' } as LogServiceConfig));
        return true;
      },
    );
  });
});

describe('the bootstrap password', () => {
  it('outside the password rule is a problem naming the variable, never the value', () => {
    for (const bad of ['short7!', 'é'.repeat(37)]) {
      const problems = problemsOf(BASE_ARGS, { ...BASE_ENV, SERVICE_BOOTSTRAP_ADMIN_PASSWORD: bad });
      assertProblem(problems, /^SERVICE_BOOTSTRAP_ADMIN_PASSWORD must be at least 8 characters and at most 72 bytes/);
      assert.ok(!problems.join('\n').includes(bad));
    }
  });

  it('inside the rule is taken as is; unset means generated (null)', () => {
    assert.equal(serveConfig(BASE_ARGS, { ...BASE_ENV, SERVICE_BOOTSTRAP_ADMIN_PASSWORD: 'eight ch' }).config.bootstrapAdminPassword, 'eight ch');
    assert.equal(serveConfig(BASE_ARGS).config.bootstrapAdminPassword, null);
  });
});

describe('create-admin', () => {
  it('needs only the database settings: no JWT secret', () => {
    const invocation = resolve(['create-admin', '--username', 'alice', ...BASE_ARGS], {});
    assert.equal(invocation.action, 'create-admin');
    if (invocation.action !== 'create-admin') return;
    assert.equal(invocation.username, 'alice');
    assert.equal(invocation.password, null);
    assert.equal(invocation.database.dbPath, '/tmp/logkeep.db');
    assert.equal(invocation.database.dbBackend, 'file');
  });

  it('keeps --username and --password exactly as typed', () => {
    const invocation = resolve(['create-admin', '--username', '007', '--password', '00123456', ...BASE_ARGS], {});
    assert.equal(invocation.action, 'create-admin');
    if (invocation.action !== 'create-admin') return;
    assert.equal(invocation.username, '007');
    assert.equal(invocation.password, '00123456');
  });

  it('reads the database settings from the environment, secrets included, and ignores the others', () => {
    const invocation = resolve(
      ['create-admin', '--username', 'alice'],
      {
        SERVICE_DB_BACKEND: 'server',
        SERVICE_DB_SERVER_HOST: 'db.internal',
        SERVICE_DB_SERVER_DATABASE: 'logs',
        SERVICE_DB_SERVER_USERNAME: 'logkeep',
        SERVICE_DB_SERVER_PASSWORD_FILE: '/s/db',
        SERVICE_HTTP_PORT: 'not-a-port',
        SERVICE_JWT_SECRET_FILE: '/does/not/exist',
      },
      { '/s/db': 'pw\n' },
    );
    assert.equal(invocation.action, 'create-admin');
    if (invocation.action !== 'create-admin') return;
    assert.equal(invocation.database.dbServerHost, 'db.internal');
    assert.equal(invocation.database.dbServerPassword, 'pw');
  });

  it('requires --username and the database path; a bad --password is named without its value', () => {
    const problems = problemsOf(['create-admin', '--password', 'Zq9!x'], {});
    assertProblem(problems, /--username is required/);
    assertProblem(problems, /--db-path is required/);
    assertProblem(problems, /^--password: .*at least 8 characters/);
    assert.ok(!problems.join('\n').includes('Zq9!x'));
  });

  it('refuses serve-only flags, and create-admin flags on serve', () => {
    assertProblem(problemsOf(['create-admin', '--username', 'a', ...BASE_ARGS, '--http-port', '1']), /--http-port does not apply to create-admin/);
    assertProblem(problemsOf(['create-admin', '--username', 'a', ...BASE_ARGS, '--print-config']), /--print-config does not apply to create-admin/);
    assertProblem(problemsOf([...BASE_ARGS, '--username', 'a']), /--username applies only to create-admin/);
  });
});

describe('--help and --version', () => {
  it('win over everything else, problems included', () => {
    assert.deepEqual(resolve(['--bogus', '--help'], {}), { action: 'help', command: 'serve' });
    assert.deepEqual(resolve(['create-admin', '-h'], {}), { action: 'help', command: 'create-admin' });
    assert.deepEqual(resolve(['--version'], {}), { action: 'version' });
  });

  it('parseCommandLine sees the actions wherever they are', () => {
    const parsed = parseCommandLine(['--db-path', 'x', '--print-config', 'serve']);
    assert.equal(parsed.command, 'serve');
    assert.equal(parsed.printConfig, true);
    assert.deepEqual(parsed.problems, []);
  });
});

describe('--print-config (rule 6)', () => {
  const env = {
    SERVICE_JWT_SECRET_FILE: '/s/jwt',
    SERVICE_BOOTSTRAP_ADMIN_PASSWORD: 'bootstrap-secret-value',
    SERVICE_HTTP_PORT: '9001',
  };
  const files = { '/s/jwt': `${SECRET}\n` };

  function printed(): Map<string, string[]> {
    const invocation = resolve(['--print-config', ...BASE_ARGS, '--no-rate-limit-enabled'], env, files);
    assert.equal(invocation.action, 'print-config');
    if (invocation.action !== 'print-config') throw new Error('unreachable');
    const text = renderPrintConfig(invocation);
    assert.ok(!text.includes(SECRET), 'the JWT secret is never printed');
    assert.ok(!text.includes('bootstrap-secret-value'), 'the bootstrap password is never printed');
    return new Map(
      text.split('\n').map((line) => {
        const [name, ...rest] = line.trim().split(/\s{2,}/);
        return [name as string, rest];
      }),
    );
  }

  it('lists every setting once, with its value and source', () => {
    const rows = printed();
    assert.equal(rows.size, SETTINGS.length);
    for (const s of SETTINGS) assert.ok(rows.has(s.flag ?? s.env), `${s.flag ?? s.env} is listed`);
    assert.deepEqual(rows.get('--http-port'), ['9001', 'env (SERVICE_HTTP_PORT)']);
    assert.deepEqual(rows.get('--db-path'), ['/tmp/logkeep.db', 'cli']);
    assert.deepEqual(rows.get('--rate-limit-enabled'), ['false', 'cli']);
    assert.deepEqual(rows.get('--http-host'), ['0.0.0.0', 'default']);
    assert.deepEqual(rows.get('--audit-retention-days'), ['unset', 'default']);
  });

  it('shows secrets as *** with their source (a _FILE names its variable), and unset secrets as unset', () => {
    const rows = printed();
    assert.deepEqual(rows.get('SERVICE_JWT_SECRET'), ['***', 'env (SERVICE_JWT_SECRET_FILE)']);
    assert.deepEqual(rows.get('SERVICE_BOOTSTRAP_ADMIN_PASSWORD'), ['***', 'env (SERVICE_BOOTSTRAP_ADMIN_PASSWORD)']);
    assert.deepEqual(rows.get('SERVICE_DB_SERVER_PASSWORD'), ['unset', 'default']);
  });

  it('with problems, reports the problems instead', () => {
    assert.equal(resolve(['--print-config'], {}).action, 'invalid');
  });
});

describe('single sign-on settings', () => {
  const env = { SERVICE_JWT_SECRET: 'x'.repeat(32), SERVICE_DB_PATH: '/tmp/x.db' };
  it('needs a client id and the public address with an issuer, and https away from localhost', () => {
    const resolved = resolveInvocation(['--oidc-issuer', 'http://idp.example.com'], env, () => '');
    assert.equal(resolved.action, 'invalid');
    const problems = resolved.action === 'invalid' ? resolved.problems : [];
    assert.ok(problems.some((p) => p.startsWith('--oidc-issuer must use https')));
    assert.ok(problems.some((p) => p.startsWith('--oidc-client-id is required')));
    assert.ok(problems.some((p) => p.startsWith('--public-url is required')));
  });
  it('reads every single sign-on setting, the secret from its file', () => {
    const resolved = resolveInvocation(
      [
        '--oidc-issuer',
        'https://idp.example.com/realms/x',
        '--oidc-client-id',
        'logkeep',
        '--public-url',
        'https://logs.example.com',
        '--oidc-group-teams',
        'eng=3,ops=4',
        '--no-password-login-enabled',
      ],
      { ...env, SERVICE_OIDC_CLIENT_SECRET_FILE: '/run/secret' },
      () => 'client-secret\n',
    );
    assert.equal(resolved.action, 'serve');
    if (resolved.action !== 'serve') return;
    assert.equal(resolved.config.oidcClientSecret, 'client-secret');
    assert.deepEqual(resolved.config.oidcGroupTeams, ['eng=3', 'ops=4']);
    assert.equal(resolved.config.passwordLoginEnabled, false);
    assert.equal(resolved.config.publicUrl, 'https://logs.example.com');
  });
  it('refuses password sign-in off without a provider, and malformed group pairs', () => {
    const resolved = resolveInvocation(['--no-password-login-enabled', '--oidc-group-teams', 'eng'], env, () => '');
    const problems = resolved.action === 'invalid' ? resolved.problems : [];
    assert.ok(problems.some((p) => p.startsWith('--password-login-enabled=false needs --oidc-issuer')));
    assert.ok(problems.some((p) => p.startsWith("--oidc-group-teams: 'eng'")));
  });
});
