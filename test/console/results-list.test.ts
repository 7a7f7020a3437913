/**
 * The results list with many entries, in a real Chromium on both backends:
 * pages load as the list scrolls through `next_cursor`, only the rows in
 * view are in the page, and while following live with the list scrolled
 * away the rows in view stay put and a marker counts the new entries;
 * an expired access token is refreshed, a refused refresh signs out.
 * The volume chart above the results draws, per bucket, a stack of one bar
 * per level whose counts are the entries ingested in it, and dragging across
 * it narrows the time range to the bars dragged over; under it a time axis
 * labels round local times (hours over six hours, dates over seven days),
 * beside it the scale's top is the fullest bar's count, and a legend names
 * each level beside its bars' colour. The chart asks for its histogram only
 * once the results' first page of the same query has answered.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Locator, Page } from 'playwright-core';
import { describeEachBackend } from '../support/backends.js';
import { startService, type RunningService } from '../support/service.js';
import { ADMIN_FINAL_PASSWORD, createGroup, createKey, createProject, signInAdmin } from '../support/actors.js';
import { ingestAll } from '../support/logs.js';
import { assertAccessible, launchBrowser, newPage, screenshot } from '../support/browser.js';

const COUNT = 600;
const LEVELS = ['debug', 'info', 'warning', 'error', 'critical'] as const;
const LEVEL_CYCLE = ['info', 'info', 'debug', 'warning', 'info', 'error', 'info', 'critical'] as const;
/** The browser's zone and locale (test/support/browser.ts), for the labels the axis should show. */
const ZONE = { timeZone: 'Europe/Paris', locale: 'en-GB' };
const HOUR = 3_600_000;

/** What the chart shows of one bucket, read from the page. */
interface DrawnBar {
  start: string;
  label: string;
  /** The stacked rectangles, bottom to top: level and height. */
  rects: { level: string; height: number }[];
}
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

  it('draws the volume per bucket stacked by level, and narrows the time range when dragged across', async () => {
    const admin = await signInAdmin(svc.url);
    const groupId = await createGroup(svc.url, admin.token, 'volume');
    const project = await createProject(svc.url, admin.token, groupId, 'volume');
    const key = (await createKey(svc.url, admin.token, project)).secret;
    // 150 entries spread over five hours, then a burst of 40 errors in twenty minutes.
    const now = Date.now();
    const entries = [
      ...Array.from({ length: 150 }, (_, i) => ({
        level: LEVEL_CYCLE[i % LEVEL_CYCLE.length]!,
        event: `steady ${i}`,
        timestamp: new Date(now - 5.5 * 3_600_000 + i * 120_000).toISOString(),
      })),
      ...Array.from({ length: 40 }, (_, i) => ({ level: 'error', event: `burst ${i}`, timestamp: new Date(now - 3_600_000 + i * 30_000).toISOString() })),
    ];
    await ingestAll(svc.url, key, entries);

    const { page, errors, close } = await newPage(browser);
    const network = watchQueries(page);
    try {
      await page.goto(`${svc.url}/console/#/explore?project_id=${project}&range=6h`);
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password').fill(ADMIN_FINAL_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(`${entries.length} entries`, { exact: true }).waitFor();
      const chart = page.getByRole('group', { name: /entries from .* drag to narrow the time range/ });
      await chart.waitFor();
      const bars = await drawnBars(page);
      // Buckets are aligned on a round step, so six hours take at most the 60 asked for.
      assert.ok(bars.length > 10 && bars.length <= 60, `${bars.length} bars`);

      // Every bucket's label and stack say exactly what was ingested in it.
      const bucketMs = Date.parse(bars[1]!.start) - Date.parse(bars[0]!.start);
      let drawnTotal = 0;
      const perPixel: number[] = [];
      for (const bar of bars) {
        const start = Date.parse(bar.start);
        const inside = entries.filter((e) => Date.parse(e.timestamp) >= start && Date.parse(e.timestamp) < start + bucketMs);
        const byLevel = LEVELS.map((l) => [l, inside.filter((e) => e.level === l).length] as const).filter(([, n]) => n > 0);
        const expected = `${inside.length} ${inside.length === 1 ? 'entry' : 'entries'}${byLevel.length ? ` (${byLevel.map(([l, n]) => `${l} ${n}`).join(', ')})` : ''}`;
        assert.equal(bar.label.split(': ')[1], expected, `bucket at ${bar.start}`);
        assert.deepEqual(
          bar.rects.map((r) => r.level),
          byLevel.map(([l]) => l),
          `the stack of the bucket at ${bar.start}`,
        );
        // Heights are proportional to the counts: one scale for every rectangle of the chart.
        bar.rects.forEach((r, i) => {
          perPixel.push(r.height / byLevel[i]![1]);
        });
        drawnTotal += inside.length;
      }
      assert.equal(drawnTotal, entries.length);
      assert.ok(perPixel.length > 0 && Math.max(...perPixel) - Math.min(...perPixel) < 1e-6, `one scale for every bar: ${perPixel.join(' ')}`);
      assert.match((await chart.getAttribute('aria-label'))!, new RegExp(`^${entries.length} entries from `));

      // The scale's top is the fullest bar; the legend names the five levels, each beside its bars' colour.
      const totals = bars.map((b) => Number(/: (\d+) entr/.exec(b.label)![1]));
      assert.equal(await page.locator('.chart-max').textContent(), `Scale up to ${Math.max(...totals).toLocaleString(ZONE.locale)}`);
      const legend = page.getByRole('list', { name: 'Levels, bottom to top' });
      assert.deepEqual(await legend.getByRole('listitem').allTextContents(), [...LEVELS]);
      for (const level of LEVELS) {
        const [swatch, bar] = await Promise.all([
          fillOf(page.locator(`.chart-legend rect.bar-${level}`)),
          fillOf(page.locator(`.chart .plot rect.bar-${level}`).first()),
        ]);
        assert.equal(swatch, bar, `the legend's ${level}`);
      }

      // Six hours: a label on every local whole hour across the bars, placed where that time falls.
      const domain = { from: Date.parse(bars[0]!.start), to: Date.parse(bars.at(-1)!.start) + bucketMs };
      assertAxis(await axisTicks(page), domain, HOUR);
      await assertAccessible(page, 'volume chart');
      await screenshot(page, 'volume', backend === 'file');

      // Drag across the two fullest neighbouring buckets: the range becomes exactly theirs.
      let lo = 0;
      for (let i = 1; i < totals.length - 1; i++) if (totals[i]! + totals[i + 1]! > totals[lo]! + totals[lo + 1]!) lo = i;
      const selected = totals[lo]! + totals[lo + 1]!;
      const box = (await chart.boundingBox())!;
      const xOf = (i: number) => box.x + ((i + 0.5) * box.width) / bars.length;
      await page.mouse.move(xOf(lo + 1), box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(xOf(lo), box.y + box.height / 2, { steps: 5 });
      await page.mouse.up();
      await page.getByText(`${selected} entries`, { exact: true }).waitFor();
      const hash = new URLSearchParams(new URL(page.url()).hash.split('?')[1]);
      assert.equal(hash.get('range'), null);
      assert.equal(hash.get('from'), new Date(Date.parse(bars[lo]!.start)).toISOString());
      assert.equal(hash.get('to'), new Date(Date.parse(bars[lo + 1]!.start) + bucketMs - 1).toISOString());
      await page.getByRole('group', { name: new RegExp(`^${selected} entries from `) }).waitFor();
      const from = Date.parse(hash.get('from')!);
      const to = Date.parse(hash.get('to')!);
      const expectedRows = entries.filter((e) => Date.parse(e.timestamp) >= from && Date.parse(e.timestamp) <= to).map((e) => e.event);
      assert.equal(expectedRows.length, selected);
      const shown = await page.locator('.vlist .row .event').allTextContents();
      assert.ok(shown.length > 0 && shown.every((e) => expectedRows.includes(e)), `rows outside the dragged range: ${shown.join(', ')}`);

      // Back restores the whole range.
      await page.goBack();
      await page.getByText(`${entries.length} entries`, { exact: true }).waitFor();
      await page.getByRole('group', { name: new RegExp(`^${entries.length} entries from `) }).waitFor();

      // A drag that overshoots the right edge ends on the last bar. The chart
      // was drawn again for the six hours up to now, so its bars are read
      // afresh: a bucket boundary may have passed since the first drawing.
      const barsNow = await drawnBars(page);
      const boxNow = (await chart.boundingBox())!;
      const last = barsNow.length - 1;
      await page.mouse.move(boxNow.x + ((last - 2 + 0.5) * boxNow.width) / barsNow.length, boxNow.y + boxNow.height / 2);
      await page.mouse.down();
      await page.mouse.move(boxNow.x + boxNow.width + 40, boxNow.y + boxNow.height / 2, { steps: 5 });
      await page.mouse.up();
      const tailFrom = Date.parse(barsNow[last - 2]!.start);
      const tailTo = Date.parse(barsNow[last]!.start) + bucketMs - 1;
      const tail = entries.filter((e) => Date.parse(e.timestamp) >= tailFrom && Date.parse(e.timestamp) <= tailTo).length;
      await page.getByText(`${tail} ${tail === 1 ? 'entry' : 'entries'}`, { exact: true }).waitFor();
      const tailHash = new URLSearchParams(new URL(page.url()).hash.split('?')[1]);
      assert.deepEqual([tailHash.get('from'), tailHash.get('to')], [new Date(tailFrom).toISOString(), new Date(tailTo).toISOString()]);

      // Seven days: a label on every local midnight, the date alone.
      await page.evaluate(`location.hash = ${JSON.stringify(`#/explore?project_id=${project}&range=7d`)}`);
      // Buckets of an hour or more (the six hours' were ten minutes).
      const week = page.getByRole('group', { name: new RegExp(`^${entries.length} entries from .* bars of \\d{4,} s`) });
      await week.waitFor();
      const weekBars = await drawnBars(page);
      const weekBucket = Number(/bars of (\d+) s/.exec((await week.getAttribute('aria-label'))!)![1]) * 1000;
      assertAxis(await axisTicks(page), { from: Date.parse(weekBars[0]!.start), to: Date.parse(weekBars.at(-1)!.start) + weekBucket }, 24 * HOUR);

      // Every histogram was asked after the first page of its query had answered: the rows never wait for the chart.
      const histograms = network.filter((e) => e.kind === 'histogram asked');
      assert.ok(histograms.length >= 4, `${histograms.length} histograms`);
      for (const h of histograms) {
        const before = network.slice(0, network.indexOf(h));
        assert.ok(
          before.some((e) => e.kind === 'list answered' && e.query === h.query),
          `histogram for ${h.query} asked before its list answered: ${JSON.stringify(network)}`,
        );
      }
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
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
      Array.from({ length: COUNT }, (_, i) => ({
        level: 'info',
        event: `bulk ${String(i).padStart(4, '0')}`,
        timestamp: new Date(base + i * 1000).toISOString(),
      })),
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
      await ingestAll(
        svc.url,
        key,
        [1, 2, 3].map((i) => ({ level: 'warning', event: `bulk new ${i}`, timestamp: new Date().toISOString() })),
      );
      await page.getByRole('button', { name: '3 new ↑' }).waitFor();
      assert.equal(await page.locator('.vlist .row .event').first().textContent(), before);
      await page.getByRole('button', { name: '3 new ↑' }).click();
      await page.locator('.row', { hasText: 'bulk new 3' }).waitFor();
      assert.deepEqual((await page.locator('.vlist .row .event').allTextContents()).slice(0, 3), ['bulk new 3', 'bulk new 2', 'bulk new 1']);
      await page.getByLabel('Follow live').uncheck();

      // Past the access token's 15 minutes: the next call refreshes (rotating the refresh token) and goes on.
      const firstRefresh = await page.evaluate('sessionStorage.getItem("logkeep.refresh_token")');
      clockOffset += 16 * 60_000;
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('200+ entries', { exact: true }).waitFor();
      const secondRefresh = (await page.evaluate('sessionStorage.getItem("logkeep.refresh_token")')) as string;
      assert.ok(secondRefresh && secondRefresh !== firstRefresh, 'the refresh token was rotated');

      // When the refresh is refused (revoked elsewhere), the console goes back to sign-in and says why.
      const revoked = await fetch(`${svc.url}/v1/auth/token`, { method: 'DELETE', body: new URLSearchParams({ refresh_token: secondRefresh }) });
      assert.equal(revoked.status, 200);
      clockOffset += 16 * 60_000;
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('Your session has ended. Please sign in again.').waitFor();
      await page.getByRole('heading', { name: 'Sign in to logkeep' }).waitFor();
      // The failed calls' 401s are the browser's own console noise, not the page's errors.
      assert.deepEqual(
        errors.filter((e) => !/Failed to load resource/.test(e)),
        [],
      );
    } finally {
      await close();
    }
  });
});

/** The page's list and histogram requests in the order they were asked or answered, each with its query (paging left out). */
function watchQueries(page: Page): { kind: 'list answered' | 'histogram asked'; query: string }[] {
  const events: { kind: 'list answered' | 'histogram asked'; query: string }[] = [];
  const queryOf = (url: string) => {
    const params = new URL(url).searchParams;
    for (const k of ['limit', 'cursor', 'buckets']) params.delete(k);
    return params.toString();
  };
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.endsWith('/v1/logs/histogram')) events.push({ kind: 'histogram asked', query: queryOf(r.url()) });
  });
  page.on('requestfinished', (r) => {
    if (new URL(r.url()).pathname.endsWith('/v1/logs') && r.method() === 'GET') events.push({ kind: 'list answered', query: queryOf(r.url()) });
  });
  return events;
}

/** The colour a rectangle is painted in (its CSS fill, computed). */
function fillOf(rect: Locator): Promise<string> {
  return rect.evaluate((r) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill);
}

interface AxisTick {
  at: number;
  label: string;
  /** Across the plot, in %. */
  x: number;
}

async function axisTicks(page: Page): Promise<AxisTick[]> {
  const ticks = await page.locator('.chart-axis g').evaluateAll((gs) =>
    gs.map((g) => ({
      at: g.getAttribute('data-time') ?? '',
      label: g.querySelector('text')?.textContent ?? '',
      x: g.querySelector('text')?.getAttribute('x') ?? '',
    })),
  );
  return ticks.map((t) => ({ at: Date.parse(t.at), label: t.label, x: Number(t.x.replace('%', '')) }));
}

/**
 * Every local multiple of `step` (whole hours, or midnights) inside the plotted time is labelled, no other:
 * the time alone within one local day, with the date when the plot crosses midnight, the date alone for days.
 */
function assertAxis(ticks: AxisTick[], domain: { from: number; to: number }, step: number): void {
  const local = (ms: number, o: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(ZONE.locale, { timeZone: ZONE.timeZone, ...o }).format(ms);
  const time = (ms: number) => local(ms, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const date = (ms: number) => local(ms, { day: 'numeric', month: 'short' });
  const multiDay = date(domain.from) !== date(domain.to - 1);
  const expected: number[] = [];
  for (let t = domain.from; t <= domain.to; t += 60_000) {
    if (step === HOUR ? time(t).endsWith(':00') : time(t) === '00:00') expected.push(t);
  }
  assert.ok(ticks.length >= 3 && ticks.length <= 8, `${ticks.length} labels`);
  assert.deepEqual(
    ticks.map((t) => new Date(t.at).toISOString()),
    expected.map((t) => new Date(t).toISOString()),
  );
  for (const t of ticks) {
    const want = step >= 24 * HOUR ? date(t.at) : multiDay ? `${date(t.at)} ${time(t.at)}` : time(t.at);
    assert.equal(t.label, want);
    assert.ok(Math.abs(t.x - ((t.at - domain.from) / (domain.to - domain.from)) * 100) < 0.01, `${t.label} at ${t.x}%`);
  }
}

async function drawnBars(page: Page): Promise<DrawnBar[]> {
  return page.locator('.chart svg g[role="img"]').evaluateAll((groups) =>
    groups.map((g) => ({
      start: g.getAttribute('data-start') ?? '',
      label: g.getAttribute('aria-label') ?? '',
      rects: [...g.querySelectorAll('rect')].map((r) => ({
        level: r.getAttribute('class')!.replace('bar bar-', ''),
        height: Number(r.getAttribute('height')),
      })),
    })),
  );
}
