/**
 * The results list with many entries, in a real Chromium on both backends:
 * pages load as the list scrolls through `next_cursor`, only the rows in
 * view are in the page, and while following live with the list scrolled
 * away the rows in view stay put and a marker counts the new entries;
 * an expired access token is refreshed, a refused refresh signs out.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { ADMIN_FINAL_PASSWORD, createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { launchBrowser, newPage } from '../support/browser.js';

const COUNT = 600;
/** Moved forward to expire access tokens (the service's clock only). */
let clockOffset = 0;

describeEachBackend('console results list', (backend) => {
  let svc: RunningService;
  let browser: Browser;
  before(async () => {
    svc = await startService(backend, { now: () => Date.now() + clockOffset });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc.stop({ dropDatabase: true });
  });

  it('scrolls through every page drawing only the rows in view, and marks live arrivals when scrolled away', async () => {
    const admin = await signInAdmin(svc.url);
    const groupId = await createGroup(svc.url, admin.token, 'bulk');
    const project = await createProject(svc.url, admin.token, groupId, 'bulk');
    const key = (await createKey(svc.url, admin.token, project)).secret;
    const base = Date.now() - 3_600_000;
    await ingestAll(
      svc.url,
      key,
      Array.from({ length: COUNT }, (_, i) => ({ level: 'info', event: `bulk ${String(i).padStart(4, '0')}`, timestamp: new Date(base + i * 1000).toISOString() })),
    );

    const { page, errors, close } = await newPage(browser);
    try {
      // A relative range in the link: pinned once per query, so the page settles on its answer.
      await page.goto(`${svc.url}/console/#/explore?project_id=${project}&range=6h`);
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(ADMIN_FINAL_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // The link survives signing in.
      await page.getByText('200+ entries', { exact: true }).waitFor();
      const list = page.locator('.vlist');
      while (!(await page.getByText(`${COUNT} entries`, { exact: true }).isVisible())) {
        await list.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
        await page.waitForTimeout(100);
      }
      await list.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
      await page.locator('.row', { hasText: 'bulk 0000' }).waitFor();
      const drawn = await page.locator('.vlist .row').count();
      assert.ok(drawn < 80, `${drawn} rows in the page for ${COUNT} loaded`);

      await list.evaluate((el) => el.scrollTo({ top: 6000 }));
      await page.getByLabel('Follow live').check();
      await page.locator('.live-state', { hasText: /^Live$/ }).waitFor();
      const before = await page.locator('.vlist .row .event').first().textContent();
      await ingestAll(svc.url, key, [1, 2, 3].map((i) => ({ level: 'warning', event: `bulk new ${i}`, timestamp: new Date().toISOString() })));
      await page.getByRole('button', { name: '3 new ↑' }).waitFor();
      assert.equal(await page.locator('.vlist .row .event').first().textContent(), before);
      await page.getByRole('button', { name: '3 new ↑' }).click();
      await page.locator('.row', { hasText: 'bulk new 3' }).waitFor();
      assert.deepEqual((await page.locator('.vlist .row .event').allTextContents()).slice(0, 3), ['bulk new 3', 'bulk new 2', 'bulk new 1']);
      await page.getByLabel('Follow live').uncheck();

      // Past the access token's 15 minutes: the next call refreshes (rotating the refresh token) and goes on.
      const firstRefresh = await page.evaluate('sessionStorage.getItem("logkeep.refresh_token")');
      clockOffset += 16 * 60_000;
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('200+ entries', { exact: true }).waitFor();
      const secondRefresh = (await page.evaluate('sessionStorage.getItem("logkeep.refresh_token")')) as string;
      assert.ok(secondRefresh && secondRefresh !== firstRefresh, 'the refresh token was rotated');

      // When the refresh is refused (revoked elsewhere), the console goes back to sign-in and says why.
      const revoked = await fetch(`${svc.url}/v1/auth/token`, { method: 'DELETE', body: new URLSearchParams({ refresh_token: secondRefresh }) });
      assert.equal(revoked.status, 200);
      clockOffset += 16 * 60_000;
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('Your session has ended. Please sign in again.').waitFor();
      await page.getByRole('heading', { name: 'Sign in to logkeep' }).waitFor();
      // The failed calls' 401s are the browser's own console noise, not the page's errors.
      assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), []);
    } finally {
      await close();
    }
  });
});
