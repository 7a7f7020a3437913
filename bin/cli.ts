/**
 * The `logkeep` command: resolve the invocation (a pure function over argv,
 * the environment and a file reader), then help, version, print-config,
 * serve or create-admin; or one of the client commands (`bin/client/`:
 * login, query, tail, export, ingest), which talk to a running service. Configuration problems exit 78 before any port or
 * database is touched. Loaded by `logkeep.cts` once the thread pool is sized.
 */
import { readFileSync } from 'node:fs';
import { renderPrintConfig, resolveInvocation } from '../lib/config-resolve.js';
import { printHelp } from './help.js';
import { EXIT_CONFIG, reportProblems } from './startup-failure.js';

export async function main(argv: readonly string[]): Promise<void> {
  // The client commands talk to a running service; they never read the service's settings.
  const { isClientCommand, runClientCommand } = await import('./client/run.js');
  if (isClientCommand(argv[0])) return runClientCommand(argv[0], argv.slice(1));
  const invocation = resolveInvocation(argv, process.env, (path) => readFileSync(path, 'utf8'));
  switch (invocation.action) {
    case 'help':
      printHelp(invocation.command, packageVersion());
      return;
    case 'version':
      process.stdout.write(`logkeep ${packageVersion()}\n`);
      return;
    case 'invalid':
      warnAll(invocation.warnings);
      reportProblems(invocation.problems);
      process.exitCode = EXIT_CONFIG;
      return;
    case 'print-config':
      warnAll(invocation.warnings);
      process.stdout.write(`${renderPrintConfig(invocation)}\n`);
      return;
    // Loaded only when needed, so a configuration problem answers without loading the service.
    case 'create-admin':
      await (await import('./create-admin-command.js')).runCreateAdmin(invocation);
      return;
    case 'serve':
      await (await import('./serve.js')).serve(invocation);
      return;
  }
}

function warnAll(warnings: readonly string[]): void {
  for (const warning of warnings) process.stderr.write(`logkeep: warning: ${warning}\n`);
}

function packageVersion(): string {
  try {
    // dist/bin/cli.js → the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
