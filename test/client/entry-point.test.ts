/**
 * The ingestion client is its own entry, `logkeep/client`: an application
 * shipping logs loads it without the service, and an embedder of the
 * service loads the service without it. Checked on the import graph of the
 * sources (type-only imports included, so the compiled files import even less).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)'([^']+)'/g;

/** Every source file reachable from `entry` by relative imports, and every package it names. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (!specifier!.startsWith('.')) {
        packages.add(specifier!);
        continue;
      }
      const target = join(dirname(file), specifier!).replace(/\.js$/, '.ts');
      assert.ok(existsSync(target), `${file} imports ${specifier}, which exists`);
      pending.push(target);
    }
  }
  return { files, packages };
}

describe('the logkeep/client entry', () => {
  it('is in the exports map, pointing at the compiled client', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, unknown> };
    assert.deepEqual(pkg.exports['./client'], { types: './dist/lib/client/index.d.ts', default: './dist/lib/client/index.js' });
  });

  it('loads by its package name and exports the client', async () => {
    const client = await import('logkeep/client');
    assert.equal(typeof client.IngestClient, 'function');
    assert.equal(typeof client.IngestBatchError, 'function');
  });

  it('imports nothing of the service: only its own folder, undici and Node', () => {
    const { files, packages } = importGraph('lib/client/index.ts');
    for (const file of files) assert.ok(file.startsWith(join('lib', 'client')), `${file} is in lib/client`);
    for (const name of packages) assert.ok(name === 'undici' || name.startsWith('node:'), `lib/client imports only undici and node:*, not ${name}`);
  });

  it('is not loaded by the service entry', () => {
    const { files } = importGraph('lib/index.ts');
    assert.ok(files.size > 20, 'the walk followed the service');
    const reached = [...files].filter((file) => relative('lib/client', file).startsWith('..') === false);
    assert.deepEqual(reached, []);
  });
});

describe('the logkeep/pino entry', () => {
  it('is in the exports map, pointing at the compiled transport', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, unknown> };
    assert.deepEqual(pkg.exports['./pino'], { types: './dist/lib/client/pino.d.ts', default: './dist/lib/client/pino.js' });
  });

  it('loads by its package name and exports the transport and its mapping', async () => {
    const transport = await import('logkeep/pino');
    assert.equal(typeof transport.default, 'function');
    assert.equal(typeof transport.pinoToEntry, 'function');
  });

  it('imports only the client folder, pino-abstract-transport, undici and Node', () => {
    const { files, packages } = importGraph('lib/client/pino.ts');
    for (const file of files) assert.ok(file.startsWith(join('lib', 'client')), `${file} is in lib/client`);
    for (const name of packages) {
      assert.ok(
        ['undici', 'pino-abstract-transport'].includes(name) || name.startsWith('node:'),
        `logkeep/pino imports only its own dependencies, not ${name}`,
      );
    }
  });
});
