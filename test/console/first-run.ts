/**
 * The first-run guide in a real Chromium, on both backends, from an empty
 * database: the first administrator signs in with the temporary password,
 * Explore offers the guide, which leads through a group, a project and a
 * key (shown once, with its curl example); an entry sent with that key (as
 * the curl example would) appears live; then Explore no longer offers it.
 * A refused step's message is cleared when the step is retried.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Route } from 'playwright-core';
import type { BackendName } from '../support/backends.js';
import { ADMIN_PASSWORD, api } from '../support/service.js';
import { assertAccessible, screenshot } from '../support/browser.js';
import { consoleSuite, inPage, type ConsoleEnv } from '../support/console.js';

/** One backend per test file (first-run-file, first-run-server), as the other console tests do. */
export function firstRunSuite(backend: BackendName): void {
  consoleSuite('console first-run guide', backend, firstRun);
}

const NEW_PASSWORD = 'first-run-password-1';

function firstRun(env: ConsoleEnv): void {
  it('leads a new administrator from nothing to a first entry arriving live, then steps aside', () =>
    inPage(env.browser, async (page) => {
      // The first sign-in, with the temporary password, then the forced change.
      await page.goto(`${env.svc.url}/console/`);
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Current password').fill(ADMIN_PASSWORD);
      await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel('New password, again').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();

      // Explore offers the guide while there is no group.
      const offer = page.getByRole('region', { name: 'Getting started' });
      await offer.getByText('There is no group yet', { exact: false }).waitFor();
      // The administrator is not told to ask an administrator.
      await page.getByText('You see no project yet.', { exact: true }).waitFor();
      await assertAccessible(page, 'explore with the guide offered');
      await offer.getByRole('link', { name: 'Set up a first project' }).click();
      await page.getByRole('heading', { name: 'Set up a first project' }).waitFor();
      const current = () => page.locator('.steps li[aria-current="step"]').textContent();

      // 1. A group.
      assert.equal(await current(), 'Create a group');
      await assertAccessible(page, 'first run: group');
      await page.getByLabel('Group name').fill('acme');
      await page.getByRole('button', { name: 'Create group' }).click();

      // 2. A project in it.
      await page.getByRole('region', { name: '2. Create a project' }).getByText('In group acme', { exact: false }).waitFor();
      assert.equal(await current(), 'Create a project in it');
      const groups = (await api(env.svc.url, 'GET', '/v1/groups', { token: await adminToken(env.svc.url) })).body.items;
      assert.deepEqual(
        groups.map((g: { name: string }) => g.name),
        ['acme'],
      );
      await assertAccessible(page, 'first run: project');
      // A refused step shows why; retrying clears that refusal at once, while the new request is under way.
      const projectCard = page.getByRole('region', { name: '2. Create a project' });
      await page.getByLabel('Project name').fill('web shop');
      await page.getByLabel('Retention (days)').fill('0');
      await page.getByRole('button', { name: 'Create project' }).click();
      await projectCard.getByRole('alert').waitFor();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const hold = async (route: Route) => {
        if (route.request().method() === 'POST') await held;
        await route.continue();
      };
      await page.route('**/v1/groups/*/projects', hold);
      await page.getByLabel('Retention (days)').fill('30');
      await page.getByRole('button', { name: 'Create project' }).click();
      await projectCard.getByRole('alert').waitFor({ state: 'detached' });
      release();

      // 3. A key: shown once, with the curl example; the page already waits for an entry.
      await page.getByText('Project web shop is ready.', { exact: false }).waitFor();
      await page.unroute('**/v1/groups/*/projects', hold);
      assert.equal(await current(), 'Create a secret key');
      await page.getByText('Waiting for the first entry', { exact: false }).waitFor();
      await assertAccessible(page, 'first run: key');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = (await page.locator('code.secret').textContent())!;
      assert.match(secret, /^slk_/);
      const curl = (await page.locator('pre.snippet').first().textContent())!;
      assert.ok(curl.startsWith(`curl -s ${env.svc.url}/v1/logs -H 'Authorization: Bearer ${secret}'`), curl);
      assert.equal(await current(), 'Send your first entry');
      await assertAccessible(page, 'first run: key shown once');
      // A reload keeps the place: the key exists (its secret is not shown again), the page waits for the entry.
      await page.reload();
      await page.getByText('Waiting for the first entry', { exact: false }).waitFor();
      // The key step is marked done once the project's keys have loaded (a loaded machine may take a moment).
      await page.locator('.steps li[aria-current="step"]', { hasText: 'Send your first entry' }).waitFor({ timeout: 10_000 });
      assert.equal(await current(), 'Send your first entry');
      assert.ok(!(await page.content()).includes(secret));

      // 4. The entry, sent as the curl example sends it (its body is the example's), arrives live.
      const body = /-d '(.*)'$/s.exec(curl)![1]!;
      const sent = await api(env.svc.url, 'POST', '/v1/logs', { token: secret, json: JSON.parse(body) });
      assert.equal(sent.status, 202);
      const arrived = page.getByRole('region', { name: 'Your first entry' });
      await arrived.getByText('Your first entry has arrived.').waitFor();
      await arrived.locator('.event', { hasText: 'hello from curl' }).waitFor();
      assert.equal(await page.locator('.steps li.done').count(), 4);
      await assertAccessible(page, 'first run: first entry');
      await screenshot(page, 'first-run', env.shots);

      // On to Explore, where the entry is, and the guide is no longer offered.
      await arrived.getByRole('link', { name: "Explore this project's logs" }).click();
      await page.getByText('1 entry', { exact: true }).waitFor();
      assert.deepEqual(await page.locator('.vlist .row .event').allTextContents(), ['hello from curl']);
      await page.reload();
      await page.getByText('1 entry', { exact: true }).waitFor();
      assert.equal(await page.getByRole('region', { name: 'Getting started' }).count(), 0);
      // The key is nowhere in the page any more.
      assert.ok(!(await page.content()).includes(secret));
    }));
}

async function adminToken(url: string): Promise<string> {
  const res = await api(url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'admin', password: NEW_PASSWORD } });
  assert.equal(res.status, 200);
  return res.body.access_token;
}
