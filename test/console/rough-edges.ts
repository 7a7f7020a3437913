/**
 * Explore's rough edges found by a browser tour, in a real Chromium on both
 * backends (explore-edges-file, explore-edges-server):
 * - choosing a project shows its entries at once, without Search;
 * - a link to a project the person may not read says so in words, names it
 *   in the picker, and asks no histogram;
 * - the volume chart counts entries arriving live, as the list does;
 * - only the known filters of a link reach the service.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_FINAL_PASSWORD, createActor, signInAdmin } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertAccessible, screenshot } from '../support/browser.js';
import { inPage, signInAs, type ConsoleEnv } from '../support/console.js';
import { logRequests, projectWithKey } from './edges-support.js';

/** Run by explore-edges-file and explore-edges-server, beside context-reload.ts on the same service and browser. */
export function roughEdges(env: ConsoleEnv): void {
  it('shows a chosen project at once, and names a refused one in words without asking its histogram', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const open = await projectWithKey(env.svc.url, admin.token, 'open-to-reader');
      const closed = await projectWithKey(env.svc.url, admin.token, 'closed-to-reader');
      await ingestAll(env.svc.url, open.key, [{ level: 'info', event: 'readable entry', timestamp: new Date().toISOString() }]);
      await ingestAll(env.svc.url, closed.key, [{ level: 'info', event: 'secret entry', timestamp: new Date().toISOString() }]);
      const reader = await createActor(env.svc.url, admin.token, 'plain-reader', { grants: [{ role: 'user', scope_type: 'project', scope_id: open.project }] });
      const requests = logRequests(page);

      // A link to a project this person may not read.
      await page.goto(`${env.svc.url}/console/#/explore?project_id=${closed.project}`);
      await signInAs(page, reader.username, reader.password);
      const refusal = page.getByRole('alert').filter({ hasText: `You may not read the logs of project ${closed.project}` });
      await refusal.waitFor();
      assert.match((await refusal.textContent())!, /no role of yours covers it/);
      // Once the person's projects are known, the picker names the refused one rather than reading blank.
      const picked = page.locator('#f-scope option:checked');
      await picked.filter({ hasText: '(not one of yours)' }).waitFor({ state: 'attached' });
      assert.equal(await picked.textContent(), `project ${closed.project} (not one of yours)`);
      assert.equal(await page.getByRole('group', { name: /drag to narrow/ }).count(), 0);
      await assertAccessible(page, 'refused project');
      await screenshot(page, 'refused-project', env.shots);

      // Choosing the readable project takes effect at once: its rows, then its chart, with no Search.
      await page.locator('#f-scope').selectOption({ label: 'open-to-reader' });
      await page.locator('.row', { hasText: 'readable entry' }).waitFor();
      await page.getByRole('group', { name: /^1 entry from .* drag to narrow/ }).waitFor();
      assert.equal(new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('project_id'), String(open.project));
      assert.equal(await page.getByRole('alert').count(), 0);
      // The refused project's list was asked once, its histogram never (the readable one's came after).
      const histograms = requests.filter((u) => u.pathname.endsWith('/histogram')).map((u) => u.searchParams.get('project_id'));
      assert.deepEqual(histograms, [String(open.project)]);
      assert.equal(await page.getByText('secret entry').count(), 0);
    }));

  it('counts entries arriving live in the volume chart, as the list does', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const { project, key } = await projectWithKey(env.svc.url, admin.token, 'live-chart');
      const start = Date.now();
      await ingestAll(
        env.svc.url,
        key,
        Array.from({ length: 17 }, (_, i) => ({
          level: i % 3 ? 'info' : 'error',
          event: `before ${i}`,
          timestamp: new Date(start - 40_000 + i * 1000).toISOString(),
        })),
      );
      // The last minute in one-second bars: entries sent a few seconds later fall in the bars and past them.
      const from = new Date(start - 60_000).toISOString();
      await page.goto(`${env.svc.url}/console/#/explore?project_id=${project}&from=${encodeURIComponent(from)}&live=1`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
      await page.getByText('17 entries', { exact: true }).waitFor();
      const chart = (n: number) => page.getByRole('group', { name: new RegExp(`^${n} entries from .* drag to narrow`) });
      await chart(17).waitFor();
      await page.locator('.live-state', { hasText: /^Live$/ }).waitFor();

      await ingestAll(env.svc.url, key, [{ level: 'warning', event: 'live 1', timestamp: new Date().toISOString() }]);
      await page.locator('.row', { hasText: 'live 1' }).waitFor();
      await chart(18).waitFor();
      await new Promise((r) => setTimeout(r, 1500));
      await ingestAll(env.svc.url, key, [
        { level: 'critical', event: 'live 2', timestamp: new Date().toISOString() },
        { level: 'info', event: 'live 3', timestamp: new Date(Date.now() + 2000).toISOString() },
      ]);
      await page.getByText('20 entries', { exact: true }).waitFor();
      await chart(20).waitFor();
      // Settled: still 20, every level's bars counted once (the chart was asked again meanwhile).
      await new Promise((r) => setTimeout(r, 2500));
      await chart(20).waitFor();
      const labels = await page.locator('.chart svg g[role="img"]').evaluateAll((gs) => gs.map((g) => g.getAttribute('aria-label') ?? ''));
      const perLevel = (level: string) => labels.reduce((n, l) => n + Number(new RegExp(`${level} (\\d+)`).exec(l)?.[1] ?? 0), 0);
      assert.deepEqual(['debug', 'info', 'warning', 'error', 'critical'].map(perLevel), [0, 11 + 1, 1, 6, 1]);
      await screenshot(page, 'live-chart', env.shots);
    }));

  it('sends the service only the known filters of a link', () =>
    inPage(env.browser, async (page) => {
      const admin = await signInAdmin(env.svc.url);
      const { project, key } = await projectWithKey(env.svc.url, admin.token, 'link-params');
      await ingestAll(env.svc.url, key, [
        { level: 'info', event: 'kept by the link', timestamp: new Date().toISOString(), request_id: 'r-1' },
        { level: 'debug', event: 'below the level', timestamp: new Date().toISOString(), request_id: 'r-1' },
      ]);
      const requests = logRequests(page);
      const to = new Date(Date.now() + 3_600_000).toISOString();
      const link = new URLSearchParams({
        project_id: String(project),
        level: 'info',
        to,
        request_id: 'r-1',
        'context.a.b': '',
        buckets: '1',
        limit: '1',
        cursor: 'forged',
        since_id: '5',
        unknown_name: 'x',
      });
      await page.goto(`${env.svc.url}/console/#/explore?${link}`);
      await signInAs(page, 'admin', ADMIN_FINAL_PASSWORD);
      await page.locator('.row', { hasText: 'kept by the link' }).waitFor();
      await page.getByRole('group', { name: /^1 entry from .* drag to narrow/ }).waitFor();
      assert.equal(await page.getByRole('alert').count(), 0);
      const list = requests.filter((u) => u.pathname.endsWith('/v1/logs'));
      const histogram = requests.filter((u) => u.pathname.endsWith('/v1/logs/histogram'));
      assert.ok(list.length >= 1 && histogram.length >= 1);
      for (const u of list) assert.deepEqual([...u.searchParams.keys()].sort(), ['level', 'limit', 'project_id', 'request_id', 'to'], u.search);
      for (const u of list) assert.equal(u.searchParams.get('limit'), '200');
      for (const u of histogram) {
        assert.deepEqual([...u.searchParams.keys()].sort(), ['buckets', 'level', 'project_id', 'request_id', 'to'], u.search);
        assert.equal(u.searchParams.get('buckets'), '60');
      }
    }));
}
