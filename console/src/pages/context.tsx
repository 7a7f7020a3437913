/**
 * Context, as `grep -C` gives it: the entries just before and after one
 * entry in its project, whatever the query was, expandable both ways. One
 * order on both sides, time order (the entries' timestamps; the same
 * millisecond in the order stored): see context-walk.ts for why and how.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import type { Page } from '../api-types';
import type { Entry } from '../components/entry-detail';
import { JsonTree } from '../components/json-tree';
import { walk, positionOf, type Direction, type Position, type ReadWindow } from '../context-walk';
import { entryMs } from '../entry-time';
import { localTime, utcTitle } from '../format';
import { href, route } from '../router';
import { loadScopes, projectName } from '../scope';

const STEP = 20;

function windowReader(projectId: string): ReadWindow<Entry> {
  return (from, to, cursor, limit) => {
    const q = new URLSearchParams({ project_id: projectId, limit: String(limit) });
    if (from !== null) q.set('from', new Date(from).toISOString());
    if (to !== null) q.set('to', new Date(to).toISOString());
    if (cursor) q.set('cursor', cursor);
    return call<Page<Entry>>(`/v1/logs?${q}`);
  };
}

/** The entry itself, among those of its millisecond (null when it is no longer stored). */
async function findOrigin(read: ReadWindow<Entry>, at: Position): Promise<Entry | null> {
  let cursor: string | null = null;
  do {
    const page: Page<Entry> = await read(at.ms, at.ms, cursor, 200);
    const found = page.items.find((e) => e.id === at.id);
    if (found) return found;
    if (page.items.some((e) => e.id < at.id)) return null;
    cursor = page.next_cursor;
  } while (cursor);
  return null;
}

interface Side {
  /** Nearest first. */
  entries: Entry[];
  /** Nothing more that way (as of the last look). */
  done: boolean;
}

const EMPTY: Side = { entries: [], done: false };

export function ContextPage() {
  const p = route.value.params;
  const projectId = p.get('project_id') ?? '';
  const id = Number(p.get('entry') ?? 0);
  const originMs = entryMs(p.get('ts'));
  const [origin, setOrigin] = useState<Entry | null>(null);
  const [before, setBefore] = useState<Side>(EMPTY);
  const [after, setAfter] = useState<Side>(EMPTY);
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => void loadScopes(), []);

  const read = windowReader(projectId);
  const at: Position | null = originMs === null ? null : { ms: originMs, id };
  const extend = async (direction: Direction, side: Side, set: (s: Side) => void) => {
    const last = side.entries[side.entries.length - 1];
    const more = await walk(read, last ? positionOf(last) : at!, direction, STEP);
    set({ entries: [...side.entries, ...more.entries], done: more.exhausted });
  };

  useEffect(() => {
    setOrigin(null);
    setBefore(EMPTY);
    setAfter(EMPTY);
    setError(null);
    setMissing(false);
    if (!at) {
      setError('This link does not say when the entry was written.');
      return;
    }
    let current = true;
    const guard = <T,>(set: (v: T) => void) => (v: T) => current && set(v);
    Promise.all([
      findOrigin(read, at).then((e) => current && (e ? setOrigin(e) : setMissing(true))),
      extend('before', EMPTY, guard(setBefore)),
      extend('after', EMPTY, guard(setAfter)),
    ]).catch((err: Error) => current && setError(err.message));
    return () => {
      current = false;
    };
  }, [p.toString()]);

  const wrap = (f: () => Promise<void>) => async () => {
    setBusy(true);
    try {
      await f();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  // Oldest at the top, as a file reads.
  const rows = [...before.entries].reverse().concat(origin ? [origin] : [], after.entries);
  return (
    <main>
      <h1>Context of entry {id}</h1>
      <p>
        In {projectName(Number(projectId))}, whatever the query. <a href={href('explore', { project_id: projectId })}>Explore this project</a>
      </p>
      <p class="muted context-order">
        In time order, oldest at the top: by each entry's own timestamp, and entries with the same time in the order they were stored.
      </p>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {missing ? <p class="empty">Entry {id} is no longer stored (retention may have removed it); its neighbours are shown around its time.</p> : null}
      <button type="button" disabled={busy || before.done || !at} onClick={wrap(() => extend('before', before, setBefore))}>
        Show {STEP} earlier
      </button>
      {before.done ? <span class="muted"> Nothing earlier.</span> : null}
      <ol class="timeline">
        {rows.map((e) => (
          <li class={`tl-entry${e.id === id ? ' origin' : ''}`} key={e.id}>
            <details open={e.id === id}>
              <summary>
                <span class={`lvl lvl-${e.level}`}>{e.level}</span> <time title={utcTitle(e.timestamp)}>{localTime(e.timestamp)}</time>{' '}
                <span class="event">{String(e.event)}</span>
              </summary>
              <JsonTree value={e} />
            </details>
          </li>
        ))}
      </ol>
      <button type="button" disabled={busy || !at} onClick={wrap(() => extend('after', after, setAfter))}>
        Show {STEP} later
      </button>
      {after.done ? <span class="muted"> Nothing later yet.</span> : null}
    </main>
  );
}
