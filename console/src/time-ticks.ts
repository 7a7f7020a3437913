/**
 * Where a time axis puts its labels: round local times (every 5 minutes,
 * every hour, every day…) at most `MAX_TICKS` across the span, never finer
 * than one bucket; times alone within a day, the date too when the span
 * crosses midnight, the date alone for steps of whole days.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEPS = [
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
];
export const MAX_TICKS = 8;

export interface Tick {
  /** Epoch ms. */
  at: number;
  label: string;
  /** Where across the span, 0 (start) to 1 (end). */
  offset: number;
}

const pad = (n: number) => String(n).padStart(2, '0');
const dayMonth = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });
const dayOf = (ms: number) => new Date(ms).toDateString();

export function timeTicks(startMs: number, endMs: number, bucketMs: number): Tick[] {
  const span = endMs - startMs;
  if (!(span > 0)) return [];
  const step = STEPS.find((s) => s >= bucketMs && span / s <= MAX_TICKS) ?? STEPS[STEPS.length - 1]!;
  const multiDay = dayOf(startMs) !== dayOf(endMs - 1);
  const label = (ms: number) => {
    const d = new Date(ms);
    const time = `${pad(d.getHours())}:${pad(d.getMinutes())}${step < MINUTE ? `:${pad(d.getSeconds())}` : ''}`;
    if (step >= DAY) return dayMonth.format(d);
    return multiDay ? `${dayMonth.format(d)} ${time}` : time;
  };
  return localSteps(startMs, endMs, step).map((at) => ({ at, label: label(at), offset: (at - startMs) / span }));
}

/** Multiples of `step` in local wall-clock time (so 06:00 stays 06:00 across a DST change), from the start's local midnight. */
function localSteps(startMs: number, endMs: number, step: number): number[] {
  const s = new Date(startMs);
  const [y, m, d] = [s.getFullYear(), s.getMonth(), s.getDate()];
  const out: number[] = [];
  if (step >= DAY) {
    const days = step / DAY;
    // Bounded by count too: an instant Date cannot hold (NaN) must never loop for ever.
    for (let i = 0, n = 0; out.length <= MAX_TICKS && n < MAX_TICKS * 4; i += days, n++) {
      const at = new Date(y, m, d + i).getTime();
      if (at > endMs) break;
      if (at >= startMs) out.push(at);
    }
    return out;
  }
  // Whole steps of local wall-clock time from midnight (the Date constructor carries milliseconds over into hours and days).
  const wallStart = s.getHours() * HOUR + s.getMinutes() * MINUTE + s.getSeconds() * SECOND + s.getMilliseconds();
  const first = Math.ceil(wallStart / step);
  for (let k = first; out.length <= MAX_TICKS * 2 && k < first + MAX_TICKS * 4; k++) {
    const wall = k * step;
    const at = new Date(y, m, d + Math.floor(wall / DAY), 0, 0, 0, wall % DAY).getTime();
    if (at > endMs) break;
    // A wall-clock time skipped by a DST change lands on the next one: once is enough.
    if (at >= startMs && at !== out[out.length - 1]) out.push(at);
  }
  return out;
}
