/**
 * The console's whole path in a real Chromium, on both backends: first
 * sign-in with the temporary password → forced change → pick a project →
 * entries appear (hostile fields as text) → filter by level, q and a context
 * value → open an entry → correlate by request_id across two projects →
 * follow live → the stream is dropped and resumes with no gap and no
 * duplicate → sign out (the refresh token is revoked) → a second person
 * deletes their own account. axe-core checks each page on the way.
 */
import { before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Page, Route } from 'playwright-core';
import type { BackendName } from '../support/backends.js';
import { ADMIN_PASSWORD, api } from '../support/service.js';
import { createActor, createGroup, createKey, createProject, signIn } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertAccessible, screenshot } from '../support/browser.js';
import { consoleSuite, inPage, type ConsoleEnv } from '../support/console.js';

const NEW_PASSWORD = 'console-password-1';
const XSS_EVENT = '<img src=x onerror="window.__xss=1">';
const XSS_FIELD = '<script>window.__xss=2</script>';

const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();

/**
 * The journey on one backend. Each backend has its own test file
 * (journey-file, journey-server): a browser journey is long, and two files
 * each get the runner's whole per-file time.
 */
export function journeySuite(backend: BackendName): void {
  consoleSuite('console journey', backend, journey);
}

function journey(env: ConsoleEnv): void {
  /** The connections of open live streams, to cut them as a network failure would. */
  const streamSockets = new Set<Socket>();
  before(() => {
    env.svc.server.on('request', (req: IncomingMessage) => {
      if (!req.url?.startsWith('/v1/logs/stream')) return;
      streamSockets.add(req.socket);
      req.socket.once('close', () => streamSockets.delete(req.socket));
    });
  });

  async function rows(page: Page): Promise<string[]> {
    return page.locator('.vlist .row .event').allTextContents();
  }

  it('signs in, explores, correlates, follows live through a dropped stream, and signs out', () =>
    inPage(env.browser, async (page) => {
      await page.goto(`${env.svc.url}/`);
      await page.getByRole('heading', { name: 'Sign in to logkeep' }).waitFor();
      assert.match(page.url(), /\/console\/$/);
      await assertAccessible(page, 'sign-in');
      await screenshot(page, 'sign-in', env.shots);

      // The temporary password leads straight to the change form.
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      await assertAccessible(page, 'forced change');
      await page.getByLabel('Current password').fill(ADMIN_PASSWORD);
      await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel('New password, again').fill(NEW_PASSWORD);
      await screenshot(page, 'change-password', env.shots);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('You see no project yet').waitFor();

      // Two projects of one group, their entries, one with hostile fields.
      const admin = await signIn(env.svc.url, 'admin', NEW_PASSWORD);
      const groupId = await createGroup(env.svc.url, admin.token, 'shop');
      const checkout = await createProject(env.svc.url, admin.token, groupId, 'checkout');
      const payments = await createProject(env.svc.url, admin.token, groupId, 'payments');
      const checkoutKey = (await createKey(env.svc.url, admin.token, checkout)).secret;
      const paymentsKey = (await createKey(env.svc.url, admin.token, payments)).secret;
      await ingestAll(env.svc.url, checkoutKey, [
        { level: 'info', event: 'order placed', timestamp: ago(60), request_id: 'req-42', logger: 'shop.orders', category: 'orders', user: { id: 'u-7' } },
        { level: 'error', event: 'payment declined for order', timestamp: ago(50), request_id: 'req-42', logger: 'shop.pay', user: { id: 'u-7' } },
        { level: 'error', event: 'payment declined again', timestamp: ago(40), logger: 'shop.pay', user: { id: 'u-8' } },
        { level: 'warning', event: 'slow query', timestamp: ago(30), category: 'db' },
        { level: 'debug', event: 'cache miss', timestamp: ago(20) },
        { level: 'critical', event: XSS_EVENT, timestamp: ago(10), note: XSS_FIELD, [XSS_FIELD]: XSS_EVENT },
      ]);
      await ingestAll(env.svc.url, paymentsKey, [
        { level: 'info', event: 'charge attempted', timestamp: ago(55), request_id: 'req-42' },
        { level: 'error', event: 'card refused', timestamp: ago(52), request_id: 'req-42' },
      ]);

      // Reloading keeps the session (refresh token in this tab) and sees the new projects.
      await page.reload();
      await page.locator('#f-scope').selectOption(`p:${checkout}`);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('6 entries', { exact: true }).waitFor();
      assert.deepEqual(await rows(page), [XSS_EVENT, 'cache miss', 'slow query', 'payment declined again', 'payment declined for order', 'order placed']);
      // Hostile fields are text: nothing ran, no element was made of them.
      assert.equal(await page.evaluate('window.__xss'), undefined);
      assert.equal(await page.locator('.vlist img, .detail img, .vlist script').count(), 0);
      await page.locator('.row', { hasText: 'onerror' }).click();
      await page.locator('.detail').getByText(JSON.stringify(XSS_FIELD)).first().waitFor();
      assert.equal(await page.locator('.detail img, .detail script').count(), 0);
      assert.equal(await page.evaluate('window.__xss'), undefined);
      await assertAccessible(page, 'explore');

      // Level, words and a context value, all in the URL.
      await page.locator('#f-level').selectOption('error');
      await page.getByLabel('Search words').fill('declined');
      await page.getByRole('button', { name: 'Add context filter' }).click();
      await page.getByLabel('Context path 1').fill('user.id');
      await page.getByLabel('Context value 1').fill('u-7');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('1 entry', { exact: true }).waitFor();
      assert.deepEqual(await rows(page), ['payment declined for order']);
      const hash = decodeURIComponent(new URL(page.url()).hash);
      for (const part of [`project_id=${checkout}`, 'level=error', 'q=declined', 'context.user.id=u-7']) assert.ok(hash.includes(part), hash);

      // The entry panel, then correlation across both projects of the group.
      await page.locator('.row', { hasText: 'payment declined for order' }).click();
      await page.getByRole('heading', { name: /^Entry \d+$/ }).waitFor();
      await assertAccessible(page, 'entry panel');
      await screenshot(page, 'explore', env.shots);
      await page.getByRole('link', { name: 'Correlate by request_id' }).click();
      await page.getByText('4 entries in 2 projects, oldest first').waitFor();
      const timeline = await page.locator('.tl-entry .event').allTextContents();
      assert.deepEqual(timeline, ['order placed', 'charge attempted', 'card refused', 'payment declined for order']);
      assert.equal(await page.locator('.tl-entry.origin .event').textContent(), 'payment declined for order');
      await assertAccessible(page, 'correlate');
      await screenshot(page, 'correlate', env.shots);

      // Back to the query (the URL held it), then the entry's context whatever the filter, as grep -C shows it.
      await page.goBack();
      await page.getByText('1 entry', { exact: true }).waitFor();
      assert.ok(decodeURIComponent(page.url()).includes('q=declined'));
      await page.getByRole('link', { name: 'Show context' }).click();
      await page.getByRole('heading', { name: /^Context of entry \d+$/ }).waitFor();
      await page.locator('.tl-entry', { hasText: XSS_EVENT }).waitFor();
      assert.deepEqual(await page.locator('.tl-entry .event').allTextContents(), [
        'order placed',
        'payment declined for order',
        'payment declined again',
        'slow query',
        'cache miss',
        XSS_EVENT,
      ]);
      await assertAccessible(page, 'context');
      await page.goBack();

      // Follow live on the whole project.
      await page.goto(`${env.svc.url}/console/#/explore?project_id=${checkout}`);
      await page.getByText('6 entries', { exact: true }).waitFor();
      await page.getByLabel('Follow live').check();
      await page.locator('.live-state', { hasText: 'Live' }).waitFor();
      await ingestAll(env.svc.url, checkoutKey, [{ level: 'info', event: 'live one', timestamp: new Date().toISOString() }]);
      await page.locator('.row', { hasText: 'live one' }).waitFor();

      // Cut the stream's connection: the console reconnects with Last-Event-ID and misses nothing.
      assert.equal(streamSockets.size, 1);
      for (const socket of streamSockets) socket.destroy();
      await ingestAll(env.svc.url, checkoutKey, [
        { level: 'info', event: 'while away 1', timestamp: new Date().toISOString() },
        { level: 'info', event: 'while away 2', timestamp: new Date().toISOString() },
      ]);
      await page.locator('.live-state', { hasText: 'reconnecting' }).waitFor();
      await page.locator('.live-state', { hasText: /^Live$/ }).waitFor();
      await page.locator('.row', { hasText: 'while away 2' }).waitFor();
      const live = await rows(page);
      assert.deepEqual(live.slice(0, 4), ['while away 2', 'while away 1', 'live one', XSS_EVENT]);
      assert.equal(live.length, new Set(live).size, `no duplicate: ${live.join(' | ')}`);
      await screenshot(page, 'live', env.shots);

      // A new query while following live: its stream starts after the new query's newest entry,
      // never at the position of the query it replaced.
      await page.evaluate(`(() => {
        window.__streams = [];
        const plain = window.fetch;
        window.fetch = (input, init) => {
          const url = String(input);
          if (url.includes('/v1/logs/stream?')) window.__streams.push({ url, position: new Headers(init?.headers).get('Last-Event-ID') });
          return plain(input, init);
        };
      })()`);
      await page.locator('#f-level').selectOption('error');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      // The old query's rows and live state match these waits too: first wait for the new query's stream.
      // (Polled from here: the console's CSP refuses a predicate evaluated from a string.)
      const deadline = Date.now() + 10_000;
      while (((await page.evaluate('window.__streams.length')) as number) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await page.locator('.row', { hasText: 'payment declined again' }).waitFor();
      await page.locator('.live-state', { hasText: /^Live$/ }).waitFor();
      const newestError = (await api(env.svc.url, 'GET', `/v1/logs?project_id=${checkout}&level=error&limit=1`, { token: admin.token })).body.items[0].id;
      const streams = (await page.evaluate('window.__streams')) as { url: string; position: string }[];
      assert.ok(streams.length > 0);
      for (const s of streams) {
        assert.match(s.url, /level=error/);
        assert.equal(s.position, String(newestError), JSON.stringify(streams));
      }

      // Sign out revokes the refresh token.
      const refreshToken = (await page.evaluate('sessionStorage.getItem("logkeep.refresh_token")')) as string;
      assert.ok(refreshToken);
      // The revocation is held back here: a page that said "signed out" before it was done would leave the token working below.
      const slowRevoke = async (route: Route) => {
        if (route.request().method() === 'DELETE') await new Promise((resolve) => setTimeout(resolve, 300));
        await route.continue();
      };
      await page.route('**/v1/auth/token', slowRevoke);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You have signed out.').waitFor();
      await page.unroute('**/v1/auth/token', slowRevoke);
      assert.equal(await page.evaluate('sessionStorage.getItem("logkeep.refresh_token")'), null);
      const reused = await api(env.svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'refresh_token', refresh_token: refreshToken } });
      assert.equal(reused.status, 400);
      assert.equal(reused.body.error, 'invalid_grant');

      // Someone with no project: told so; deletes their own account after confirming.
      const bob = await createActor(env.svc.url, admin.token, 'bob');
      await page.getByLabel('Username').fill('bob');
      await page.getByLabel('Password').fill(bob.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('You see no project yet').waitFor();
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Your account' }).waitFor();
      await assertAccessible(page, 'account');
      await screenshot(page, 'account', env.shots);
      await page.getByRole('button', { name: 'Delete my account…' }).click();
      await page.getByLabel('Your password, to confirm').fill('not-the-password');
      await page.getByRole('button', { name: 'Delete my account for good' }).click();
      await page.getByRole('alert').waitFor();
      await page.getByLabel('Your password, to confirm').fill(bob.password);
      await page.getByRole('button', { name: 'Delete my account for good' }).click();
      await page.getByText('Your account has been deleted.').waitFor();
      const gone = await api(env.svc.url, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username: 'bob', password: bob.password } });
      assert.equal(gone.status, 400);
    }));
}
