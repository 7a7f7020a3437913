/**
 * The volume chart while following live: entries that arrived after the
 * histogram was asked are added to the bars they fall in, so the chart
 * moves with the list. No DOM: unit-tested.
 */
import type { LogHistogram } from './api-types';
import { entryMs } from './entry-time';
import { LEVELS, type Level } from './query';

export type Histogram = LogHistogram;

/**
 * The histogram with `arrivals` counted in: each in the bucket holding its
 * timestamp, by its level. One outside the buckets (dated after the last one,
 * before the first, or unreadable) is left for the next histogram, which the
 * chart asks for shortly after entries arrive.
 */
export function withArrivals(h: Histogram, arrivals: readonly { timestamp?: unknown; level?: unknown }[]): Histogram {
  if (arrivals.length === 0 || h.buckets.length === 0) return h;
  const start = Date.parse(h.buckets[0]!.start);
  const step = h.bucket_seconds * 1000;
  const buckets = h.buckets.map((b) => ({ start: b.start, counts: { ...b.counts } }));
  for (const e of arrivals) {
    const ms = entryMs(e.timestamp);
    const level = String(e.level) as Level;
    if (ms === null || !LEVELS.includes(level)) continue;
    const i = Math.floor((ms - start) / step);
    if (i < 0 || i >= buckets.length) continue;
    buckets[i]!.counts[level] = (buckets[i]!.counts[level] ?? 0) + 1;
  }
  return { ...h, buckets };
}
