/**
 * Explore: the query from the URL, results newest first in a virtualised
 * list with infinite scroll through `next_cursor`, the entry panel, the
 * volume chart, and following the query live. The data comes from hooks
 * (`useLogPages`, `useLiveFollow`, and the chart's `useHistogram`); this
 * page keeps what is its own: the URL, scrolling and the live toggles.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { scopeRefusal } from '../errors';
import { EntryDetail, type Entry } from '../components/entry-detail';
import { EntryRow } from '../components/entry-row';
import { FilterBar } from '../components/filter-bar';
import { ROW_HEIGHT, VirtualList } from '../components/virtual-list';
import { VolumeChart } from '../components/volume-chart';
import { useLiveFollow } from '../hooks/use-live-follow';
import { useLogPages } from '../hooks/use-log-pages';
import { FirstRunOffer, offersFirstRun } from './first-run';
import { SaveSearch } from './alerts';
import type { LiveState } from '../live';
import { hasScope, queryIdentity, serviceParams } from '../query';
import { navigate, refreshTick, route } from '../router';
import { loadScopes, projects, scopeError } from '../scope';

export function ExplorePage() {
  const params = route.value.params;
  const tick = refreshTick.value;
  // A relative range ("last hour") is pinned when the query is asked (or asked again), not at every render.
  const query = useMemo(() => serviceParams(params), [queryIdentity(params), tick]);
  const queryKey = query.toString();
  const scoped = hasScope(params);
  const live = params.get('live') === '1';
  const selectedId = Number(params.get('entry') ?? 0);

  const pages = useLogPages(scoped ? queryKey : null, tick, (err) => scopeRefusal(err, params));
  const { items, cursor, loading, loaded, answered, error } = pages;
  /** What the live stream delivered for this query, oldest first: the chart counts them as they come. */
  const [arrivals, setArrivals] = useState<Entry[]>([]);
  const [paused, setPaused] = useState(false);
  const [fresh, setFresh] = useState(0);
  const listRef = useRef<HTMLDivElement>(null);
  const scrollTop = useRef(0);

  // Fresh each visit: projects may have been created or shared since.
  useEffect(() => void loadScopes(true), []);
  // A link to a project created since: the picker learns it.
  const projectId = Number(params.get('project_id') ?? 0);
  useEffect(() => {
    if (projectId && projects.value && !projects.value.some((p) => p.id === projectId)) void loadScopes(true);
  }, [projectId]);

  const update = (next: URLSearchParams, replace = false) => navigate('explore', next, replace);

  // A new query: what the last one received live is not this one's (in the same commit as its first page is asked).
  useLayoutEffect(() => {
    setFresh(0);
    setArrivals([]);
  }, [queryKey, tick]);

  // Following live: after the first page, from its newest entry on. `loaded` alone would still
  // be the previous query's in the render that changes the query: a stream would open at the old position.
  const firstPageShown = loaded && answered === queryKey;
  const liveState = useLiveFollow(query, queryKey, live && firstPageShown && !paused, pages.newestId, (entries) => {
    const newestFirst = [...entries].reverse() as Entry[];
    pages.prepend(newestFirst);
    setArrivals((old) => [...old, ...(entries as Entry[])]);
    // Scrolled away from the top: keep the rows in view still and count what arrived.
    if (scrollTop.current > ROW_HEIGHT && listRef.current) {
      listRef.current.scrollTop += newestFirst.length * ROW_HEIGHT;
      setFresh((n) => n + newestFirst.length);
    }
  });

  const selected = selectedId ? (items.find((e) => e.id === selectedId) ?? null) : null;
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
      {scopeError.value ? (
        <p class="error" role="alert">
          {scopeError.value}
        </p>
      ) : null}
      <FirstRunOffer />
      {!scoped ? (
        <p class="empty">
          {noProjects
            ? offersFirstRun()
              ? 'You see no project yet.'
              : 'You see no project yet. An administrator or a group owner can give you access.'
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
              {error
                ? ''
                : loading && !items.length
                  ? 'Loading…'
                  : `${items.length}${cursor ? '+' : ''} ${items.length === 1 && !cursor ? 'entry' : 'entries'}`}
            </span>
            <label class="toggle">
              <input type="checkbox" checked={live} onChange={(e) => update(withParam('live', (e.target as HTMLInputElement).checked ? '1' : null), true)} />{' '}
              Follow live
            </label>
            {live ? (
              <>
                <button type="button" onClick={() => setPaused(!paused)}>
                  {paused ? 'Resume' : 'Pause'}
                </button>
                <span class={`live-state live-${paused ? 'paused' : (liveState?.state ?? 'connecting')}`} role="status" aria-live="polite">
                  {paused ? 'Paused' : liveLabel(liveState?.state)}
                  {liveState?.detail && !paused ? `: ${liveState.detail}` : ''}
                </span>
              </>
            ) : null}
            <SaveSearch params={params} filters={query} />
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
          {error ? (
            <p class="error" role="alert">
              {error}
            </p>
          ) : null}
          {error && !loaded ? null : (
            <div class="results">
              {loaded && items.length === 0 ? (
                <p class="empty">No entries match.</p>
              ) : (
                <VirtualList
                  items={items}
                  label="Log entries, newest first"
                  listRef={listRef}
                  onNearEnd={pages.loadMore}
                  onScrollTop={(top) => {
                    scrollTop.current = top;
                    if (top <= ROW_HEIGHT && fresh) setFresh(0);
                  }}
                  render={(e) => (
                    <EntryRow
                      entry={e}
                      selected={e.id === selectedId}
                      showProject={showProject}
                      onOpen={(x) => update(withParam('entry', String(x.id)), true)}
                    />
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
