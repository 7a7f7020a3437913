/**
 * Single sign-on in a real Chromium against a real OpenID provider
 * (oidc-provider, in-process), one backend per test file: "Sign in with
 * <provider>" on the sign-in page, the provider, the callback page, the
 * console signed in with no code left in the address; an administrator
 * maps a provider group to a team and links an identity; a refused sign-in
 * in words. Every page checked with axe.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { describeEachBackend, type BackendName } from '../support/backends.js';
import { api, freePort, startService, type RunningService } from '../support/service.js';
import { assertAccessible, launchBrowser, screenshot } from '../support/browser.js';
import { inPage } from '../support/console.js';
import { signInAdmin, type SignedIn } from '../support/identity.js';
import { startTestProvider, TEST_CLIENT_ID, TEST_CLIENT_SECRET, type TestProvider } from '../support/oidc-provider.js';

export function ssoConsoleSuite(backend: BackendName): void {
  describeEachBackend('console single sign-on', () => {
    let provider: TestProvider;
    let svc: RunningService;
    let browser: Browser;
    let admin: SignedIn;
    const shots = backend === 'file';

    before(async () => {
      provider = await startTestProvider();
      const port = await freePort();
      svc = await startService(backend, {
        port,
        settings: {
          publicUrl: `http://127.0.0.1:${port}`,
          oidcIssuer: provider.issuer,
          oidcClientId: TEST_CLIENT_ID,
          oidcClientSecret: TEST_CLIENT_SECRET,
          oidcScopes: ['openid', 'profile', 'email', 'groups'],
          oidcProviderName: 'Acme SSO',
          oidcAutoCreate: true,
          passwordLoginEnabled: false,
        },
      });
      await provider.registerClient([`${svc.url}/v1/auth/oidc/callback`]);
      admin = await signInAdmin(svc);
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await svc?.stop({ dropDatabase: true });
      await provider?.stop();
    });

    it('signs a person in through the provider and leaves no code in the address', () =>
      inPage(browser, async (page) => {
        const group = await api(svc.url, 'POST', '/v1/groups', { token: admin.access_token, json: { name: 'acme' } });
        const team = await api(svc.url, 'POST', `/v1/groups/${group.body.id}/teams`, { token: admin.access_token, json: { name: 'platform' } });
        await api(svc.url, 'POST', '/v1/sso/group-teams', {
          token: admin.access_token,
          json: { items: [{ provider_group: 'idp-platform', team_id: team.body.id }] },
        });
        provider.signInAs('grace-sub', { preferred_username: 'grace', name: 'Grace H.', groups: ['idp-platform'] });

        await page.goto(`${svc.url}/console/`);
        const button = page.getByRole('link', { name: 'Sign in with Acme SSO' });
        await button.waitFor();
        // Password sign-in is off: its form is folded away for the emergency accounts.
        assert.equal(await page.getByLabel('Username').isVisible(), false);
        await assertAccessible(page, 'sign-in with single sign-on');
        await screenshot(page, 'sign-in-sso', shots);
        await button.click();
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        assert.equal(await page.locator('.me').textContent(), 'grace');
        assert.doesNotMatch(page.url(), /code=/);
        assert.match(page.url(), /#\/explore$/);
        await assertAccessible(page, 'signed in through single sign-on');
        const members = await api(svc.url, 'GET', `/v1/teams/${team.body.id}/members`, { token: admin.access_token });
        assert.deepEqual(
          members.body.items.map((m: { username: string }) => m.username),
          ['grace'],
        );
      }));

    it('shows a refused sign-in in words', () =>
      inPage(browser, async (page) => {
        await page.goto(`${svc.url}/console/#/sso?error=provider_error&provider_error=access_denied`);
        const alert = page.getByRole('alert');
        await alert.waitFor();
        assert.match((await alert.textContent()) ?? '', /identity provider refused.*Access was denied/);
        assert.doesNotMatch(page.url(), /error=/);
        await assertAccessible(page, 'refused single sign-on');
      }));

    it("lets an administrator map provider groups to teams and see a user's linked identity", () =>
      inPage(browser, async (page) => {
        await page.goto(`${svc.url}/console/`);
        await page.getByText('Sign in with a password', { exact: false }).click();
        await page.getByLabel('Username').fill('admin');
        await page.getByLabel('Password').fill(admin.password);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('button', { name: 'Sign out' }).waitFor();

        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Single sign-on' }).click();
        await page.getByRole('heading', { name: 'Provider groups and teams' }).waitFor();
        await page.getByRole('cell', { name: 'idp-platform' }).waitFor();
        await page.getByLabel('Provider group').fill('idp-sre');
        await page.getByLabel('Team').selectOption({ label: 'platform (acme)' });
        await page.getByRole('button', { name: 'Add pair' }).click();
        await page.getByRole('cell', { name: 'idp-sre' }).waitFor();
        await assertAccessible(page, 'provider groups and teams');
        const mapping = await api(svc.url, 'GET', '/v1/sso/group-teams', { token: admin.access_token });
        assert.deepEqual(mapping.body.items.map((p: { provider_group: string }) => p.provider_group).sort(), ['idp-platform', 'idp-sre']);

        await page.goto(`${svc.url}/console/#/users?username=grace`);
        await page.getByRole('button', { name: 'Edit grace' }).click();
        const identities = page.getByRole('region', { name: 'Edit grace' }).getByRole('region', { name: 'Single sign-on of grace' });
        await identities.getByText('grace-sub').waitFor();
        await identities.getByText('idp-platform').waitFor();
        await assertAccessible(page, "a user's linked identity");
      }));
  }, [backend]);
}
