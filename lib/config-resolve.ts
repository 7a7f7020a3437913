/**
 * From a command line and an environment to what the `logkeep` binary should
 * do, with every configuration problem collected. Pure: the binary passes `process.argv`,
 * `process.env` and a file reader, then acts on the answer.
 *
 * The command line is parsed here rather than by `cac`, which turns
 * number-like values into numbers (`--password 00123` would become 123):
 * every value stays the exact text the operator typed.
 */
import { passwordRuleProblem } from './auth/passwords.js';
import {
  CONFIG_DEFAULTS,
  canonicalLogLevel,
  configProblems,
  databaseConfigProblems,
  type DatabaseConfig,
  type LogLevelName,
  type LogServiceConfig,
} from './core/config.js';
import {
  SETTINGS,
  SETTINGS_BY_FLAG,
  readSetting,
  unknownEnvironmentWarnings,
  type Environment,
  type FlagValue,
  type ReadTextFile,
  type SettingKey,
  type SettingOrigin,
  type SettingSpec,
} from './config-sources.js';

export type CommandName = 'serve' | 'create-admin';
export const COMMANDS: readonly CommandName[] = ['serve', 'create-admin'];

/** The flags of `create-admin` besides the database settings. */
const CREATE_ADMIN_FLAGS: ReadonlySet<string> = new Set(['--username', '--password']);

/** A command line split into its parts; nothing resolved yet. */
export interface ParsedCommandLine {
  /** null when no command was named (which means `serve`). */
  command: CommandName | null;
  flags: Map<string, FlagValue>;
  help: boolean;
  version: boolean;
  printConfig: boolean;
  problems: string[];
}

/**
 * Splits `argv` (without the node and script paths) into command, flags and
 * actions. `--name value` and `--name=value` both work; a boolean setting
 * is `--name`, `--no-name` or `--name=<boolean>`. A flag given twice, an
 * unknown flag and a stray argument are problems.
 */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  const parsed: ParsedCommandLine = { command: null, flags: new Map(), help: false, version: false, printConfig: false, problems: [] };
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '-h' || token === '--help') parsed.help = true;
    else if (token === '-v' || token === '--version') parsed.version = true;
    else if (token === '--print-config') parsed.printConfig = true;
    else if (!token.startsWith('-') || token === '-') positionals.push(token);
    else if (!token.startsWith('--') || token === '--') parsed.problems.push(`unknown option ${token}`);
    else i = readFlag(argv, i, parsed);
  }
  const [command, ...extra] = positionals;
  if (command !== undefined) {
    if ((COMMANDS as readonly string[]).includes(command)) parsed.command = command as CommandName;
    else parsed.problems.push(`unknown command '${command}' (the commands are ${COMMANDS.join(' and ')})`);
  }
  for (const arg of extra) parsed.problems.push(`unexpected argument '${arg}'`);
  return parsed;
}

/** Reads the flag at `argv[i]` into `parsed`; returns the index of the last token consumed. */
function readFlag(argv: readonly string[], i: number, parsed: ParsedCommandLine): number {
  const token = argv[i] as string;
  const eq = token.indexOf('=');
  const spelled = eq === -1 ? token : token.slice(0, eq);
  const inline = eq === -1 ? undefined : token.slice(eq + 1);
  const add = (name: string, value: string | boolean) => {
    if (parsed.flags.has(name)) parsed.problems.push(`${name} is given more than once`);
    else parsed.flags.set(name, { value, spelled });
  };
  const negatedOf = spelled.startsWith('--no-') ? SETTINGS_BY_FLAG.get(`--${spelled.slice(5)}`) : undefined;
  if (negatedOf?.kind === 'boolean') {
    if (inline !== undefined) parsed.problems.push(`${spelled} takes no value`);
    else add(negatedOf.flag as string, false);
    return i;
  }
  const spec = SETTINGS_BY_FLAG.get(spelled);
  if (spec === undefined && !CREATE_ADMIN_FLAGS.has(spelled)) {
    parsed.problems.push(unknownFlagProblem(spelled));
    // Swallow an unknown flag's apparent value so one mistake reads as one problem.
    const next = argv[i + 1];
    return inline === undefined && next !== undefined && !next.startsWith('-') && !(COMMANDS as readonly string[]).includes(next) ? i + 1 : i;
  }
  if (inline !== undefined) {
    add(spelled, inline);
    return i;
  }
  if (spec?.kind === 'boolean') {
    add(spelled, true);
    return i;
  }
  const next = argv[i + 1];
  if (next === undefined || next.startsWith('--')) {
    parsed.problems.push(`${spelled} needs a value (write ${spelled}=<value> for a value starting with --)`);
    return i;
  }
  add(spelled, next);
  return i + 1;
}

function unknownFlagProblem(spelled: string): string {
  // A secret's would-be flag gets a pointer to the variable (its value is never echoed).
  const secret = SETTINGS.find((s) => s.kind === 'secret' && `--${s.env.slice('SERVICE_'.length).toLowerCase().replace(/_/g, '-')}` === spelled);
  return secret ? `unknown option ${spelled}: secrets have no flag; set ${secret.env} or ${secret.env}_FILE` : `unknown option ${spelled}`;
}

/** Each setting's origin, for `--print-config`. */
export type ConfigSources = { [K in SettingKey]?: SettingOrigin };

/** A serve configuration that passed every check. */
export interface ResolvedConfig {
  config: LogServiceConfig;
  sources: ConfigSources;
  warnings: string[];
}

/** What the binary should do. */
export type Invocation =
  | { action: 'help'; command: CommandName }
  | { action: 'version' }
  | ({ action: 'print-config' } & ResolvedConfig)
  | ({ action: 'serve' } & ResolvedConfig)
  | {
      action: 'create-admin';
      database: DatabaseConfig;
      sources: ConfigSources;
      username: string;
      /** null: generate one and print it once. */
      password: string | null;
      warnings: string[];
    }
  | { action: 'invalid'; problems: string[]; warnings: string[] };

/**
 * Resolves a whole invocation: `--help` and `--version` win over anything
 * else; otherwise every problem (command line, sources, cross-field checks)
 * is collected into one `invalid` answer. Unknown `SERVICE_*` variables and
 * harmless oddities are warnings.
 */
export function resolveInvocation(argv: readonly string[], env: Environment, readFile: ReadTextFile): Invocation {
  const parsed = parseCommandLine(argv);
  const command = parsed.command ?? 'serve';
  if (parsed.help) return { action: 'help', command };
  if (parsed.version) return { action: 'version' };
  const problems = [...parsed.problems, ...flagScopeProblems(command, parsed)];
  const warnings = unknownEnvironmentWarnings(env);
  if (command === 'create-admin') {
    const resolved = resolveDatabaseSettings(parsed.flags, env, readFile);
    const username = parsed.flags.get('--username')?.value;
    const password = parsed.flags.get('--password')?.value;
    if (typeof username !== 'string' || username === '') problems.push('--username is required');
    const passwordProblem = typeof password === 'string' ? passwordRuleProblem(password) : null;
    // The rule's message never contains the password itself.
    if (passwordProblem !== null) problems.push(`--password: ${passwordProblem}`);
    problems.push(...resolved.problems);
    if (problems.length > 0) return { action: 'invalid', problems, warnings };
    return {
      action: 'create-admin',
      database: resolved.database,
      sources: resolved.sources,
      username: username as string,
      password: typeof password === 'string' ? password : null,
      warnings: [...warnings, ...resolved.warnings],
    };
  }
  const resolved = resolveConfig(parsed.flags, env, readFile);
  if ('problems' in resolved) return { action: 'invalid', problems: [...problems, ...resolved.problems], warnings };
  if (problems.length > 0) return { action: 'invalid', problems, warnings };
  return { action: parsed.printConfig ? 'print-config' : 'serve', ...resolved, warnings: [...warnings, ...resolved.warnings] };
}

/** Flags that exist but belong to the other command. */
function flagScopeProblems(command: CommandName, parsed: ParsedCommandLine): string[] {
  const problems: string[] = [];
  for (const [name, { spelled }] of parsed.flags) {
    const spec = SETTINGS_BY_FLAG.get(name);
    if (command === 'serve' && CREATE_ADMIN_FLAGS.has(name)) problems.push(`${spelled} applies only to create-admin`);
    if (command === 'create-admin' && spec !== undefined && !spec.database) problems.push(`${spelled} does not apply to create-admin`);
  }
  if (command === 'create-admin' && parsed.printConfig) problems.push('--print-config does not apply to create-admin');
  return problems;
}

/** Reads the given settings; the values keyed by setting, their origins, and the problems. */
function readSettings(
  specs: readonly SettingSpec[],
  flags: ReadonlyMap<string, FlagValue>,
  env: Environment,
  readFile: ReadTextFile,
): { values: Partial<Record<SettingKey, unknown>>; sources: ConfigSources; problems: string[] } {
  const values: Partial<Record<SettingKey, unknown>> = {};
  const sources: ConfigSources = {};
  const problems: string[] = [];
  for (const spec of specs) {
    const reading = readSetting(spec, flags, env, readFile);
    if (reading.ok) {
      values[spec.key] = reading.value;
      sources[spec.key] = reading.origin;
    } else {
      // The default stands in so the cross-field checks do not report the same setting again.
      problems.push(reading.problem);
    }
  }
  return { values, sources, problems };
}

/**
 * The full service configuration from flags, environment and defaults, with
 * every problem listed together (the reading problems, then `configProblems`).
 */
export function resolveConfig(flags: ReadonlyMap<string, FlagValue>, env: Environment, readFile: ReadTextFile): ResolvedConfig | { problems: string[] } {
  const { values, sources, problems } = readSettings(SETTINGS, flags, env, readFile);
  const config = { ...CONFIG_DEFAULTS, jwtSecret: '', ...withoutNulls(values, ['jwtSecret']) } as LogServiceConfig;
  config.logLevel = canonicalLogLevel(config.logLevel) as LogLevelName;
  problems.push(...configProblems(config));
  if (problems.length > 0) return { problems };
  return { config: freezeConfig(config), sources, warnings: configWarnings(config) };
}

/** The database settings alone, for `create-admin` (no signing secret needed). */
export function resolveDatabaseSettings(
  flags: ReadonlyMap<string, FlagValue>,
  env: Environment,
  readFile: ReadTextFile,
): { database: DatabaseConfig; sources: ConfigSources; problems: string[]; warnings: string[] } {
  const { values, sources, problems } = readSettings(
    SETTINGS.filter((s) => s.database),
    flags,
    env,
    readFile,
  );
  const database = Object.freeze(
    Object.fromEntries(
      SETTINGS.filter((s) => s.database).map((s) => [s.key, s.key in values ? values[s.key] : CONFIG_DEFAULTS[s.key as keyof typeof CONFIG_DEFAULTS]]),
    ),
  ) as unknown as DatabaseConfig;
  problems.push(...databaseConfigProblems(database));
  return { database, sources, problems, warnings: problems.length > 0 ? [] : configWarnings(database) };
}

/** An unset JWT secret stays '' so that `configProblems` names it. */
function withoutNulls(values: Partial<Record<SettingKey, unknown>>, keys: SettingKey[]): Partial<Record<SettingKey, unknown>> {
  const copy = { ...values };
  for (const key of keys) if (copy[key] === null) delete copy[key];
  return copy;
}

function freezeConfig(config: LogServiceConfig): LogServiceConfig {
  return Object.freeze({ ...config, corsAllowedOrigins: Object.freeze([...config.corsAllowedOrigins]) as string[] });
}

/** Settings that are valid but will not do what the operator may expect. */
function configWarnings(c: Pick<LogServiceConfig, 'dbBackend' | 'dbReadPoolSize'>): string[] {
  const warnings: string[] = [];
  if (c.dbBackend === 'server' && c.dbReadPoolSize !== CONFIG_DEFAULTS.dbReadPoolSize) {
    warnings.push('--db-read-pool-size applies to the file backend only; it is ignored with --db-backend server');
  }
  return warnings;
}

/**
 * `--print-config`: one line per setting, in the settings table's order: its flag (or
 * variable, for a secret), its value, its source. Secrets show `***` when
 * set and `unset` otherwise, never their value. A value read from the
 * environment names its variable, e.g. `env (SERVICE_JWT_SECRET_FILE)`.
 */
export function renderPrintConfig(resolved: Pick<ResolvedConfig, 'config' | 'sources'>): string {
  const rows = SETTINGS.map((spec) => {
    const value = resolved.config[spec.key];
    const origin = resolved.sources[spec.key] ?? { source: 'default', from: null };
    const shown = spec.kind === 'secret' ? (origin.source === 'default' ? 'unset' : '***') : formatValue(value);
    const source = origin.source === 'env' ? `env (${origin.from})` : origin.source;
    return [spec.flag ?? spec.env, shown, source] as const;
  });
  const nameWidth = Math.max(...rows.map(([name]) => name.length));
  const valueWidth = Math.max(...rows.map(([, value]) => value.length));
  return rows.map(([name, value, source]) => `${name.padEnd(nameWidth)}  ${value.padEnd(valueWidth)}  ${source}`).join('\n');
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length === 0 ? 'unset' : value.join(',');
  return String(value);
}
