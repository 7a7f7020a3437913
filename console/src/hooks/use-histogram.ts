/**
 * The volume chart's data: `GET /v1/logs/histogram` for a query, asked once
 * the page says it may, with the entries followed live since counted in at
 * once and the histogram asked again shortly after they arrive (one request
 * at a time). Owns its request: a new query drops the one in flight.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import { entryMs } from '../entry-time';
import { withArrivals, type Histogram } from '../live-counts';

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
/** Bars per chart: fine enough to show a burst, few enough that each stays wide enough to point at. */
export const HISTOGRAM_BUCKETS = 60;

/** An answer, with the query it is for and how many live arrivals had been received when it was asked (those it counts). */
interface Answer {
  query: string;
  histogram: Histogram;
  counted: number;
}

export type Arrival = { timestamp?: unknown; level?: unknown };

export interface HistogramData {
  /** The bars to draw (the last answer, with later arrivals counted in), or null before any. */
  data: Histogram | null;
  /** The service has no histogram route (404): the chart hides. */
  missing: boolean;
  /** Asks again now. */
  refetch(): void;
}

/**
 * `ready`: asked only once true (the page sets it when the first page of
 * results of the same query has answered). `arrivals`: the entries the live
 * stream delivered for this query, oldest first.
 */
export function useHistogram(query: string, ready: boolean, arrivals: readonly Arrival[]): HistogramData {
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [missing, setMissing] = useState(false);
  /** Bumped to ask the histogram again (live arrivals). */
  const [recount, setRecount] = useState(0);
  const latestArrivals = useRef(arrivals);
  latestArrivals.current = arrivals;
  const asking = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!ready) return;
    const abort = new AbortController();
    const counted = latestArrivals.current.length;
    // Without a `to` the service stops at its now: reach the newest arrival, so it is counted.
    const latest = Date.now() + LIVE_FUTURE_SLACK_MS;
    let newest = 0;
    for (const e of latestArrivals.current) {
      const ms = entryMs(e.timestamp);
      if (ms !== null && ms > newest && ms <= latest) newest = ms;
    }
    const to = counted > 0 && !new URLSearchParams(query).has('to') ? `&to=${encodeURIComponent(new Date(Math.max(Date.now(), newest)).toISOString())}` : '';
    asking.current = true;
    call<Histogram>(`/v1/logs/histogram?${query}${to}&buckets=${HISTOGRAM_BUCKETS}`, { signal: abort.signal }).then(
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
  }, [query, ready, recount]);
  // Arrivals not in the last answer: ask again shortly, one request at a time.
  const current = answer?.query === query ? answer : null;
  useEffect(() => {
    if (!current || asking.current || timer.current !== null || arrivals.length <= current.counted) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      setRecount((n) => n + 1);
    }, LIVE_RECOUNT_MS);
  }, [arrivals.length, current]);
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = null;
    },
    [query],
  );
  const data = useMemo(
    () => (current ? withArrivals(current.histogram, arrivals.slice(current.counted)) : (answer?.histogram ?? null)),
    [answer, current, arrivals.length],
  );
  return { data, missing, refetch: () => setRecount((n) => n + 1) };
}
