#!/usr/bin/env node
// Runs every test file with node:test through tsx. On Node 20 `node --test`
// without paths finds no .ts files, so the paths are expanded here.
// Usage: node scripts/run-tests.mjs [--backend=file|server] [--watch] [dir-or-file ...]
//   (default: test/, without test/durability; see CONTRIBUTING.md)
//   --backend  runs the suites of one backend only (sets TEST_BACKEND)
//   --watch    reruns the files when a file they import changes
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Run only when named (`npm run test:durability`): they kill and restart
// processes under load, and need the machine to themselves to stay quick.
const ONLY_WHEN_NAMED = new Set([join('test', 'durability')]);

function collect(path, out, named = true) {
  const st = statSync(path);
  if (st.isDirectory()) {
    if (!named && ONLY_WHEN_NAMED.has(join(path))) return out;
    for (const name of readdirSync(path).sort()) collect(join(path, name), out, false);
  } else if (/\.test\.ts$/.test(path)) {
    out.push(path);
  }
  return out;
}

const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const roots = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const env = { ...process.env };
let watch = false;
for (const flag of flags) {
  const backend = /^--backend=(file|server)$/.exec(flag);
  if (backend) env.TEST_BACKEND = backend[1];
  else if (flag === '--watch') watch = true;
  else {
    console.error(`unknown option ${flag} (known: --backend=file, --backend=server, --watch)`);
    process.exit(2);
  }
}
const files = (roots.length ? roots : ['test']).flatMap((r) => collect(r, [], roots.length > 0));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// TAP for the log, then a summary of failures at its end; a person watching reads the spec reporter.
const reporters = watch
  ? ['--test-reporter=spec']
  : ['--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter=./scripts/failure-summary.mjs', '--test-reporter-destination=stdout'];
const args = [
  '--import',
  'tsx',
  '--test',
  ...(watch ? ['--watch'] : []),
  ...reporters,
  `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
  '--test-timeout=120000',
  ...files,
];
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env });
process.exit(result.status ?? 1);
