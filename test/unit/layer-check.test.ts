/**
 * The layer check run by `npm run lint` (scripts/check-layers.mjs): it
 * passes on the real lib/ and bin/, and on small trees written to a
 * temporary directory it reports each kind of import against the order.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const checker = join(repoRoot, 'scripts', 'check-layers.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'logkeep-layers-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

let trees = 0;
/** Writes a tree of files (path → content) and returns its root. */
function tree(files: Record<string, string>): string {
  const root = join(scratch, `tree-${++trees}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(root: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [checker, root], { encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

/** A tree that follows the order: everything points down. */
const goodTree = {
  'lib/core/errors.ts': 'export const E = 1;\n',
  'lib/search/levels.ts': "import { E } from '../core/errors.js';\nexport const L = E;\n",
  'lib/storage/storage.ts': "import { L } from '../search/levels.js';\nexport const S = L;\n",
  'lib/storage/sqlite/reads.ts': "import { S } from '../storage.js';\nexport const R = S;\n",
  'lib/http/handler.ts': "import type { S } from '../storage/storage.js';\nexport type H = typeof S;\n",
  'lib/client/client.ts': "import { other } from './other.js';\nexport const C = other;\n",
  'lib/client/other.ts': 'export const other = 2;\n',
  'lib/index.ts': "export { C } from './client/client.js';\nexport type { H } from './http/handler.js';\n",
  'bin/cli.ts': "import { C } from '../lib/index.js';\nexport const B = C;\n",
};

describe('layer check', () => {
  it('passes on the repository as it stands', () => {
    const { status, output } = check(repoRoot);
    assert.equal(status, 0, output);
  });

  it('passes on a tree whose imports all point down', () => {
    const { status, output } = check(tree(goodTree));
    assert.equal(status, 0, output);
    assert.match(output, /layers: ok/);
  });

  it('reports an import that points up, with its file and line', () => {
    const root = tree({
      ...goodTree,
      'lib/core/config.ts': "// reads the store\nimport type { S } from '../storage/storage.js';\nexport type C = typeof S;\n",
    });
    const { status, output } = check(root);
    assert.equal(status, 1);
    assert.match(output, /lib\/core\/config\.ts:2: imports \.\.\/storage\/storage\.js: core may not import storage/);
  });

  it('reports dynamic imports and worker entries that point up', () => {
    const root = tree({
      ...goodTree,
      'lib/storage/open.ts': "export async function open() { return import('../http/handler.js'); }\n",
      'lib/search/pool.ts': "export const entry = new URL('../live/worker.js', import.meta.url);\n",
      'lib/live/worker.ts': 'export {};\n',
    });
    const { status, output } = check(root);
    assert.equal(status, 1);
    assert.match(output, /lib\/storage\/open\.ts:1: .*storage may not import http/);
    assert.match(output, /lib\/search\/pool\.ts:1: .*search may not import live/);
  });

  it('keeps peers apart, the two backends apart, and the client alone', () => {
    const root = tree({
      ...goodTree,
      'lib/admin/users.ts': "import { P } from '../ops/purge.js';\nexport const U = P;\n",
      'lib/ops/purge.ts': 'export const P = 1;\n',
      'lib/storage/postgres/reads.ts': "import { R } from '../sqlite/reads.js';\nexport const PR = R;\n",
      'lib/client/errors.ts': "import { E } from '../core/errors.js';\nexport const CE = E;\n",
      'lib/http/ship.ts': "import { C } from '../client/client.js';\nexport const SH = C;\n",
    });
    const { status, output } = check(root);
    assert.equal(status, 1);
    assert.match(output, /lib\/admin\/users\.ts:1: .*peers/);
    assert.match(output, /lib\/storage\/postgres\/reads\.ts:1: .*never import each other/);
    assert.match(output, /lib\/client\/errors\.ts:1: .*stands alone/);
    assert.match(output, /lib\/http\/ship\.ts:1: .*may import client/);
  });

  it('keeps the storage folders written for both backends free of either', () => {
    const root = tree({
      ...goodTree,
      'lib/storage/log-index/plan.ts': "import { R } from '../sqlite/reads.js';\nexport const LP = R;\n",
      'lib/storage/schema/tables.ts': "import type { PR } from '../postgres/reads.js';\nexport type T = typeof PR;\n",
      'lib/storage/postgres/reads.ts': "import { S } from '../storage.js';\nexport const PR = S;\n",
      'lib/storage/sqlite/plan-reads.ts': "import { LP } from '../log-index/plan.js';\nexport const SP = LP;\n",
    });
    const { status, output } = check(root);
    assert.equal(status, 1);
    assert.match(output, /lib\/storage\/log-index\/plan\.ts:1: .*storage\/log-index\/ serves both backends and never imports storage\/sqlite\//);
    assert.match(output, /lib\/storage\/schema\/tables\.ts:1: .*never imports storage\/postgres\//);
    assert.doesNotMatch(output, /plan-reads/);
  });

  it('reports a folder missing from the order, and an import cycle inside one folder', () => {
    const root = tree({
      ...goodTree,
      'lib/extras/thing.ts': "import { E } from '../core/errors.js';\nexport const T = E;\n",
      'lib/storage/postgres/a.ts': "import type { B } from './b.js';\nexport type A = B;\n",
      'lib/storage/postgres/b.ts': "import type { A } from './a.js';\nexport type B = A | 1;\n",
    });
    const { status, output } = check(root);
    assert.equal(status, 1);
    assert.match(output, /lib\/extras\/ is not in the layer order/);
    assert.match(output, /import cycle among lib\/storage\/postgres\/a\.ts, lib\/storage\/postgres\/b\.ts/);
  });
});
