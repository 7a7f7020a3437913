/**
 * Entries per time bucket, stacked by level, from `GET /v1/logs/histogram`
 * with the current scope and filters, under a time axis beside a count
 * scale, with the levels' legend. Dragging across the bars narrows the time
 * range. Hidden when the service has no histogram route. The data comes
 * from `useHistogram`; this draws it.
 */
import { useRef, useState } from 'preact/hooks';
import { localTime } from '../format';
import { useHistogram, type Arrival } from '../hooks/use-histogram';
import type { Histogram } from '../live-counts';
import { LEVELS } from '../query';
import { timeTicks } from '../time-ticks';
import { CountScale, LevelLegend, TimeAxis } from './chart-axis';

const W = 1000;
const H = 90;
const entries = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`;

/** "<local time>: 12 entries (info 10, error 2)": the bucket's total and its non-zero levels, bottom to top. */
function barLabel(b: Histogram['buckets'][number], total: number): string {
  const parts = LEVELS.filter((l) => (b.counts[l] ?? 0) > 0).map((l) => `${l} ${b.counts[l]}`);
  return `${localTime(b.start)}: ${entries(total)}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

/**
 * `ready`: the histogram is asked only once true (the page sets it when the
 * first page of results of the same query has answered). `arrivals`: the
 * entries the live stream delivered for this query, oldest first.
 */
export function VolumeChart(props: { query: string; ready: boolean; arrivals: readonly Arrival[]; onRange: (from: string, to: string) => void }) {
  const { data, missing } = useHistogram(props.query, props.ready, props.arrivals);
  const [drag, setDrag] = useState<{ a: number; b: number } | null>(null);
  const svg = useRef<SVGSVGElement>(null);
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
