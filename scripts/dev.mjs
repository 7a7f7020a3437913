#!/usr/bin/env node
// `npm run dev`: the service from source on an SQLite file in .dev/, restarted
// by `node --watch` when a file it imports changes, and the console rebuilt
// into dist/console on every change of console/src and read again from disk
// by the running service (reload the page). Flags after `--` go to the
// service: `npm run dev -- --http-port 9000`.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
mkdirSync(join(ROOT, '.dev'), { recursive: true });

// Settings for a local service only: a fixed signing secret is fine on a developer's machine, never elsewhere.
const env = {
  SERVICE_DB_PATH: join(ROOT, '.dev', 'logkeep.db'),
  SERVICE_JWT_SECRET: 'development-only-secret-not-for-any-real-service',
  SERVICE_HTTP_PORT: '8080',
  SERVICE_LOG_LEVEL: 'info',
  ...process.env,
};

const children = [
  spawn(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs'), '--watch'], { stdio: 'inherit', cwd: ROOT }),
  spawn(process.execPath, ['--import', 'tsx', '--watch', join(ROOT, 'scripts', 'dev-serve.ts'), ...process.argv.slice(2)], {
    stdio: 'inherit',
    cwd: ROOT,
    env,
  }),
];
for (const child of children) {
  child.on('exit', (code) => {
    for (const other of children) if (other !== child) other.kill('SIGTERM');
    process.exitCode = code ?? 1;
  });
}
// Ctrl-C reaches the children directly (one process group); a SIGTERM sent to this process alone is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {
  for (const child of children) child.kill('SIGTERM');
});
