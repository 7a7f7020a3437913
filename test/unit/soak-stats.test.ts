/**
 * The soak benchmark's arithmetic: RSS by kind read from /proc/PID/status
 * text, and second-half slopes over fields that only some samples carry.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { procStatusRss, secondHalfSlope, type Sample } from '../../bench/support/soak-stats.js';

const MIB = 2 ** 20;

describe('soak statistics', () => {
  it('reads RSS by kind from /proc/PID/status', () => {
    const text = ['Name:\tnode', 'VmRSS:\t  171368 kB', 'RssAnon:\t  121564 kB', 'RssFile:\t   49804 kB', 'RssShmem:\t       0 kB', 'Threads:\t17', ''].join(
      '\n',
    );
    assert.deepEqual(procStatusRss(text), { rssAnon: 121564 * 1024, rssFile: 49804 * 1024, rssShmem: 0 });
  });

  it('answers NaN for a kind the text lacks', () => {
    const rss = procStatusRss('VmRSS:\t 1000 kB\n');
    assert.ok(Number.isNaN(rss.rssAnon) && Number.isNaN(rss.rssFile) && Number.isNaN(rss.rssShmem));
  });

  it('takes the slope of an optional field over the second half, skipping samples without it', () => {
    const samples: Sample[] = [0, 60, 120, 180, 240].map((t) => ({
      t,
      rss: 100 * MIB,
      heapUsed: 10 * MIB,
      heapTotal: 30 * MIB,
      external: MIB,
      ...(t === 180 ? {} : { rssAnon: (50 + t / 60) * MIB }),
    }));
    // Second half: t >= 120 s; the 180 s sample has no rssAnon. 1 MiB more per minute.
    assert.equal(secondHalfSlope(samples, 'rssAnon'), 1);
    assert.equal(secondHalfSlope(samples, 'rss'), 0);
  });
});
