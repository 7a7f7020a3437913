/**
 * The query form: scope (a project or a whole group, only those the caller
 * sees), level, time range (presets or absolute), category, logger, the
 * correlation fields, `q` and any number of `context.<path>=value`.
 * Submitting puts the query in the URL; the page reads it from there.
 * Choosing a project or group submits at once (with the rest of the form as
 * it stands); the other fields wait for Search. A scope in the link that is
 * not among the caller's is still shown, by number, so the picker never
 * reads blank while the page says why it is refused.
 */
import { useEffect, useState } from 'preact/hooks';
import { groups, projects } from '../scope';
import { CORRELATION_FIELDS, LEVELS, RANGE_PRESETS } from '../query';

interface Draft {
  scope: string;
  level: string;
  range: string;
  from: string;
  to: string;
  q: string;
  exact: Record<string, string>;
  context: { path: string; value: string }[];
}

/** `datetime-local` works in local time without seconds' zone; the URL holds ISO UTC. */
function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
}
function fromLocalInput(v: string): string {
  return v ? new Date(v).toISOString() : '';
}

function draftOf(p: URLSearchParams): Draft {
  const exact: Record<string, string> = {};
  for (const f of ['category', 'logger', ...CORRELATION_FIELDS]) exact[f] = p.get(f) ?? '';
  const context = [...p].filter(([k]) => k.startsWith('context.')).map(([k, value]) => ({ path: k.slice(8), value }));
  return {
    scope: p.get('project_id') ? `p:${p.get('project_id')}` : p.get('group_id') ? `g:${p.get('group_id')}` : '',
    level: p.get('level') ?? '',
    range: p.get('range') ?? (p.get('from') || p.get('to') ? 'custom' : ''),
    from: toLocalInput(p.get('from')),
    to: toLocalInput(p.get('to')),
    q: p.get('q') ?? '',
    exact,
    context,
  };
}

function paramsOf(d: Draft, keep: URLSearchParams): URLSearchParams {
  const p = new URLSearchParams();
  if (d.scope.startsWith('p:')) p.set('project_id', d.scope.slice(2));
  if (d.scope.startsWith('g:')) p.set('group_id', d.scope.slice(2));
  if (d.level) p.set('level', d.level);
  if (d.range === 'custom') {
    if (d.from) p.set('from', fromLocalInput(d.from));
    if (d.to) p.set('to', fromLocalInput(d.to));
  } else if (d.range) p.set('range', d.range);
  if (d.q.trim()) p.set('q', d.q.trim());
  for (const [k, v] of Object.entries(d.exact)) if (v.trim()) p.set(k, v.trim());
  for (const c of d.context) if (c.path.trim() && c.value !== '') p.append(`context.${c.path.trim()}`, c.value);
  if (keep.get('live')) p.set('live', keep.get('live')!);
  return p;
}

export function FilterBar(props: { params: URLSearchParams; onSubmit: (p: URLSearchParams) => void }) {
  const [d, setD] = useState<Draft>(() => draftOf(props.params));
  const [more, setMore] = useState(() => CORRELATION_FIELDS.some((f) => props.params.get(f)));
  useEffect(() => setD(draftOf(props.params)), [props.params.toString()]);
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const setExact = (k: string, v: string) => set({ exact: { ...d.exact, [k]: v } });
  const submit = (e: Event) => {
    e.preventDefault();
    props.onSubmit(paramsOf(d, props.params));
  };
  const visibleGroups = groups.value ?? [];
  const visibleProjects = projects.value ?? [];
  const chooseScope = (scope: string) => {
    const next = { ...d, scope };
    setD(next);
    if (scope) props.onSubmit(paramsOf(next, props.params));
  };
  const listed = visibleProjects.some((p) => d.scope === `p:${p.id}`) || visibleGroups.some((g) => d.scope === `g:${g.id}`);
  const known = groups.value !== null && projects.value !== null;
  const unlisted = d.scope && !listed ? `${d.scope.startsWith('p:') ? 'project' : 'group'} ${d.scope.slice(2)}${known ? ' (not one of yours)' : ''}` : null;
  return (
    <form class="filters" onSubmit={submit} role="search" aria-label="Log query">
      <div class="filter-row">
        <div class="field">
          <label for="f-scope">Project or group</label>
          <select id="f-scope" value={d.scope} onChange={(e) => chooseScope((e.target as HTMLSelectElement).value)}>
            <option value="">Choose…</option>
            {unlisted ? <option value={d.scope}>{unlisted}</option> : null}
            {visibleProjects.length ? (
              <optgroup label="Projects">
                {visibleProjects.map((p) => (
                  <option value={`p:${p.id}`}>{p.name}</option>
                ))}
              </optgroup>
            ) : null}
            {visibleGroups.length ? (
              <optgroup label="Whole groups">
                {visibleGroups.map((g) => (
                  <option value={`g:${g.id}`}>{g.name} (all projects)</option>
                ))}
              </optgroup>
            ) : null}
          </select>
        </div>
        <div class="field grow">
          <label for="f-q">Search words</label>
          <input id="f-q" type="search" value={d.q} placeholder="words, or a prefix* " onInput={(e) => set({ q: (e.target as HTMLInputElement).value })} />
        </div>
        <div class="field">
          <label for="f-level">Level at least</label>
          <select id="f-level" value={d.level} onChange={(e) => set({ level: (e.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            {LEVELS.map((l) => (
              <option value={l}>{l}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-range">Time</label>
          <select id="f-range" value={d.range} onChange={(e) => set({ range: (e.target as HTMLSelectElement).value })}>
            <option value="">Any time</option>
            {Object.entries(RANGE_PRESETS).map(([k, v]) => (
              <option value={k}>{v.label}</option>
            ))}
            <option value="custom">Between…</option>
          </select>
        </div>
        {d.range === 'custom' ? (
          <>
            <div class="field">
              <label for="f-from">From (local)</label>
              <input id="f-from" type="datetime-local" step="1" value={d.from} onInput={(e) => set({ from: (e.target as HTMLInputElement).value })} />
            </div>
            <div class="field">
              <label for="f-to">To (local)</label>
              <input id="f-to" type="datetime-local" step="1" value={d.to} onInput={(e) => set({ to: (e.target as HTMLInputElement).value })} />
            </div>
          </>
        ) : null}
        <div class="field actions">
          <button type="submit" class="primary">
            Search
          </button>
        </div>
      </div>
      <div class="filter-row">
        {(['category', 'logger'] as const).map((f) => (
          <div class="field">
            <label for={`f-${f}`}>{f}</label>
            <input id={`f-${f}`} value={d.exact[f]} onInput={(e) => setExact(f, (e.target as HTMLInputElement).value)} />
          </div>
        ))}
        {d.context.map((c, i) => (
          <div class="field context-field">
            <label for={`f-ctx-${i}`}>context.</label>
            <span class="pair">
              <input
                id={`f-ctx-${i}`}
                aria-label={`Context path ${i + 1}`}
                placeholder="path.to.key"
                value={c.path}
                onInput={(e) => set({ context: d.context.map((x, j) => (j === i ? { ...x, path: (e.target as HTMLInputElement).value } : x)) })}
              />
              <span aria-hidden="true">=</span>
              <input
                aria-label={`Context value ${i + 1}`}
                placeholder="value"
                value={c.value}
                onInput={(e) => set({ context: d.context.map((x, j) => (j === i ? { ...x, value: (e.target as HTMLInputElement).value } : x)) })}
              />
              <button
                type="button"
                class="small"
                aria-label={`Remove context filter ${i + 1}`}
                onClick={() => set({ context: d.context.filter((_, j) => j !== i) })}
              >
                ×
              </button>
            </span>
          </div>
        ))}
        <div class="field actions">
          <button type="button" onClick={() => set({ context: [...d.context, { path: '', value: '' }] })}>
            Add context filter
          </button>
          <button type="button" aria-expanded={more} onClick={() => setMore(!more)}>
            {more ? 'Fewer filters' : 'Correlation filters'}
          </button>
        </div>
      </div>
      {more ? (
        <div class="filter-row">
          {CORRELATION_FIELDS.map((f) => (
            <div class="field">
              <label for={`f-${f}`}>{f}</label>
              <input id={`f-${f}`} value={d.exact[f]} onInput={(e) => setExact(f, (e.target as HTMLInputElement).value)} />
            </div>
          ))}
        </div>
      ) : null}
    </form>
  );
}
