#!/usr/bin/env node
/**
 * The `logkeep` executable. It sizes libuv's thread pool (sqlite3 runs
 * every statement on it) before anything uses it. libuv reads
 * UV_THREADPOOL_SIZE once, when the pool first starts, and Node's ESM
 * loader starts it while reading an ES module entry (measured on Node 20:
 * setting it from an .mjs/.js entry has no effect). This entry is therefore
 * CommonJS (loaded with synchronous reads): it sets the variable, then
 * imports the ESM program.
 */
if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = '8';

import('./cli.js')
  .then(({ main }) => main(process.argv.slice(2)))
  .catch((err: unknown) => {
    process.stderr.write(`logkeep: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
