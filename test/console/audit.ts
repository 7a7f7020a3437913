/**
 * The audit log page in a real Chromium, on both backends: an admin's
 * actions (a project, a key created and revoked, a user blocked, a failed
 * login) read in words, newest first; filters by action and by actor narrow
 * the list and live in the URL; older pages come through `next_cursor`;
 * a row's metadata opens as a tree; names link to their pages; the
 * retention policy is said in words; a group owner sees no audit log.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { BackendName } from '../support/backends.js';
import { api } from '../support/service.js';
import { ADMIN_FINAL_PASSWORD, auditRows, createActor, createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { assertAccessible, screenshot } from '../support/browser.js';
import { consoleSuite, inPage, signInAs, type ConsoleEnv } from '../support/console.js';

/** One backend per test file (audit-file, audit-server), as the other console tests do. */
export function auditSuite(backend: BackendName): void {
  consoleSuite('console audit log', backend, auditPage, { settings: { auditRetentionDays: 365, authEventRetentionDays: 30 } });
}

const sentences = (page: Page) => page.locator('table.audit tbody td.what').allTextContents();
const hashParams = (page: Page) => new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '');
/** A name no browser may ever turn into markup. */
const HOSTILE = '<img src=x onerror=window.__xss=1>';

function auditPage(env: ConsoleEnv): void {
  it('shows what admins did in words, newest first, filtered, paged, with details and links; owners see none of it', () =>
    inPage(env.browser, async (page) => {
      // The actions, through the API.
      const admin = await signInAdmin(env.svc.url);
      await createActor(env.svc.url, admin.token, HOSTILE);
      const groupId = await createGroup(env.svc.url, admin.token, 'shop');
      const alice = await createActor(env.svc.url, admin.token, 'alice');
      const bob = await createActor(env.svc.url, admin.token, 'bob');
      const carol = await createActor(env.svc.url, admin.token, 'carol', { grants: [{ role: 'owner', scope_type: 'group', scope_id: groupId }] });
      const projectId = await createProject(env.svc.url, admin.token, groupId, 'payments');
      const key = await createKey(env.svc.url, admin.token, projectId, 'ci runner');
      assert.equal((await api(env.svc.url, 'DELETE', `/v1/projects/${projectId}/secret-keys/${key.id}`, { token: admin.token })).status, 204);
      assert.equal((await api(env.svc.url, 'POST', `/v1/users/${alice.id}/block`, { token: admin.token })).status, 200);
      const failed = await api(env.svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'bob', password: 'not-bobs-password' } });
      assert.equal(failed.status, 400);

      await page.goto(`${env.svc.url}/console/`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();

      // Newest first, in words, names resolved.
      await page.locator('table.audit tbody tr').first().waitFor();
      await page.getByRole('link', { name: 'payments' }).first().waitFor();
      const newest = (await sentences(page)).slice(0, 6);
      assert.deepEqual(newest, [
        'admin signed in',
        'login failed for bob (wrong password)',
        'admin blocked user alice',
        `admin revoked key #${key.id} "ci runner" of project payments`,
        `admin created key #${key.id} "ci runner" in project payments`,
        'admin created project payments in group shop (entries kept 30 days)',
      ]);
      await page
        .getByText('Administration rows are deleted after 365 days; sign-in rows (signed in, failed, signed out, throttled) are deleted after 30 days.')
        .waitFor();
      // A hostile username is text.
      await page.getByText(`admin created user ${HOSTILE}`).waitFor();
      assert.equal(await page.locator('table.audit img').count(), 0);
      assert.equal(await page.evaluate('window.__xss'), undefined);

      // The metadata opens as a tree.
      const failedRow = page.locator('table.audit tbody tr', { hasText: 'login failed for bob' });
      await failedRow.getByText('Details').click();
      await failedRow.locator('.tree .key', { hasText: 'reason' }).waitFor();
      await failedRow.locator('.tree .val', { hasText: '"invalid_password"' }).waitFor();
      await assertAccessible(page, 'audit log');
      await page.evaluate('window.scrollTo(0, 0)');
      await screenshot(page, 'audit', env.shots);

      // Filter by action: one row, and the URL holds it (a reload keeps it).
      await page.getByLabel('Action').selectOption('user.blocked');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('1 entry', { exact: true }).waitFor();
      assert.deepEqual(await sentences(page), ['admin blocked user alice']);
      assert.equal(hashParams(page).get('action'), 'user.blocked');
      await page.reload();
      await page.getByText('1 entry', { exact: true }).waitFor();
      assert.deepEqual(await sentences(page), ['admin blocked user alice']);
      assert.equal(await page.getByLabel('Action').inputValue(), 'user.blocked');

      // Filter by actor (typed as a username): only bob's rows, his id in the URL.
      await page.getByLabel('Action').selectOption('');
      await page.getByLabel('Actor (username)').fill('bob');
      const expected = (await auditRows(env.svc.url, admin.token, { actor_user_id: bob.id })).length;
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText(`${expected} entries`, { exact: true }).waitFor();
      assert.equal(hashParams(page).get('actor_user_id'), String(bob.id));
      assert.equal(hashParams(page).get('action'), null);
      const bobs = await sentences(page);
      assert.equal(bobs.length, expected);
      assert.ok(bobs.length >= 3, bobs.join('\n'));
      for (const s of bobs) assert.match(s, /\bbob\b/);
      assert.deepEqual(bobs.slice(0, 1), ['login failed for bob (wrong password)']);
      await page.getByLabel('Actor (username)').fill('nobody-by-that-name');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No user is named nobody-by-that-name.').waitFor();

      // By target, and by time (typed in local time, kept in UTC in the URL).
      await page.getByLabel('Actor (username)').fill('');
      await page.getByLabel('Target', { exact: true }).selectOption('project');
      await page.getByLabel('Target id').fill(String(projectId));
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('1 entry', { exact: true }).waitFor();
      assert.deepEqual(await sentences(page), ['admin created project payments in group shop (entries kept 30 days)']);
      assert.equal(hashParams(page).get('target_type'), 'project');
      assert.equal(hashParams(page).get('target_id'), String(projectId));
      await page.getByLabel('From').fill('2099-01-01T00:00:00');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No audit entry matches.').waitFor();
      // The env.browser is in Paris: midnight there is 23:00 UTC the day before.
      assert.equal(hashParams(page).get('from'), '2098-12-31T23:00:00.000Z');

      // Links: a user to the users page filtered to them, a project to its page, a group to its page.
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByText('admin blocked user alice').waitFor();
      await page.locator('table.audit tbody tr', { hasText: 'admin blocked user alice' }).getByRole('link', { name: 'alice' }).click();
      await page.getByRole('heading', { name: 'Users' }).waitFor();
      assert.equal(hashParams(page).get('username'), 'alice');
      await page.getByRole('row', { name: /^alice / }).waitFor();
      assert.equal(await page.getByLabel('Username contains').inputValue(), 'alice');
      assert.equal(await page.locator('table.users tbody tr').count(), 1);
      await page.goBack();
      const created = page.locator('table.audit tbody tr', { hasText: 'admin created project payments' });
      await created.getByRole('link', { name: 'shop' }).waitFor();
      assert.equal(await created.getByRole('link', { name: 'shop' }).getAttribute('href'), `#/group?id=${groupId}`);
      await created.getByRole('link', { name: 'payments' }).click();
      await page.getByRole('heading', { name: 'Project payments' }).waitFor();
      assert.equal(hashParams(page).get('id'), String(projectId));

      // Paging: 60 more rows of one action, 50 a page, older ones on demand, none twice.
      for (let i = 0; i < 60; i += 15) {
        await Promise.all(
          Array.from({ length: 15 }, (_, j) =>
            api(env.svc.url, 'POST', '/v1/users', {
              token: admin.token,
              json: { username: `bulk-${String(i + j).padStart(2, '0')}`, password: 'temporary-bulk-1' },
            }),
          ),
        );
      }
      const all = await auditRows(env.svc.url, admin.token, { action: 'user.created' });
      assert.ok(all.length > 60);
      await page.goto(`${env.svc.url}/console/#/audit?action=user.created`);
      await page.locator('table.audit tbody tr').nth(49).waitFor();
      assert.equal(await page.locator('table.audit tbody tr').count(), 50);
      await page.getByRole('button', { name: 'Load older entries' }).click();
      await page
        .locator('table.audit tbody tr')
        .nth(all.length - 1)
        .waitFor();
      await page.getByRole('button', { name: 'Load older entries' }).waitFor({ state: 'detached' });
      // The first administrator was created by the service itself at its first start.
      assert.deepEqual(
        await sentences(page),
        all.map((r) => `${r.actor_user_id === null ? 'the service' : 'admin'} created user ${r.metadata.username}`),
      );

      // A group owner: no Audit link, and the page is not there for them.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInAs(page, 'carol', carol.password);
      const nav = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
      assert.ok(!nav.includes('Audit log'), nav.join(', '));
      await page.goto(`${env.svc.url}/console/#/audit`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      assert.equal(await page.locator('table.audit').count(), 0);
      await assertAccessible(page, 'audit log refused to an owner');
    }));
}
