/**
 * Correlate: every entry sharing one correlation value across the projects
 * of a group (or one project), oldest first as a timeline, with the time
 * between entries shown and long gaps marked. The data comes from
 * `useCorrelation`.
 */
import { useEffect } from 'preact/hooks';
import { JsonTree } from '../components/json-tree';
import { duration, localTime, utcTitle } from '../format';
import { CORRELATION_CAP, useCorrelation } from '../hooks/use-correlation';
import { CORRELATION_FIELDS } from '../query';
import { href, route } from '../router';
import { loadScopes, projectName } from '../scope';

/** A pause this long between neighbours is marked as a gap. */
const GAP_MS = 1000;

export function CorrelatePage() {
  const p = route.value.params;
  const field = p.get('field') ?? '';
  const value = p.get('value') ?? '';
  const origin = Number(p.get('entry') ?? 0);
  const scope: Record<string, string> = p.get('group_id') ? { group_id: p.get('group_id')! } : { project_id: p.get('project_id') ?? '' };
  const valid = (CORRELATION_FIELDS as readonly string[]).includes(field) && value !== '';
  useEffect(() => void loadScopes(), []);
  const { items, capped, error } = useCorrelation(scope, field, value, valid, p.toString());
  const projectCount = new Set((items ?? []).map((e) => e.project_id)).size;
  return (
    <main>
      <h1>
        Correlated by {field} = <code>{value}</code>
      </h1>
      <p>
        <a href={href('explore', { ...scope, [field]: value })}>Open as a query</a>
      </p>
      {!valid ? (
        <p class="error" role="alert">
          Choose a correlation field and value from an entry.
        </p>
      ) : null}
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {items ? (
        <p role="status">
          {items.length} entries in {projectCount} project{projectCount === 1 ? '' : 's'}, oldest first
          {items.length > 1 ? `, over ${duration(Date.parse(items[items.length - 1]!.timestamp) - Date.parse(items[0]!.timestamp))}` : ''}
          {capped ? ` (the first ${CORRELATION_CAP} only)` : ''}.
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
