/**
 * Context, as `grep -C` gives it: the entries just before and after one
 * entry in its project, whatever the query was, expandable both ways. One
 * order on both sides, time order (the entries' timestamps; the same
 * millisecond in the order stored): see context-walk.ts for why and how.
 * The data comes from `useContextWindow`.
 */
import { useEffect } from 'preact/hooks';
import { JsonTree } from '../components/json-tree';
import { entryMs } from '../entry-time';
import { localTime, utcTitle } from '../format';
import { CONTEXT_STEP, useContextWindow } from '../hooks/use-context-window';
import { href, route } from '../router';
import { loadScopes, projectName } from '../scope';

export function ContextPage() {
  const p = route.value.params;
  const projectId = p.get('project_id') ?? '';
  const id = Number(p.get('entry') ?? 0);
  const originMs = entryMs(p.get('ts'));
  useEffect(() => void loadScopes(), []);
  const { origin, before, after, error, missing, busy, placed, earlier, later } = useContextWindow(projectId, id, originMs, p.toString());
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
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {missing ? <p class="empty">Entry {id} is no longer stored (retention may have removed it); its neighbours are shown around its time.</p> : null}
      <button type="button" disabled={busy || before.done || !placed} onClick={earlier}>
        Show {CONTEXT_STEP} earlier
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
      <button type="button" disabled={busy || !placed} onClick={later}>
        Show {CONTEXT_STEP} later
      </button>
      {after.done ? <span class="muted"> Nothing later yet.</span> : null}
    </main>
  );
}
