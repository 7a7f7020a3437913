/**
 * A real Chromium (Debian's package; nothing is downloaded) driven by
 * playwright-core, for the console's browser tests: one browser per test
 * file, a fresh context (own storage) per journey, axe-core run inside the
 * page, and screenshots for the documentation.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// The committed screenshots change only when asked (`UPDATE_SCREENSHOTS=1 npm test`),
// so a test run leaves the work tree clean; otherwise they land in the temp folder.
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshots')
    : join(tmpdir(), 'logkeep-screenshots');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launchBrowser(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM_PATH), `no Chromium at ${CHROMIUM_PATH} (Debian: apt-get install chromium; or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page in a fresh context; page errors and console errors are collected for the test to check. */
export async function newPage(browser: Browser): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'Europe/Paris' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  return { page, errors, close: () => context.close() };
}

/**
 * Runs axe-core in the page (evaluated through the debugging protocol, which
 * the page's CSP does not govern) and fails on any serious or critical violation.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  const has = await page.evaluate('typeof window.axe !== "undefined"');
  if (!has) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`)) as unknown[];
  assert.deepEqual(violations, [], `accessibility (${what}): ${JSON.stringify(violations, null, 2)}`);
}

/** Saves a screenshot (when `enabled`: one backend's run is enough), under docs/screenshots with UPDATE_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string, enabled: boolean): Promise<void> {
  if (!enabled) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}
