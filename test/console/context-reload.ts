/**
 * The context view and sessions, in a real Chromium on both backends
 * (explore-edges-file, explore-edges-server):
 * - the context view lists entries in one order, time order, on both sides:
 *   an entry stored before the chosen one but dated after it is among those
 *   after it, one stored after but dated before among those before, and
 *   "Show 20 earlier" reaches the rest;
 * - a reload while a refresh is in flight keeps the tab signed in, and the
 *   person's other tab too.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Route } from 'playwright-core';
import { ADMIN_FINAL_PASSWORD, createActor, signInAdmin } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertAccessible, newPage, screenshot } from '../support/browser.js';
import { inPage, signInAs, type ConsoleEnv } from '../support/console.js';
import { projectWithKey } from './edges-support.js';

const REFRESH_KEY = 'logkeep.refresh_token';

/** Run by explore-edges-file and explore-edges-server, beside rough-edges.ts on the same service and browser. */
export function contextAndReload(env: ConsoleEnv): void {
  it('shows the context in time order on both sides, reaching an entry stored before the chosen one but dated after it', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const { project, key } = await projectWithKey(env.svc.url, admin.token, 'checkout');
      const t = Date.now() - 3_600_000;
      const at = (s: number) => new Date(t + s * 1000).toISOString();
      // In storage order: 25 old entries, then a clock ahead, the chosen one, a late batch, one more.
      await ingestAll(
        env.svc.url,
        key,
        Array.from({ length: 25 }, (_, i) => ({ level: 'debug', event: `old ${String(i).padStart(2, '0')}`, timestamp: at(i * 60) })),
      );
      await ingestAll(env.svc.url, key, [{ level: 'info', event: 'early', timestamp: at(3000) }]);
      await ingestAll(env.svc.url, key, [{ level: 'warning', event: 'stored before, dated after', timestamp: at(3300) }]);
      await ingestAll(env.svc.url, key, [{ level: 'error', event: 'the chosen one', timestamp: at(3100) }]);
      await ingestAll(env.svc.url, key, [{ level: 'info', event: 'stored after, dated before', timestamp: at(3050) }]);
      await ingestAll(env.svc.url, key, [{ level: 'info', event: 'next', timestamp: at(3200) }]);

      await page.goto(`${env.svc.url}/console/#/explore?project_id=${project}`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
      await page.getByText('30 entries', { exact: true }).waitFor();
      await page.locator('.row', { hasText: 'the chosen one' }).click();
      await page.getByRole('link', { name: 'Show context' }).click();
      await page.getByRole('heading', { name: /^Context of entry \d+$/ }).waitFor();
      await page.locator('.tl-entry', { hasText: 'next' }).waitFor();
      await page.locator('.tl-entry', { hasText: 'old 07' }).waitFor();
      const events = () => page.locator('.tl-entry .event').allTextContents();
      const olds = (from: number) => Array.from({ length: 25 - from }, (_, i) => `old ${String(from + i).padStart(2, '0')}`);
      // 20 before, oldest at the top, the chosen one, then what follows in time: whatever the storage order.
      assert.deepEqual(await events(), [...olds(7), 'early', 'stored after, dated before', 'the chosen one', 'next', 'stored before, dated after']);
      assert.equal(await page.locator('.tl-entry.origin .event').textContent(), 'the chosen one');
      // The page says which order it is.
      await page.getByText('In time order, oldest at the top').waitFor();
      await page.getByText('Nothing later yet.').waitFor();
      await assertAccessible(page, 'context');
      // Tall enough for the whole context, the entries after the chosen one included.
      await page.setViewportSize({ width: 1280, height: 1180 });
      await screenshot(page, 'context', env.shots);
      await page.setViewportSize({ width: 1280, height: 800 });

      await page.getByRole('button', { name: 'Show 20 earlier' }).click();
      await page.locator('.tl-entry', { hasText: 'old 00' }).waitFor();
      assert.deepEqual(await events(), [...olds(0), 'early', 'stored after, dated before', 'the chosen one', 'next', 'stored before, dated after']);
      await page.getByText('Nothing earlier.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Show 20 earlier' }).isDisabled(), true);

      // Later arrivals are reached by "Show 20 later", still in time order.
      await ingestAll(env.svc.url, key, [
        { level: 'info', event: 'much later', timestamp: at(3400) },
        { level: 'info', event: 'later', timestamp: at(3350) },
      ]);
      await page.getByRole('button', { name: 'Show 20 later' }).click();
      await page.locator('.tl-entry', { hasText: 'much later' }).waitFor();
      assert.deepEqual((await events()).slice(-4), ['next', 'stored before, dated after', 'later', 'much later']);
    }));

  it("keeps the tab signed in when it reloads during a refresh, and the person's other tab too", async () => {
    const admin = await signInAdmin(env.svc.url);
    const person = await createActor(env.svc.url, admin.token, 'reloader');
    const tabA = await newPage(env.browser);
    const tabB = await newPage(env.browser);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      for (const tab of [tabA, tabB]) {
        await tab.page.goto(`${env.svc.url}/console/`);
        await signInAs(tab.page, person.username, person.password);
      }
      // The first refresh reaches the service, which rotates the token, but its answer never reaches the tab.
      let rotatedTo: string | null = null;
      let rotated: () => void = () => {};
      const rotation = new Promise<void>((resolve) => (rotated = resolve));
      const holdFirst = async (route: Route) => {
        if (rotatedTo !== null || route.request().method() !== 'POST' || !String(route.request().postData()).includes('grant_type=refresh_token')) {
          await route.continue();
          return;
        }
        const answer = await route.fetch();
        rotatedTo = ((await answer.json()) as { refresh_token: string }).refresh_token;
        rotated();
        await held;
        await route.abort().catch(() => undefined);
      };
      await tabA.page.route('**/v1/auth/token', holdFirst);
      const before = await tabA.page.evaluate(`sessionStorage.getItem(${JSON.stringify(REFRESH_KEY)})`);
      await tabA.page.reload();
      await rotation;
      assert.equal(await tabA.page.evaluate(`sessionStorage.getItem(${JSON.stringify(REFRESH_KEY)})`), before, 'the tab still holds the rotated token');

      // The person reloads while that refresh hangs: the tab presents the rotated token again.
      await tabA.page.reload();
      await tabA.page.getByRole('button', { name: 'Sign out' }).waitFor();
      assert.equal(await tabA.page.evaluate(`sessionStorage.getItem(${JSON.stringify(REFRESH_KEY)})`), rotatedTo, 'the same successor as the lost answer');
      await tabA.page.getByText('You see no project yet').waitFor();

      // The other tab's session lives on: its own refresh still works.
      await tabB.page.reload();
      await tabB.page.getByRole('button', { name: 'Sign out' }).waitFor();
      await tabB.page.getByText('You see no project yet').waitFor();
      assert.equal(await tabB.page.getByText('Your session has ended').count(), 0);
      for (const tab of [tabA, tabB])
        assert.deepEqual(
          tab.errors.filter((e) => !/Failed to load resource|net::ERR/.test(e)),
          [],
        );
    } finally {
      release();
      await tabA.close();
      await tabB.close();
    }
  });
}
