/**
 * Entries per time bucket, stacked by level, from `GET /v1/logs/histogram`
 * with the current scope and filters, under a time axis beside a count
 * scale, with the levels' legend. Dragging across the bars narrows the time
 * range. Hidden when the service has no histogram route.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import { entryMs } from '../entry-time';
import { localTime } from '../format';
import { withArrivals, type Histogram } from '../live-counts';
import { LEVELS } from '../query';
import { timeTicks } from '../time-ticks';
import { CountScale, LevelLegend, TimeAxis } from './chart-axis';

const W = 1000;
const H = 90;
/**
 * While following live, the histogram is asked again this long after
 * entries arrive (and again after each answer while more arrive): arrivals
 * are added to the bars at once, and the fresh answer takes in those dated
 * past the last bar and corrects any counted twice or missed in between.
 */
export const LIVE_RECOUNT_MS = 1000;
/**
 * How far past now a live entry may be dated and still be charted: the
 * histogram asked again reaches up to the newest such arrival (a client
 * clock a little ahead), not further, lest one wild timestamp move the
 * chart's whole range into the future.
 */
export const LIVE_FUTURE_SLACK_MS = 5 * 60_000;
const entries = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`;

/** "<local time>: 12 entries (info 10, error 2)": the bucket's total and its non-zero levels, bottom to top. */
function barLabel(b: Histogram['buckets'][number], total: number): string {
  const parts = LEVELS.filter((l) => (b.counts[l] ?? 0) > 0).map((l) => `${l} ${b.counts[l]}`);
  return `${localTime(b.start)}: ${entries(total)}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/** An answer, with the query it is for and how many live arrivals had been received when it was asked (those it counts). */
interface Answer {
  query: string;
  histogram: Histogram;
  counted: number;
}

/**
 * `ready`: the histogram is asked only once true (the page sets it when the
 * first page of results of the same query has answered). `arrivals`: the
 * entries the live stream delivered for this query, oldest first.
 */
export function VolumeChart(props: { query: string; ready: boolean; arrivals: readonly { timestamp?: unknown; level?: unknown }[]; onRange: (from: string, to: string) => void }) {
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [missing, setMissing] = useState(false);
  const [drag, setDrag] = useState<{ a: number; b: number } | null>(null);
  /** Bumped to ask the histogram again (live arrivals). */
  const [recount, setRecount] = useState(0);
  const svg = useRef<SVGSVGElement>(null);
  const arrivals = useRef(props.arrivals);
  arrivals.current = props.arrivals;
  const asking = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!props.ready) return;
    const abort = new AbortController();
    const query = props.query;
    const counted = arrivals.current.length;
    // Without a `to` the service stops at its now: reach the newest arrival, so it is counted.
    const latest = Date.now() + LIVE_FUTURE_SLACK_MS;
    let newest = 0;
    for (const e of arrivals.current) {
      const ms = entryMs(e.timestamp);
      if (ms !== null && ms > newest && ms <= latest) newest = ms;
    }
    const to = counted > 0 && !new URLSearchParams(query).has('to') ? `&to=${encodeURIComponent(new Date(Math.max(Date.now(), newest)).toISOString())}` : '';
    asking.current = true;
    call<Histogram>(`/v1/logs/histogram?${query}${to}&buckets=60`, { signal: abort.signal }).then(
      (h) => {
        if (abort.signal.aborted) return;
        asking.current = false;
        setAnswer({ query, histogram: h, counted });
      },
      (err: { status?: number }) => {
        if (abort.signal.aborted) return;
        asking.current = false;
        if (err.status === 404) setMissing(true);
        setAnswer(null);
      },
    );
    return () => {
      abort.abort();
      asking.current = false;
    };
  }, [props.query, props.ready, recount]);
  // Arrivals not in the last answer: ask again shortly, one request at a time.
  const current = answer?.query === props.query ? answer : null;
  useEffect(() => {
    if (!current || asking.current || timer.current !== null || props.arrivals.length <= current.counted) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      setRecount((n) => n + 1);
    }, LIVE_RECOUNT_MS);
  }, [props.arrivals.length, current]);
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = null;
    },
    [props.query],
  );
  const data = useMemo(
    () => (current ? withArrivals(current.histogram, props.arrivals.slice(current.counted)) : answer?.histogram ?? null),
    [answer, current, props.arrivals.length],
  );
  if (missing || !data || data.buckets.length === 0) return null;
  const n = data.buckets.length;
  const totals = data.buckets.map((b) => LEVELS.reduce((s, l) => s + (b.counts[l] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const bw = W / n;
  const bucketAt = (clientX: number) => {
    const r = svg.current!.getBoundingClientRect();
    return Math.max(0, Math.min(n - 1, Math.floor(((clientX - r.left) / r.width) * n)));
  };
  const finish = () => {
    if (!drag) return;
    const lo = Math.min(drag.a, drag.b);
    const hi = Math.max(drag.a, drag.b);
    setDrag(null);
    const from = new Date(data.buckets[lo]!.start);
    const to = new Date(new Date(data.buckets[hi]!.start).getTime() + data.bucket_seconds * 1000 - 1);
    props.onRange(from.toISOString(), to.toISOString());
  };
  const total = totals.reduce((a, b) => a + b, 0);
  const start = Date.parse(data.buckets[0]!.start);
  const ticks = timeTicks(start, start + n * data.bucket_seconds * 1000, data.bucket_seconds * 1000);
  return (
    <figure class="chart">
      <CountScale max={max} />
      <svg
        ref={svg}
        class="plot"
        viewBox={`0 0 ${W} ${H}`}
        preserveAspectRatio="none"
        role="group"
        aria-label={`${entries(total)} from ${localTime(data.from)} to ${localTime(data.to)}, ${n} bars of ${data.bucket_seconds} s; drag to narrow the time range`}
        onPointerDown={(e) => {
          // Captured, a drag that overshoots the chart's edge still ends on its first or last bar.
          svg.current!.setPointerCapture(e.pointerId);
          setDrag({ a: bucketAt(e.clientX), b: bucketAt(e.clientX) });
        }}
        onPointerMove={(e) => drag && setDrag({ ...drag, b: bucketAt(e.clientX) })}
        onPointerUp={finish}
        onPointerLeave={() => setDrag(null)}
      >
        {ticks.map((t) => (
          <line key={t.at} class="grid" x1={t.offset * W} x2={t.offset * W} y1={0} y2={H} vector-effect="non-scaling-stroke" />
        ))}
        {data.buckets.map((b, i) => {
          let y = H;
          const label = barLabel(b, totals[i]!);
          // Each bar is named for assistive technology (and tests); the title is also the hover tooltip.
          return (
            <g key={i} role="img" aria-label={label} data-start={b.start}>
              <title>{label}</title>
              {LEVELS.map((l) => {
                const h = ((b.counts[l] ?? 0) / max) * (H - 4);
                y -= h;
                return h > 0 ? <rect class={`bar bar-${l}`} x={i * bw + 1} y={y} width={Math.max(1, bw - 2)} height={h} /> : null;
              })}
            </g>
          );
        })}
        {drag ? <rect class="selection" x={Math.min(drag.a, drag.b) * bw} y={0} width={(Math.abs(drag.a - drag.b) + 1) * bw} height={H} /> : null}
      </svg>
      <TimeAxis ticks={ticks} />
      <figcaption>
        <LevelLegend />
        <span class="muted">
          {localTime(data.from)} – {localTime(data.to)} · {entries(total)} · drag across the bars to narrow
        </span>
      </figcaption>
    </figure>
  );
}
