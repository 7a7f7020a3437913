/**
 * Saved searches and alerts in a real Chromium, on both backends: save the
 * query of Explore, create a rule on it sending to a real webhook, see it
 * fire after an entry is sent, and read the rule's state and the delivery
 * in words; the list of saved searches opens each in Explore; axe-core
 * finds no serious or critical violation.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { BackendName } from '../support/backends.js';
import { ADMIN_FINAL_PASSWORD, createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { assertAccessible, screenshot } from '../support/browser.js';
import { consoleSuite, inPage, signInAs, type ConsoleEnv } from '../support/console.js';
import { ingestAll } from '../support/logs.js';
import { startWebhookReceiver } from '../support/receivers.js';

export function alertsSuite(backend: BackendName): void {
  consoleSuite('console saved searches and alerts', backend, alertsPages, {
    settings: { alertAllowPrivateTargets: true, publicUrl: 'https://logs.example.com' },
  });
}

function alertsPages(env: ConsoleEnv): void {
  it('saves a search from Explore, creates a rule on it, and shows it firing and delivered', () =>
    inPage(env.browser, async (page) => {
      const hook = await startWebhookReceiver();
      try {
        const admin = await signInAdmin(env.svc.url);
        const groupId = await createGroup(env.svc.url, admin.token, 'shop');
        const projectId = await createProject(env.svc.url, admin.token, groupId, 'payments');
        const key = (await createKey(env.svc.url, admin.token, projectId)).secret;

        await page.goto(`${env.svc.url}/console/#/explore?project_id=${projectId}&level=error&q=declined&range=1h`);
        await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
        await page.getByRole('button', { name: 'Save search' }).click();
        await page.getByLabel('Name').fill('Declined payments');
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        await page.getByRole('heading', { name: 'Declined payments' }).waitFor();
        await page.getByText('Entries of project payments matching').waitFor();
        assert.equal(await page.locator('main code').first().textContent(), 'level=error&q=declined');
        await page.getByText('No alert rule on this search.').waitFor();

        // A rule sending to a webhook; its secret is shown once.
        await page.getByLabel('Rule name').fill('Payments failing');
        await page.getByLabel('Quiet period (minutes)').fill('10');
        await page.getByLabel('Send to').selectOption('webhook');
        await page.getByLabel('URL').fill(hook.url);
        await page.getByRole('button', { name: 'Create rule' }).click();
        await page.getByText('Notifies at the first match, then at most once every 10 minutes with the number that matched.').waitFor();
        const secret = await page.locator('.shown-once code', { hasText: 'whsec_' }).textContent();
        assert.match(secret ?? '', /^whsec_/);
        await page.getByText(/^OK since /).waitFor();
        await page.getByText(`Sends to a webhook: ${hook.url}`).waitFor();
        await page.getByText('None yet.').waitFor();

        // An entry arrives: the rule fires and the webhook gets it.
        await ingestAll(env.svc.url, key, [{ level: 'error', event: 'card declined', timestamp: new Date().toISOString() }]);
        await env.svc.service.runAlertsDue();
        await hook.waitFor(1);
        await page.reload();
        await page.getByText(/^Firing since /).waitFor();
        await page.getByText('Fired: 1 matching entry').waitFor();
        await page.getByText(/Delivered at /).waitFor();
        await assertAccessible(page, 'a saved search with a firing rule');
        await screenshot(page, 'alerts', env.shots);

        // The list: the search, opened in Explore with its filters.
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
        await page.getByRole('heading', { name: 'Saved searches and alerts' }).waitFor();
        await page.getByRole('link', { name: 'Declined payments', exact: true }).waitFor();
        await assertAccessible(page, 'the saved searches');
        await page.getByRole('link', { name: 'Open in Explore Declined payments' }).click();
        await page.getByRole('heading', { name: 'Explore logs' }).waitFor({ state: 'attached' });
        const params = new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '');
        assert.deepEqual([params.get('project_id'), params.get('level'), params.get('q')], [String(projectId), 'error', 'declined']);
      } finally {
        await hook.close();
      }
    }));
}
