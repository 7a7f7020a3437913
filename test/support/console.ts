/**
 * The frame every browser suite of the console shares: one backend per test
 * file (a browser journey is long, and each file gets the runner's whole
 * per-file time), a service and a Chromium for the suite, signing in as a
 * person does, and a failure that says what the page showed.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { describeEachBackend, type BackendName } from './backends.js';
import { startService, type RunningService, type StartOptions } from './service.js';
import { launchBrowser, newPage } from './browser.js';

export interface ConsoleEnv {
  svc: RunningService;
  browser: Browser;
  /** Screenshots are taken on one backend only (file): the pages look the same. */
  shots: boolean;
}

/** `describe(title [backend])` (skipped as the other suites are when PostgreSQL is down outside CI) with a service and a browser started before its tests and stopped after. */
export function consoleSuite(title: string, backend: BackendName, define: (env: ConsoleEnv) => void, options: StartOptions = {}): void {
  describeEachBackend(title, () => {
    const env = { shots: backend === 'file' } as ConsoleEnv;
    before(async () => {
      env.svc = await startService(backend, options);
      env.browser = await launchBrowser();
    });
    after(async () => {
      await env.browser?.close();
      await env.svc?.stop({ dropDatabase: true });
    });
    define(env);
  }, [backend]);
}

/**
 * Runs `body` in a fresh page, then checks the page logged no error. A
 * failure carries what the person would have seen, to tell a console bug
 * from a test bug.
 */
export async function inPage(browser: Browser, body: (page: Page) => Promise<void>): Promise<void> {
  const { page, errors, close } = await newPage(browser);
  try {
    await body(page);
    assert.deepEqual(
      errors.filter((e) => !/Failed to load resource|net::ERR/.test(e)),
      [],
    );
  } catch (err) {
    const seen = await page
      .locator('body')
      .innerText()
      .catch(() => '(no page)');
    throw new Error(`${(err as Error).message}\n--- page (${page.url()}) ---\n${seen}\n--- errors ---\n${errors.join('\n')}`, { cause: err });
  } finally {
    await close();
  }
}

/** Signs in through the sign-in form and waits for the signed-in shell. */
export async function signInAs(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
