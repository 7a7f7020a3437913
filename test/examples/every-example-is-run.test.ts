/**
 * Every file in examples/ is type-checked (the root tsconfig includes the
 * folder) and run: each has a test file of its own name here that imports it.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

it('every example has a test that imports and runs it', () => {
  const examples = readdirSync('examples').filter((name) => name.endsWith('.ts'));
  assert.ok(examples.length >= 4, 'the examples are there');
  // Shell examples are run by a test of their own name too.
  for (const name of readdirSync('examples').filter((n) => n.endsWith('.sh'))) {
    const testFile = `test/examples/${name.replace(/\.sh$/, '')}.test.ts`;
    assert.ok(existsSync(testFile), `${testFile} runs examples/${name}`);
    assert.ok(readFileSync(testFile, 'utf8').includes(`'examples/${name}'`), `${testFile} runs examples/${name}`);
  }
  for (const name of examples) {
    const base = name.replace(/\.ts$/, '');
    const testFile = `test/examples/${base}.test.ts`;
    assert.ok(existsSync(testFile), `${testFile} runs examples/${name}`);
    assert.match(readFileSync(testFile, 'utf8'), new RegExp(`from '\\.\\./\\.\\./examples/${base}\\.js'`), `${testFile} imports the example`);
  }
});
