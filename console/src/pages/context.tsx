/**
 * Context, as `grep -C` gives it: the entries just before and after one
 * entry in its project, whatever the query was, expandable both ways.
 * Before: the newest entries up to its timestamp. After: the live stream
 * replays stored entries with a larger id, oldest first, and is closed
 * once it has given enough (or gone quiet).
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import type { Entry } from '../components/entry-detail';
import { JsonTree } from '../components/json-tree';
import { localTime, utcTitle } from '../format';
import { followLive } from '../live';
import { href, route } from '../router';
import { loadScopes, projectName } from '../scope';

const STEP = 20;

function afterEntries(projectId: string, sinceId: number, count: number): Promise<Entry[]> {
  return new Promise((resolve) => {
    const got: Entry[] = [];
    let quiet: ReturnType<typeof setTimeout> | null = null;
    const done = () => {
      if (quiet) clearTimeout(quiet);
      stream.close();
      resolve(got.slice(0, count));
    };
    const stream = followLive(new URLSearchParams({ project_id: projectId }), sinceId, {
      onEntries(entries) {
        got.push(...(entries as Entry[]));
        if (got.length >= count) done();
        else {
          if (quiet) clearTimeout(quiet);
          quiet = setTimeout(done, 400);
        }
      },
      onState(state) {
        if (state === 'live') quiet = setTimeout(done, 600);
        if (state === 'ended') done();
      },
    });
  });
}

export function ContextPage() {
  const p = route.value.params;
  const projectId = p.get('project_id') ?? '';
  const id = Number(p.get('entry') ?? 0);
  const ts = p.get('ts') ?? '';
  const [before, setBefore] = useState<Entry[]>([]);
  const [beforeCursor, setBeforeCursor] = useState<string | null>(null);
  const [after, setAfter] = useState<Entry[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => void loadScopes(), []);

  const loadBefore = async (cursor: string | null) => {
    const q = new URLSearchParams({ project_id: projectId, to: ts, limit: String(STEP + 1) });
    if (cursor) q.set('cursor', cursor);
    const page = await call<{ items: Entry[]; next_cursor: string | null }>(`/v1/logs?${q}`);
    setBefore((old) => [...old, ...page.items.filter((e) => e.id <= id && !old.some((o) => o.id === e.id))]);
    setBeforeCursor(page.next_cursor);
  };
  const loadAfter = async (from: number) => {
    const more = await afterEntries(projectId, from, STEP);
    setAfter((old) => [...old, ...more]);
  };
  useEffect(() => {
    setBefore([]);
    setAfter([]);
    setError(null);
    Promise.all([loadBefore(null), loadAfter(id)]).catch((err: Error) => setError(err.message));
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
  const rows = [...after].reverse().concat(before);
  const ordered = [...rows].reverse();
  return (
    <main>
      <h1>Context of entry {id}</h1>
      <p>
        In {projectName(Number(projectId))}, whatever the query. <a href={href('explore', { project_id: projectId })}>Explore this project</a>
      </p>
      {error ? <p class="error" role="alert">{error}</p> : null}
      <button type="button" disabled={busy || !beforeCursor} onClick={wrap(() => loadBefore(beforeCursor))}>
        Show {STEP} earlier
      </button>
      <ol class="timeline">
        {ordered.map((e) => (
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
      <button type="button" disabled={busy} onClick={wrap(() => loadAfter(after.length ? after[after.length - 1]!.id : id))}>
        Show {STEP} later
      </button>
    </main>
  );
}
