/**
 * Correlate: every entry sharing one correlation value across the projects
 * of a group (or one project), oldest first as a timeline, with the time
 * between entries shown and long gaps marked.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import type { Page } from '../api-types';
import type { Entry } from '../components/entry-detail';
import { JsonTree } from '../components/json-tree';
import { duration, localTime, utcTitle } from '../format';
import { CORRELATION_FIELDS } from '../query';
import { href, route } from '../router';
import { loadScopes, projectName } from '../scope';

/** Most entries one timeline reads. */
const CAP = 2000;
/** A pause this long between neighbours is marked as a gap. */
const GAP_MS = 1000;

export function CorrelatePage() {
  const p = route.value.params;
  const field = p.get('field') ?? '';
  const value = p.get('value') ?? '';
  const origin = Number(p.get('entry') ?? 0);
  const scope: Record<string, string> = p.get('group_id') ? { group_id: p.get('group_id')! } : { project_id: p.get('project_id') ?? '' };
  const [items, setItems] = useState<Entry[] | null>(null);
  const [capped, setCapped] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const valid = (CORRELATION_FIELDS as readonly string[]).includes(field) && value !== '';
  useEffect(() => void loadScopes(), []);
  useEffect(() => {
    if (!valid) return;
    let cancelled = false;
    (async () => {
      const all: Entry[] = [];
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ ...scope, [field]: value, limit: '200' });
        if (cursor) q.set('cursor', cursor);
        const page: Page<Entry> = await call(`/v1/logs?${q}`);
        all.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor && all.length < CAP && !cancelled);
      if (cancelled) return;
      setCapped(Boolean(cursor));
      all.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.id - b.id);
      setItems(all);
    })().catch((err: Error) => setError(err.message));
    return () => {
      cancelled = true;
    };
  }, [p.toString()]);
  const projectCount = new Set((items ?? []).map((e) => e.project_id)).size;
  return (
    <main>
      <h1>
        Correlated by {field} = <code>{value}</code>
      </h1>
      <p>
        <a href={href('explore', { ...scope, [field]: value })}>Open as a query</a>
      </p>
      {!valid ? <p class="error" role="alert">Choose a correlation field and value from an entry.</p> : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {items ? (
        <p role="status">
          {items.length} entries in {projectCount} project{projectCount === 1 ? '' : 's'}, oldest first
          {items.length > 1 ? `, over ${duration(Date.parse(items[items.length - 1]!.timestamp) - Date.parse(items[0]!.timestamp))}` : ''}
          {capped ? ` (the first ${CAP} only)` : ''}.
        </p>
      ) : valid && !error ? (
        <p role="status">Loading…</p>
      ) : null}
      <ol class="timeline">
        {(items ?? []).map((e, i) => {
          const gap = i === 0 ? 0 : Date.parse(e.timestamp) - Date.parse(items![i - 1]!.timestamp);
          return (
            <>
              {i > 0 && gap >= GAP_MS ? (
                <li class="gap" aria-label={`${duration(gap)} later`}>
                  … {duration(gap)} later
                </li>
              ) : null}
              <li class={`tl-entry${e.id === origin ? ' origin' : ''}`}>
                <details>
                  <summary>
                    <span class={`lvl lvl-${e.level}`}>{e.level}</span> <time title={utcTitle(e.timestamp)}>{localTime(e.timestamp)}</time>
                    {i > 0 && gap < GAP_MS ? <span class="muted"> +{duration(gap)}</span> : null} <span class="proj">{projectName(e.project_id)}</span>{' '}
                    <span class="event">{String(e.event)}</span>
                  </summary>
                  <JsonTree value={e} />
                </details>
              </li>
            </>
          );
        })}
      </ol>
    </main>
  );
}
