/**
 * The volume chart's time axis labels, in a zone with a DST change: round
 * local times never finer than a bucket and at most eight, times alone
 * within a day, the date too across midnight, dates alone for whole days,
 * and wall-clock hours kept across the change.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

type Ticks = typeof import('../../console/src/time-ticks.js');
let timeTicks: Ticks['timeTicks'];
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('volume chart time axis', () => {
  before(async () => {
    // Set before the module makes its date format, which keeps the zone it was made in.
    process.env.TZ = 'Europe/Paris';
    ({ timeTicks } = await import('../../console/src/time-ticks.js'));
  });
  const day = (ms: number) => new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' }).format(ms);
  const labels = (from: string, to: string, bucketMs: number) => timeTicks(Date.parse(from), Date.parse(to), bucketMs).map((t) => t.label);

  it('labels six hours by the local hour, each placed where its time falls', () => {
    const ticks = timeTicks(Date.parse('2026-11-26T04:10:00Z'), Date.parse('2026-11-26T10:20:00Z'), 10 * MINUTE);
    assert.deepEqual(
      ticks.map((t) => t.label),
      ['06:00', '07:00', '08:00', '09:00', '10:00', '11:00'],
    );
    assert.equal(ticks[0]!.at, Date.parse('2026-11-26T05:00:00Z'));
    assert.ok(Math.abs(ticks[0]!.offset - 50 / 370) < 1e-12);
  });

  it('labels a quarter of an hour every two minutes, an hour every ten', () => {
    assert.deepEqual(labels('2026-11-26T10:05:00Z', '2026-11-26T10:20:00Z', 15_000), ['11:06', '11:08', '11:10', '11:12', '11:14', '11:16', '11:18', '11:20']);
    assert.deepEqual(labels('2026-11-26T09:20:00Z', '2026-11-26T10:20:00Z', MINUTE), ['10:20', '10:30', '10:40', '10:50', '11:00', '11:10', '11:20']);
  });

  it('adds the date when the span crosses local midnight, and shows dates alone by whole days', () => {
    const nov25 = day(Date.parse('2026-11-25T12:00:00Z'));
    const nov26 = day(Date.parse('2026-11-26T12:00:00Z'));
    assert.deepEqual(labels('2026-11-25T21:00:00Z', '2026-11-26T03:00:00Z', 10 * MINUTE), [
      `${nov25} 22:00`,
      `${nov25} 23:00`,
      `${nov26} 00:00`,
      `${nov26} 01:00`,
      `${nov26} 02:00`,
      `${nov26} 03:00`,
      `${nov26} 04:00`,
    ]);
    const week = timeTicks(Date.parse('2026-11-19T09:00:00Z'), Date.parse('2026-11-26T12:00:00Z'), 3 * HOUR);
    assert.equal(week.length, 7);
    assert.ok(week.every((t) => new Date(t.at).getHours() === 0 && t.label === day(t.at)));
  });

  it('is never finer than a bucket nor more than eight labels', () => {
    for (const [span, bucket] of [
      [15 * MINUTE, 15_000],
      [HOUR, MINUTE],
      [6 * HOUR, 10 * MINUTE],
      [DAY, 30 * MINUTE],
      [7 * DAY, 3 * HOUR],
      [30 * DAY, 12 * HOUR],
      [DAY, 6 * HOUR],
    ] as const) {
      const ticks = timeTicks(Date.parse('2026-11-26T10:00:00Z') - span, Date.parse('2026-11-26T10:00:00Z'), bucket);
      assert.ok(ticks.length >= 2 && ticks.length <= 8, `${span}: ${ticks.length}`);
      assert.ok(
        ticks.every((t, i) => i === 0 || t.at - ticks[i - 1]!.at >= bucket),
        `${span}: finer than ${bucket}`,
      );
    }
  });

  it('keeps whole local hours across the spring DST change, the skipped hour once', () => {
    // 2026-03-29 in Paris: 02:00 local does not exist (01:00 UTC is 03:00 CEST).
    assert.deepEqual(labels('2026-03-29T00:00:00Z', '2026-03-29T06:00:00Z', 10 * MINUTE), ['01:00', '03:00', '04:00', '05:00', '06:00', '07:00', '08:00']);
  });
});
