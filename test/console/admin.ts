/**
 * The administration pages in a real Chromium, on both backends: an admin
 * creates a project and a key in the console, sees the secret once (never
 * after a reload), ships an entry with it, revokes it after a confirmation
 * naming it, blocks the project; manages users (create with a temporary
 * password shown once, edit, block, unblock, delete, filter and page); a
 * plain user sees no administration.
 * axe-core checks each page on the way.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { BackendName } from '../support/backends.js';
import { api } from '../support/service.js';
import { ADMIN_FINAL_PASSWORD, createActor, createGroup, signInAdmin } from '../support/actors.js';
import { assertAccessible, screenshot } from '../support/browser.js';
import { consoleSuite, inPage, signInAs, type ConsoleEnv } from '../support/console.js';

/** One backend per test file (admin-file, admin-server), as the journey does. */
export function adminSuite(backend: BackendName): void {
  consoleSuite('console administration', backend, administration);
}

const ingest = (url: string, key: string) =>
  api(url, 'POST', '/v1/logs', { token: key, json: [{ level: 'info', event: 'from the console key', timestamp: new Date().toISOString() }] });

function administration(env: ConsoleEnv): void {
  it('lists, creates, edits, blocks, unblocks and deletes users, each destructive step confirmed by name', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      await page.goto(`${env.svc.url}/console/`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('heading', { name: 'Users' }).waitFor();
      const adminRow = page.getByRole('row', { name: /^admin primary admin/ });
      await adminRow.waitFor();
      // Oneself: no block or delete here.
      assert.equal(await adminRow.getByRole('button', { name: /Block|Delete/ }).count(), 0);
      await assertAccessible(page, 'users');

      // Created with a temporary password shown once, which signs in and must be changed.
      await page.getByLabel('Username', { exact: true }).fill('dave');
      await page.getByLabel('Display name', { exact: true }).fill('Dave <b>Bold</b>');
      await page.getByRole('button', { name: 'Create user' }).click();
      const first = (await page.locator('code.secret').textContent())!;
      assert.equal(first.length, 16);
      const daveRow = page.getByRole('row', { name: /^dave / });
      await daveRow.getByText('Dave <b>Bold</b>').waitFor();
      await daveRow.getByText('active, must change password').waitFor();
      const signedIn = await api(env.svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'dave', password: first } });
      assert.equal(signedIn.status, 200);
      await page.getByRole('button', { name: 'I have stored it' }).click();

      // Edited: display name and email; then a new temporary password replaces the first.
      await daveRow.getByRole('button', { name: 'Edit dave' }).click();
      const editor = page.getByRole('region', { name: 'Edit dave' });
      await editor.getByLabel('Display name').fill('Dave Doe');
      await editor.getByLabel('Email').fill('dave@example.test');
      await editor.getByRole('button', { name: 'Save' }).click();
      await daveRow.getByText('dave@example.test').waitFor();
      await daveRow.getByText('Dave Doe').waitFor();
      await daveRow.getByRole('button', { name: 'Edit dave' }).click();
      await page.getByRole('button', { name: 'Set a new temporary password' }).click();
      const second = (await page.getByRole('region', { name: 'New temporary password of dave' }).locator('code.secret').textContent())!;
      assert.notEqual(second, first);
      assert.equal((await api(env.svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'dave', password: first } })).status, 400);
      assert.equal((await api(env.svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'dave', password: second } })).status, 200);
      await assertAccessible(page, 'user editor');
      await screenshot(page, 'users', env.shots);
      await page.getByRole('button', { name: 'Close' }).click();

      // Block, unblock, delete: each asks first, naming the user.
      await daveRow.getByRole('button', { name: 'Block' }).click();
      await page.getByText('Block user dave? They are signed out at once.').waitFor();
      await page.getByRole('button', { name: 'Yes, block' }).click();
      await daveRow.getByText('blocked', { exact: true }).waitFor();
      await daveRow.getByRole('button', { name: 'Unblock' }).click();
      await page.getByText('Unblock user dave?').waitFor();
      await page.getByRole('button', { name: 'Yes, unblock' }).click();
      await daveRow.getByText('active, must change password').waitFor();
      await daveRow.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('Delete user dave for good?').waitFor();
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await daveRow.getByText('deleted', { exact: true }).waitFor();
      assert.ok((await api(env.svc.url, 'GET', '/v1/users?username=dave', { token: admin.token })).body.items[0].deleted_at);

      // The filter, then paging through 52 matches 50 at a time.
      for (let i = 0; i < 52; i += 13) {
        await Promise.all(
          Array.from({ length: 13 }, (_, j) =>
            api(env.svc.url, 'POST', '/v1/users', {
              token: admin.token,
              json: { username: `bulk-${String(i + j).padStart(2, '0')}`, password: 'temporary-bulk-1' },
            }),
          ),
        );
      }
      await page.getByLabel('Username contains').fill('bulk-');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByRole('row', { name: /^dave / }).waitFor({ state: 'detached' });
      assert.equal(await page.locator('table.users tbody tr').count(), 50);
      await page.getByRole('button', { name: 'Next page' }).click();
      const rowsOf = page.locator('table.users tbody tr');
      await rowsOf.nth(2).waitFor({ state: 'detached' });
      assert.equal(await rowsOf.count(), 2);
      assert.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled());
      await page.getByRole('button', { name: 'Previous page' }).click();
      await rowsOf.nth(49).waitFor();
      assert.equal(await rowsOf.count(), 50);
    }));
  it('creates a project and a key, shows the secret once, revokes it, blocks the project; a plain user sees none of it', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const groupId = await createGroup(env.svc.url, admin.token, 'shop');
      await page.goto(`${env.svc.url}/console/`);
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
      await page.getByLabel('Entry quota').fill('lots');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Retention and quotas are whole numbers', { exact: false }).waitFor();
      await page.getByLabel('Entry quota').fill('1000');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      await page.getByText('0 of 1,000').waitFor();
      const stored = await api(env.svc.url, 'GET', `/v1/projects/${projectId}`, { token: admin.token });
      assert.equal(stored.body.max_entries, 1000);
      assert.equal(stored.body.group_id, groupId);

      // A key: the secret and ready-to-paste examples, this once.
      await page.getByLabel("New key's label").fill('ci runner');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = (await page.locator('code.secret').textContent())!;
      assert.match(secret, /^slk_[A-Za-z0-9_-]+$/);
      const snippets = await page.locator('pre.snippet').allTextContents();
      assert.equal(snippets.length, 2);
      for (const s of snippets) assert.ok(s.includes(secret) && s.includes(env.svc.url), s);
      await assertAccessible(page, 'project with a new key');
      assert.equal((await ingest(env.svc.url, secret)).status, 202);
      await page.evaluate('window.scrollTo(0, 0)');
      await screenshot(page, 'project', env.shots);

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
      assert.equal((await ingest(env.svc.url, secret)).status, 401);

      // Blocking asks first, naming the project.
      await page.getByRole('button', { name: 'Block project' }).click();
      await page.getByText('Block project checkout?', { exact: false }).waitFor();
      await page.getByRole('button', { name: 'Yes, block' }).click();
      await page.getByText(/^Blocked:/).waitFor();
      assert.equal((await api(env.svc.url, 'GET', `/v1/projects/${projectId}`, { token: admin.token })).body.is_blocked, true);
      await page.getByRole('button', { name: 'Unblock project' }).click();
      await page.getByRole('button', { name: 'Yes, unblock' }).click();
      await page.getByRole('button', { name: 'Block project' }).waitFor();

      // A plain user (reads the group) sees no administration, even by URL; saved searches and alerts are anyone's who may read.
      const carol = await createActor(env.svc.url, admin.token, 'carol', { grants: [{ role: 'user', scope_type: 'group', scope_id: groupId }] });
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInAs(page, 'carol', carol.password);
      assert.deepEqual(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents(), ['Explore', 'Alerts', 'Account']);
      await page.goto(`${env.svc.url}/console/#/project?id=${projectId}`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      await page.goto(`${env.svc.url}/console/#/projects`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
    }));
}
