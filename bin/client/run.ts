/**
 * The client commands of the `logkeep` program (`login`, `query`, `tail`,
 * `export`, `ingest`, and the MCP server `mcp`), beside starting the service. Each failure is said in
 * words on standard error and ends with its documented exit code.
 */
import { CliError, EXIT } from './errors.js';

export const CLIENT_COMMANDS = ['login', 'query', 'tail', 'export', 'ingest', 'mcp'] as const;
export type ClientCommand = (typeof CLIENT_COMMANDS)[number];

export function isClientCommand(name: string | undefined): name is ClientCommand {
  return (CLIENT_COMMANDS as readonly (string | undefined)[]).includes(name);
}

export async function runClientCommand(command: ClientCommand, argv: readonly string[]): Promise<void> {
  try {
    switch (command) {
      case 'login':
        return await (await import('./login-command.js')).runLogin(argv);
      case 'query':
        return await (await import('./query-command.js')).runQuery(argv);
      case 'tail':
        return await (await import('./tail-command.js')).runTail(argv);
      case 'export':
        return await (await import('./export-command.js')).runExport(argv);
      case 'ingest':
        return await (await import('./ingest-command.js')).runIngest(argv);
      case 'mcp':
        return await (await import('./mcp-command.js')).runMcp(argv);
    }
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    process.stderr.write(`logkeep ${command}: ${err.message}\n`);
    process.exitCode = err.exitCode;
  }
}

export { EXIT };
