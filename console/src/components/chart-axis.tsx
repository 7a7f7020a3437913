/**
 * The volume chart's surroundings: the time axis under the bars, the count
 * scale beside them, and the legend of the levels' colours.
 */
import { LEVELS } from '../query';
import type { Tick } from '../time-ticks';

/**
 * Tick labels placed by percentage in an SVG of the plot's width (no inline
 * style, so the page's CSP holds, and text unstretched since this SVG has no
 * viewBox); labels at the very edges are anchored inwards.
 */
export function TimeAxis(props: { ticks: Tick[] }) {
  return (
    <svg class="chart-axis" role="group" aria-label="Time axis">
      {props.ticks.map((t) => {
        const x = `${(t.offset * 100).toFixed(3)}%`;
        const anchor = t.offset < 0.01 ? 'start' : t.offset > 0.99 ? 'end' : 'middle';
        return (
          <g key={t.at} data-time={new Date(t.at).toISOString()}>
            <line x1={x} x2={x} y1="0" y2="4" />
            <text x={x} y="16" text-anchor={anchor}>
              {t.label}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

/** The count at the top of the bars' scale, and zero at the bottom. */
export function CountScale(props: { max: number }) {
  return (
    <div class="chart-scale">
      <span class="chart-max">
        <span class="visually-hidden">Scale up to </span>
        {props.max.toLocaleString()}
      </span>
      <span aria-hidden="true">0</span>
    </div>
  );
}

/** Each level named in words beside its colour: the colour is never the only clue. */
export function LevelLegend() {
  return (
    <ul class="chart-legend" aria-label="Levels, bottom to top">
      {LEVELS.map((l) => (
        <li key={l}>
          <svg class="swatch" viewBox="0 0 10 10" aria-hidden="true">
            <rect class={`bar-${l}`} width="10" height="10" />
          </svg>
          {l}
        </li>
      ))}
    </ul>
  );
}
