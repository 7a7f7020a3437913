/**
 * The audit page's filters, each one of `GET /v1/audit-log`'s: action,
 * actor (typed as a username, kept in the URL as `actor_user_id`), target
 * type and id, and a time range (local in the form, ISO UTC in the URL).
 */
import { useEffect, useState } from 'preact/hooks';
import { ACTION_LABELS, AUDIT_ACTIONS, TARGET_TYPES } from '../audit-words';
import { auditNames, knownUsernames, userIdByName } from '../audit-names';
import { ErrorLine } from './form';

/** The URL parameters that are filters (the same names as the service's). */
export const AUDIT_FILTERS = ['action', 'actor_user_id', 'target_type', 'target_id', 'from', 'to'] as const;

const pad = (n: number) => String(n).padStart(2, '0');
/** `datetime-local` is local time; the URL holds ISO UTC. */
function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
const fromLocalInput = (v: string) => (v ? new Date(v).toISOString() : '');

interface Draft {
  action: string;
  actor: string;
  targetType: string;
  targetId: string;
  from: string;
  to: string;
}

function draftOf(p: URLSearchParams): Draft {
  const actorId = Number(p.get('actor_user_id') ?? 0);
  return {
    action: p.get('action') ?? '',
    actor: actorId ? (auditNames('user', actorId) ?? `#${actorId}`) : '',
    targetType: p.get('target_type') ?? '',
    targetId: p.get('target_id') ?? '',
    from: toLocalInput(p.get('from')),
    to: toLocalInput(p.get('to')),
  };
}

/** `#12` or a username; null when no such user is known. */
function actorIdOf(text: string): number | null {
  const byId = /^#(\d+)$/.exec(text);
  if (byId) return Number(byId[1]);
  return userIdByName(text) ?? null;
}

export function AuditFilters(props: { params: URLSearchParams; namesReady: boolean; onSubmit: (p: URLSearchParams) => void }) {
  const [d, setD] = useState<Draft>(() => draftOf(props.params));
  const [error, setError] = useState<string | null>(null);
  const key = props.params.toString();
  // The URL changed (back button, a link) or the names arrived: the form follows.
  useEffect(() => setD(draftOf(props.params)), [key, props.namesReady]);
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const submit = (e: Event) => {
    e.preventDefault();
    const p = new URLSearchParams();
    if (d.action) p.set('action', d.action);
    const actor = d.actor.trim();
    if (actor) {
      const id = actorIdOf(actor);
      if (id === null) {
        setError(`No user is named ${actor}.`);
        return;
      }
      p.set('actor_user_id', String(id));
    }
    if (d.targetType) p.set('target_type', d.targetType);
    if (d.targetId.trim()) p.set('target_id', d.targetId.trim());
    if (d.from) p.set('from', fromLocalInput(d.from));
    if (d.to) p.set('to', fromLocalInput(d.to));
    setError(null);
    props.onSubmit(p);
  };
  return (
    <form class="filters audit-filters" role="search" aria-label="Audit log filters" onSubmit={submit}>
      <div class="filter-row">
        <div class="field">
          <label for="f-audit-action">Action</label>
          <select id="f-audit-action" value={d.action} onChange={(e) => set({ action: (e.target as HTMLSelectElement).value })}>
            <option value="">Any action</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {ACTION_LABELS[a]}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-audit-actor">Actor (username)</label>
          <input id="f-audit-actor" list="audit-usernames" value={d.actor} onInput={(e) => set({ actor: (e.target as HTMLInputElement).value })} />
          <datalist id="audit-usernames">
            {knownUsernames().map((u) => (
              <option key={u} value={u} />
            ))}
          </datalist>
        </div>
        <div class="field">
          <label for="f-audit-target-type">Target</label>
          <select id="f-audit-target-type" value={d.targetType} onChange={(e) => set({ targetType: (e.target as HTMLSelectElement).value })}>
            <option value="">Any target</option>
            {TARGET_TYPES.map((t) => (
              <option key={t} value={t}>
                {t.replace('_', ' ')}
              </option>
            ))}
          </select>
        </div>
        <div class="field narrow-input">
          <label for="f-audit-target-id">Target id</label>
          <input id="f-audit-target-id" inputMode="numeric" value={d.targetId} onInput={(e) => set({ targetId: (e.target as HTMLInputElement).value })} />
        </div>
      </div>
      <div class="filter-row">
        <div class="field">
          <label for="f-audit-from">From</label>
          <input id="f-audit-from" type="datetime-local" step="1" value={d.from} onInput={(e) => set({ from: (e.target as HTMLInputElement).value })} />
        </div>
        <div class="field">
          <label for="f-audit-to">To</label>
          <input id="f-audit-to" type="datetime-local" step="1" value={d.to} onInput={(e) => set({ to: (e.target as HTMLInputElement).value })} />
        </div>
        <div class="field actions">
          <button type="submit" class="primary">
            Filter
          </button>
          <button type="button" onClick={() => props.onSubmit(new URLSearchParams())}>
            Clear
          </button>
        </div>
      </div>
      <ErrorLine message={error} />
    </form>
  );
}
