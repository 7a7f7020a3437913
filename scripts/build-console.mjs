#!/usr/bin/env node
// Bundles the web console (console/src) into dist/console: content-hashed
// app-[hash].js and app-[hash].css plus an index.html naming them, with no
// inline script or style (the console's CSP forbids both). Fails when the
// first load (JS + CSS, gzipped) is over its budget, and prints the figure.
// With --watch (npm run dev), rebuilds on every change of console/src and
// only warns about the budget.
import { build, context } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'console');
const BUDGET_BYTES = 150 * 1024;

const WATCH = process.argv.includes('--watch');

const OPTIONS = {
  absWorkingDir: ROOT,
  entryPoints: ['console/src/main.tsx'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: 'app-[hash]',
  assetNames: 'asset-[hash]',
  outdir: OUT,
  write: false,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
};

if (WATCH) {
  const rebuilt = {
    name: 'write-console',
    setup(b) {
      b.onEnd((result) => {
        if (result.errors.length === 0) writeConsole(result);
      });
    },
  };
  const ctx = await context({ ...OPTIONS, plugins: [rebuilt] });
  await ctx.watch();
  console.log('console build: watching console/src');
} else {
  writeConsole(await build(OPTIONS));
}

/** Writes the bundles and the index.html naming them (index.html last: the service reloads when it changes). */
function writeConsole(result) {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  let js = null;
  let css = null;
  let gzipped = 0;
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    writeFileSync(join(OUT, name), file.contents);
    if (name.endsWith('.js')) js = name;
    if (name.endsWith('.css')) css = name;
    if (name.endsWith('.js') || name.endsWith('.css')) gzipped += gzipSync(file.contents, { level: 9 }).length;
  }
  if (!js || !css) throw new Error('console build: expected one JS and one CSS bundle');

  writeFileSync(
    join(OUT, 'index.html'),
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>logkeep</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${css}">
<script type="module" src="${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The logkeep console needs JavaScript.</noscript>
</body>
</html>
`,
  );

  const kib = (gzipped / 1024).toFixed(1);
  if (gzipped > BUDGET_BYTES) {
    console.error(`console build: first load is ${kib} KiB gzipped (JS + CSS), over the ${BUDGET_BYTES / 1024} KiB budget`);
    if (!WATCH) process.exit(1);
  }
  console.log(`console build: ${js}, ${css}; first load ${kib} KiB gzipped (budget ${BUDGET_BYTES / 1024} KiB)`);
}
