/**
 * Explore: the query from the URL, results newest first in a virtualised
 * list with infinite scroll through `next_cursor`, the entry panel, the
 * volume chart, and following the query live.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import { scopeRefusal } from '../errors';
import { EntryDetail, type Entry } from '../components/entry-detail';
import { EntryRow } from '../components/entry-row';
import { FilterBar } from '../components/filter-bar';
import { ROW_HEIGHT, VirtualList } from '../components/virtual-list';
import { VolumeChart } from '../components/volume-chart';
import { FirstRunOffer, offersFirstRun } from './first-run';
import { followLive, type LiveState, type LiveStream } from '../live';
import { hasScope, queryIdentity, serviceParams } from '../query';
import { navigate, refreshTick, route } from '../router';
import { loadScopes, projects, scopeError } from '../scope';

interface Page {
  items: Entry[];
  next_cursor: string | null;
}

const PAGE_SIZE = 200;

export function ExplorePage() {
  const params = route.value.params;
  const tick = refreshTick.value;
  // A relative range ("last hour") is pinned when the query is asked (or asked again), not at every render.
  const query = useMemo(() => serviceParams(params), [queryIdentity(params), tick]);
  const queryKey = query.toString();
  const scoped = hasScope(params);
  const live = params.get('live') === '1';
  const selectedId = Number(params.get('entry') ?? 0);

  const [items, setItems] = useState<Entry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [loaded, setLoaded] = useState(false);
  /** The query whose first page has been answered with rows: the chart asks its histogram then (never after a refusal). */
  const [answered, setAnswered] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** What the live stream delivered for this query, oldest first: the chart counts them as they come. */
  const [arrivals, setArrivals] = useState<Entry[]>([]);
  const [liveState, setLiveState] = useState<{ state: LiveState; detail?: string | undefined } | null>(null);
  const [paused, setPaused] = useState(false);
  const [fresh, setFresh] = useState(0);
  const listRef = useRef<HTMLDivElement>(null);
  const scrollTop = useRef(0);
  const lastId = useRef(0);
  const stream = useRef<LiveStream | null>(null);
  /** The next page being fetched: a new query drops it, lest the old query's rows land in the new list. */
  const more = useRef<AbortController | null>(null);

  // Fresh each visit: projects may have been created or shared since.
  useEffect(() => void loadScopes(true), []);
  // A link to a project created since: the picker learns it.
  const projectId = Number(params.get('project_id') ?? 0);
  useEffect(() => {
    if (projectId && projects.value && !projects.value.some((p) => p.id === projectId)) void loadScopes(true);
  }, [projectId]);

  const update = (next: URLSearchParams, replace = false) => navigate('explore', next, replace);

  // A new query: the first page, asked as soon as the query renders (not a frame later, as `useEffect` would).
  useLayoutEffect(() => {
    more.current?.abort();
    setItems([]);
    setCursor(null);
    setLoaded(false);
    setError(null);
    setFresh(0);
    setArrivals([]);
    if (!scoped) return;
    const abort = new AbortController();
    setLoading(true);
    call<Page>(`/v1/logs?${queryKey}&limit=${PAGE_SIZE}`, { signal: abort.signal })
      .then((page) => {
        if (abort.signal.aborted) return;
        setItems(page.items);
        setCursor(page.next_cursor);
        lastId.current = page.items[0]?.id ?? 0;
        setLoaded(true);
        setAnswered(queryKey);
      })
      .catch((err: unknown) => {
        if (abort.signal.aborted) return;
        setError(scopeRefusal(err, params));
      })
      // A dropped answer leaves the flag to the query that replaced it.
      .finally(() => abort.signal.aborted || setLoading(false));
    return () => abort.abort();
  }, [queryKey, tick]);

  const loadMore = () => {
    if (!cursor || loading) return;
    const abort = new AbortController();
    more.current = abort;
    setLoading(true);
    call<Page>(`/v1/logs?${queryKey}&limit=${PAGE_SIZE}&cursor=${encodeURIComponent(cursor)}`, { signal: abort.signal })
      .then((page) => {
        if (abort.signal.aborted) return;
        setItems((old) => [...old, ...page.items]);
        setCursor(page.next_cursor);
      })
      .catch((err: Error) => {
        if (!abort.signal.aborted) setError(err.message);
      })
      .finally(() => abort.signal.aborted || setLoading(false));
  };

  // Following live: after the first page, from its newest entry on. `loaded` alone would still
  // be the previous query's in the render that changes the query: a stream would open at the old position.
  const firstPageShown = loaded && answered === queryKey;
  useEffect(() => {
    if (!live || !firstPageShown || paused) return;
    const s = followLive(query, lastId.current, {
      onEntries(entries) {
        const newestFirst = [...entries].reverse() as Entry[];
        lastId.current = Number(newestFirst[0]!.id);
        setItems((old) => [...newestFirst, ...old]);
        setArrivals((old) => [...old, ...(entries as Entry[])]);
        // Scrolled away from the top: keep the rows in view still and count what arrived.
        if (scrollTop.current > ROW_HEIGHT && listRef.current) {
          listRef.current.scrollTop += newestFirst.length * ROW_HEIGHT;
          setFresh((n) => n + newestFirst.length);
        }
      },
      onState: (state, detail) => setLiveState({ state, detail }),
    });
    stream.current = s;
    return () => {
      s.close();
      stream.current = null;
    };
  }, [live, firstPageShown, paused, queryKey]);

  const selected = selectedId ? items.find((e) => e.id === selectedId) ?? null : null;
  const withParam = (k: string, v: string | null) => {
    const next = new URLSearchParams(params);
    if (v === null) next.delete(k);
    else next.set(k, v);
    return next;
  };
  const onFilter = (param: string, value: string) => {
    const next = withParam(param, value);
    next.delete('entry');
    update(next);
  };
  const showProject = Boolean(params.get('group_id'));
  const noProjects = projects.value !== null && projects.value.length === 0;

  return (
    <main class="explore">
      <h1 class="visually-hidden">Explore logs</h1>
      <FilterBar params={params} onSubmit={(p) => update(p)} />
      {scopeError.value ? <p class="error" role="alert">{scopeError.value}</p> : null}
      <FirstRunOffer />
      {!scoped ? (
        <p class="empty">
          {noProjects
            ? offersFirstRun() ? 'You see no project yet.' : 'You see no project yet. An administrator or a group owner can give you access.'
            : 'Choose a project or a whole group above, then search.'}
        </p>
      ) : (
        <>
          {error && !loaded ? null : (
            <VolumeChart
              query={queryKey}
              // The results first: on a shared database the histogram's heavier scan would hold up the rows.
              ready={answered === queryKey}
              arrivals={arrivals}
              onRange={(from, to) => {
                const next = withParam('from', from);
                next.set('to', to);
                next.delete('range');
                update(next);
              }}
            />
          )}
          <div class="results-bar">
            <span role="status">
              {error ? '' : loading && !items.length ? 'Loading…' : `${items.length}${cursor ? '+' : ''} ${items.length === 1 && !cursor ? 'entry' : 'entries'}`}
            </span>
            <label class="toggle">
              <input type="checkbox" checked={live} onChange={(e) => update(withParam('live', (e.target as HTMLInputElement).checked ? '1' : null), true)} /> Follow live
            </label>
            {live ? (
              <>
                <button type="button" onClick={() => setPaused(!paused)}>
                  {paused ? 'Resume' : 'Pause'}
                </button>
                <span class={`live-state live-${paused ? 'paused' : liveState?.state ?? 'connecting'}`} role="status" aria-live="polite">
                  {paused ? 'Paused' : liveLabel(liveState?.state)}
                  {liveState?.detail && !paused ? `: ${liveState.detail}` : ''}
                </span>
              </>
            ) : null}
            {fresh > 0 ? (
              <button
                type="button"
                class="fresh"
                onClick={() => {
                  listRef.current?.scrollTo({ top: 0 });
                  setFresh(0);
                }}
              >
                {fresh} new ↑
              </button>
            ) : null}
          </div>
          {error ? <p class="error" role="alert">{error}</p> : null}
          {error && !loaded ? null : (
            <div class="results">
              {loaded && items.length === 0 ? (
                <p class="empty">No entries match.</p>
              ) : (
                <VirtualList
                  items={items}
                  label="Log entries, newest first"
                  listRef={listRef}
                  onNearEnd={loadMore}
                  onScrollTop={(top) => {
                    scrollTop.current = top;
                    if (top <= ROW_HEIGHT && fresh) setFresh(0);
                  }}
                  render={(e) => (
                    <EntryRow entry={e} selected={e.id === selectedId} showProject={showProject} onOpen={(x) => update(withParam('entry', String(x.id)), true)} />
                  )}
                />
              )}
              {selected ? <EntryDetail entry={selected} onClose={() => update(withParam('entry', null), true)} onFilter={onFilter} /> : null}
            </div>
          )}
        </>
      )}
    </main>
  );
}

function liveLabel(state: LiveState | undefined): string {
  switch (state) {
    case 'live':
      return 'Live';
    case 'reconnecting':
      return 'Connection lost, reconnecting…';
    case 'ended':
      return 'Stopped';
    case 'closed':
      return 'Off';
    default:
      return 'Connecting…';
  }
}
