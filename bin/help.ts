/**
 * `--help`, rendered by cac from the settings table, so the help lists
 * exactly the flags the resolver accepts. cac is used for the text only:
 * the command line itself is parsed by `parseCommandLine`, which keeps
 * every value as typed.
 */
import { cac, type Command } from 'cac';
import { CONFIG_DEFAULTS } from '../lib/core/config.js';
import { SETTINGS, type SettingSpec } from '../lib/config-sources.js';
import type { CommandName } from '../lib/config-resolve.js';

/** Prints the help of `command` (the serve help also lists the commands). */
export function printHelp(command: CommandName, version: string): void {
  const cli = cac('logkeep');
  cli.version(version);
  const serve = cli
    .command('serve', 'Start the service (also what `logkeep` alone does)')
    .alias('!')
    .usage('[serve] [options]')
    .option('--print-config', 'Print every setting, its value and its source, then exit 0 without starting');
  for (const spec of SETTINGS) addSetting(serve, spec);
  const createAdmin = cli
    .command('create-admin', 'Create an administrator (needs only the database settings)')
    .usage('create-admin --username <name> [--password <password>] [database options]')
    .option('--username <name>', 'Username of the new administrator (required)')
    .option('--password <password>', 'Its password; omit it to have one generated and printed once');
  for (const spec of SETTINGS.filter((s) => s.database)) addSetting(createAdmin, spec);
  const secrets = SETTINGS.filter((s) => s.kind === 'secret' && (command === 'serve' || s.database));
  cli.help((sections) => [
    ...sections,
    {
      title: 'Secrets (environment only: NAME, or NAME_FILE naming a file whose text is the value)',
      body: secrets.map((s) => `  ${s.env.padEnd(34)}${s.description}`).join('\n'),
    },
    {
      title: 'Environment',
      body: [
        '  Every option also reads SERVICE_<OPTION> (--http-port: SERVICE_HTTP_PORT); an empty variable is unset.',
        '  A flag wins over the environment, the environment over the default.',
        '  Booleans: true, false, 1, 0, yes, no. Sizes and durations: plain integers.',
      ].join('\n'),
    },
    {
      title: 'Exit codes',
      body: '  0 success, 1 failure (create-admin: username taken), 78 configuration problem or database unusable',
    },
    {
      title: 'Client commands (talk to a running service; `logkeep <command> --help` for each, docs/cli.md)',
      body: [
        '  login     Store a service URL and an access key (or a password sign-in) under a profile',
        '  query     Entries matching filters, newest first: a table, --json or --ndjson',
        '  tail      Follow entries live; resumes after any interruption without missing or repeating one',
        '  export    Every matching entry as NDJSON (optionally gzip), resumable with the cursor it prints',
        '  ingest    Send NDJSON or JSON files (or standard input) in compressed batches',
        '  mcp       A Model Context Protocol server on standard input and output, for agents (docs/mcp.md)',
      ].join('\n'),
    },
  ]);
  (command === 'serve' ? serve : createAdmin).outputHelp();
}

function addSetting(command: Command, spec: SettingSpec): void {
  if (spec.flag === null) return;
  const flag = spec.flag;
  const rawName = spec.kind === 'boolean' ? `${flag}, --no-${flag.slice(2)}` : `${flag} <${valueName(spec)}>`;
  const fallback = CONFIG_DEFAULTS[spec.key as keyof typeof CONFIG_DEFAULTS];
  const shownDefault = fallback === null || (Array.isArray(fallback) && fallback.length === 0) ? undefined : fallback;
  command.option(rawName, `${spec.description} [${spec.env}]`, shownDefault === undefined ? {} : { default: shownDefault });
}

function valueName(spec: SettingSpec): string {
  if (spec.kind === 'integer' || spec.kind === 'optional-integer') return 'n';
  if (spec.kind === 'list') return 'list';
  return 'value';
}
