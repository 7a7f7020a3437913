/**
 * The administration pages in a real Chromium, on both backends: an admin
 * creates a project and a key in the console, sees the secret once (never
 * after a reload), ships an entry with it, revokes it after a confirmation
 * naming it, blocks the project; a plain user sees no administration.
 * axe-core checks each page on the way.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { BackendName } from '../support/backends.js';
import { postgresSkipReason } from '../support/postgres.js';
import { api, startService, type RunningService } from '../support/service.js';
import { ADMIN_FINAL_PASSWORD, createActor, createGroup, signInAdmin } from '../support/actors.js';
import { assertAccessible, launchBrowser, newPage, screenshot } from '../support/browser.js';

/** One backend per test file (admin-file, admin-server), as the journey does. */
export function adminSuite(backend: BackendName): void {
  describe(`console administration [${backend}]`, async () => {
    if (backend === 'server') {
      const why = await postgresSkipReason();
      if (why) {
        describe(`skipped: ${why}`, { skip: why }, () => {});
        return;
      }
    }
    administration(backend);
  });
}

async function signInAs(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

const ingest = (url: string, key: string) =>
  api(url, 'POST', '/v1/logs', { token: key, json: [{ level: 'info', event: 'from the console key', timestamp: new Date().toISOString() }] });

function administration(backend: BackendName): void {
  let svc: RunningService;
  let browser: Browser;
  const shots = backend === 'file';
  before(async () => {
    svc = await startService(backend);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc.stop({ dropDatabase: true });
  });

  it('creates a project and a key, shows the secret once, revokes it, blocks the project; a plain user sees none of it', async () => {
    const { page, errors, close } = await newPage(browser);
    try {
      const admin = await signInAdmin(svc.url);
      const groupId = await createGroup(svc.url, admin.token, 'shop');
      await page.goto(`${svc.url}/console/`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);

      // A project, created in the console.
      await page.getByRole('link', { name: 'Projects' }).click();
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      await page.getByText('You see no project yet.').waitFor();
      await assertAccessible(page, 'projects');
      await page.getByLabel('Project name').fill('checkout');
      await page.getByLabel('Retention (days)').fill('14');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: 'Project checkout' }).waitFor();
      const projectId = Number(new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('id'));
      assert.ok(projectId > 0);

      // Quotas are edited; usage shows against them.
      assert.equal(await page.getByLabel('Retention (days)').inputValue(), '14');
      await page.getByLabel('Entry quota').fill('1000');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      await page.getByText('0 of 1,000').waitFor();
      const stored = await api(svc.url, 'GET', `/v1/projects/${projectId}`, { token: admin.token });
      assert.equal(stored.body.max_entries, 1000);
      assert.equal(stored.body.group_id, groupId);

      // A key: the secret and ready-to-paste examples, this once.
      await page.getByLabel("New key's label").fill('ci runner');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = (await page.locator('code.secret').textContent())!;
      assert.match(secret, /^slk_[A-Za-z0-9_-]+$/);
      const snippets = await page.locator('pre.snippet').allTextContents();
      assert.equal(snippets.length, 2);
      for (const s of snippets) assert.ok(s.includes(secret) && s.includes(svc.url), s);
      await assertAccessible(page, 'project with a new key');
      assert.equal((await ingest(svc.url, secret)).status, 202);
      await screenshot(page, 'project', shots);

      // Never again: not after a reload, not in the listing.
      await page.reload();
      await page.getByRole('cell', { name: /^ci runner \(key \d+\)$/ }).waitFor();
      assert.ok(!(await page.locator('body').innerText()).includes(secret));
      await page.getByText('1 of 1,000').waitFor();

      // Revoking asks first, naming the key; then the key is refused.
      await page.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText(/^Revoke ci runner \(key \d+\)\?/).waitFor();
      await assertAccessible(page, 'revoke confirmation');
      await page.getByRole('button', { name: 'Yes, revoke' }).click();
      await page.getByRole('button', { name: 'Revoke' }).waitFor({ state: 'detached' });
      assert.equal((await ingest(svc.url, secret)).status, 401);

      // Blocking asks first, naming the project.
      await page.getByRole('button', { name: 'Block project' }).click();
      await page.getByText('Block project checkout?', { exact: false }).waitFor();
      await page.getByRole('button', { name: 'Yes, block' }).click();
      await page.getByText(/^Blocked:/).waitFor();
      assert.equal((await api(svc.url, 'GET', `/v1/projects/${projectId}`, { token: admin.token })).body.is_blocked, true);
      await page.getByRole('button', { name: 'Unblock project' }).click();
      await page.getByRole('button', { name: 'Yes, unblock' }).click();
      await page.getByRole('button', { name: 'Block project' }).waitFor();

      // A plain user (reads the group) sees no administration, even by URL.
      const carol = await createActor(svc.url, admin.token, 'carol', { grants: [{ role: 'user', scope_type: 'group', scope_id: groupId }] });
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInAs(page, 'carol', carol.password);
      assert.deepEqual(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents(), ['Explore', 'Account']);
      await page.goto(`${svc.url}/console/#/project?id=${projectId}`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      await page.goto(`${svc.url}/console/#/projects`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();

      assert.deepEqual(errors.filter((e) => !/Failed to load resource|net::ERR/.test(e)), []);
    } catch (err) {
      const seen = await page.locator('body').innerText().catch(() => '(no page)');
      throw new Error(`${(err as Error).message}\n--- page (${page.url()}) ---\n${seen}\n--- errors ---\n${errors.join('\n')}`, { cause: err });
    } finally {
      await close();
    }
  });
}
