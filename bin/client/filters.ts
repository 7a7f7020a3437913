/**
 * The log filters of the API as command-line flags, shared by `query`,
 * `tail` and `export`: each flag is the query parameter of the same name
 * (`--tool-call-id` is `tool_call_id`), `--context path=value` is
 * `context.path=value`, and every value is passed as typed.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Correlation and exact-match fields, by flag. */
const EXACT_FLAGS = ['category', 'logger', 'session-id', 'request-id', 'connection-generation', 'tool-call-id', 'message-id', 'operation-id'] as const;

export const COMMON_OPTIONS: Options = {
  profile: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

export const FILTER_OPTIONS: Options = {
  project: { type: 'string', short: 'p' },
  group: { type: 'string', short: 'g' },
  level: { type: 'string', short: 'l' },
  from: { type: 'string' },
  to: { type: 'string' },
  q: { type: 'string', short: 'q' },
  context: { type: 'string', multiple: true },
  ...Object.fromEntries(EXACT_FLAGS.map((flag) => [flag, { type: 'string', multiple: true }])),
};

/** The filters' help lines, for every command that takes them. */
export const FILTER_HELP = `Scope (exactly one):
  -p, --project <id>            One project
  -g, --group <id>              A group: every project in it
Filters (as GET /v1/logs):
  -l, --level <level>           This level and above: debug, info, warning, error, critical
      --from <time>, --to <time>  ISO 8601 bounds of the entries' timestamps
  -q, --q <words>               Words and prefixes (pay*) every entry must contain
      --category, --logger, --session-id, --request-id, --connection-generation,
      --tool-call-id, --message-id, --operation-id <value>   Exact matches (repeatable)
      --context <path=value>    An exact match inside the entry (repeatable)`;

export function parseCommand(argv: readonly string[], options: Options, allowPositionals = false) {
  try {
    return parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS, ...options }, allowPositionals, strict: true });
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

/** The query string of the filters in `values` (scope included). */
export function filterQuery(values: Record<string, unknown>, scopeRequired = true): URLSearchParams {
  const query = new URLSearchParams();
  const project = values.project as string | undefined;
  const group = values.group as string | undefined;
  if (scopeRequired && (project === undefined) === (group === undefined)) throw usageError('give exactly one of --project and --group');
  if (project !== undefined) query.set('project_id', project);
  if (group !== undefined) query.set('group_id', group);
  for (const name of ['level', 'from', 'to', 'q'] as const) {
    const value = values[name];
    if (typeof value === 'string') query.set(name, value);
  }
  for (const flag of EXACT_FLAGS) {
    for (const value of (values[flag] as string[] | undefined) ?? []) query.append(flag.replace(/-/g, '_'), value);
  }
  for (const pair of (values.context as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--context takes path=value (got '${pair}')`);
    query.append(`context.${pair.slice(0, eq)}`, pair.slice(eq + 1));
  }
  return query;
}

/** A positive integer flag, or the default. */
export function positiveInt(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw usageError(`${flag} must be a positive integer`);
  return n;
}
