/**
 * The console as the bin serves it (from dist/, where the build put the
 * bundle): `GET /` leads to it, a first start's printed temporary password
 * signs in and leads to the forced change, and the flag and the variable
 * switch it off.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServing, type RunningBin } from '../support/bin.js';
import { assertAccessible, launchBrowser, newPage } from '../support/browser.js';

const GENERATED_PASSWORD = /TEMPORARY password[^\n]*\n\n {4}(\S+)\n/;
const SECRET = 'console-bin-test-secret-0123456789abcdef';

describe('console served by the bin', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logkeep-console-bin-'));
  const running: RunningBin[] = [];
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    for (const bin of running) bin.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  async function serve(name: string, args: string[] = [], env: Record<string, string> = {}) {
    const started = await startServing(['--db-path', join(dir, `${name}.db`), '--no-rate-limit-enabled', ...args], { SERVICE_JWT_SECRET: SECRET, ...env });
    running.push(started.bin);
    return started;
  }

  it('redirects / to the console, where the printed temporary password leads to the forced change', async () => {
    const { bin, url } = await serve('first');
    const password = (await bin.waitForOutput(GENERATED_PASSWORD))[1]!;
    const root = await fetch(`${url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/console/');
    // Anything else outside /v1 still answers 404.
    assert.equal((await fetch(`${url}/index.html`)).status, 404);

    const { page, errors, close } = await newPage(browser);
    try {
      await page.goto(`${url}/`);
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      await assertAccessible(page, 'forced change (bin)');
      // The wrong current password is refused in words, and the form stays.
      await page.getByLabel('Current password').fill('not-the-password');
      await page.getByLabel('New password', { exact: true }).fill('a-new-password-1');
      await page.getByLabel('New password, again').fill('a-new-password-1');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('alert').waitFor();
      await page.getByLabel('Current password').fill(password);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('heading', { name: 'Explore logs' }).waitFor({ state: 'attached' });
      await page.getByRole('link', { name: 'Account' }).waitFor();
      assert.deepEqual(
        errors.filter((e) => !/Failed to load resource/.test(e)),
        [],
      );
    } finally {
      await close();
    }
  });

  it('is off with --no-console-enabled or SERVICE_CONSOLE_ENABLED=false', async () => {
    for (const [name, args, env] of [
      ['off-flag', ['--no-console-enabled'], {}],
      ['off-env', [], { SERVICE_CONSOLE_ENABLED: 'false' }],
    ] as const) {
      const { url } = await serve(name, [...args], { ...env });
      for (const path of ['/', '/console', '/console/']) {
        const res = await fetch(`${url}${path}`, { redirect: 'manual' });
        assert.equal(res.status, 404, `${name} ${path}`);
      }
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
    }
  });
});
