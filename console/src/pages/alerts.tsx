/**
 * Saved searches and their alert rules. `#/alerts` lists the searches the
 * caller may read (open one in Explore, delete one's own);
 * `#/alerts?search=ID` shows one search's rules: what each does and where
 * it stands in words, its last notifications with their delivery, and for
 * owners a form to create a rule (with an optional webhook, Slack or
 * e-mail destination; a webhook's signing secret is shown once).
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import type { AlertNotification, AlertRule, Page, SavedSearch } from '../api-types';
import { deliveryWords, notificationWords, ruleState, ruleSummary } from '../alert-words';
import { Card, ErrorLine, Field } from '../components/form';
import { ConfirmButton } from '../components/confirm';
import { errorText } from '../errors';
import { localTime } from '../format';
import { ownsGroup } from '../rights';
import { href, navigate, route } from '../router';
import { groupOfProject, groups, loadScopes, projectName } from '../scope';
import { session } from '../api';
import { useSubmit } from '../submit';

function scopeWords(s: SavedSearch): string {
  if (s.project_id !== null) return `project ${projectName(s.project_id)}`;
  const name = groups.value?.find((g) => g.id === s.group_id)?.name;
  return `group ${name ?? `#${s.group_id}`}`;
}

function exploreLink(s: SavedSearch): string {
  const params = new URLSearchParams(s.query);
  if (s.project_id !== null) params.set('project_id', String(s.project_id));
  else params.set('group_id', String(s.group_id));
  return href('explore', params);
}

export function AlertsPage() {
  const searchId = Number(route.value.params.get('search') ?? 0);
  useEffect(() => void loadScopes(), []);
  return searchId ? <SearchPage id={searchId} /> : <SearchList />;
}

function SearchList() {
  const [items, setItems] = useState<SavedSearch[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    call<Page<SavedSearch>>('/v1/saved-searches?limit=200')
      .then((p) => setItems(p.items))
      .catch((err: unknown) => setError(errorText(err)));
  useEffect(() => void load(), []);
  return (
    <main>
      <h1>Saved searches and alerts</h1>
      <ErrorLine message={error} />
      {!items ? (
        <p role="status">Loading…</p>
      ) : items.length === 0 ? (
        <p class="empty">No saved search yet. Save one from Explore with “Save search”.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Search</th>
              <th scope="col">Scope</th>
              <th scope="col">Filters</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={href('alerts', { search: String(s.id) })}>{s.name}</a>
                </td>
                <td>{scopeWords(s)}</td>
                <td>
                  <code>{s.query || 'every entry'}</code>
                </td>
                <td>
                  <a href={exploreLink(s)}>
                    Open in Explore<span class="visually-hidden"> {s.name}</span>
                  </a>{' '}
                  {s.can_change ? (
                    <ConfirmButton
                      label="Delete"
                      question={`Delete saved search ${s.name} and its alert rules?`}
                      confirmLabel="Yes, delete"
                      onConfirm={() => call(`/v1/saved-searches/${s.id}`, { method: 'DELETE' }).then(load, (err: unknown) => setError(errorText(err)))}
                    />
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

function SearchPage(props: { id: number }) {
  const [search, setSearch] = useState<SavedSearch | null>(null);
  const [rules, setRules] = useState<AlertRule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const load = async () => {
    try {
      setSearch(await call<SavedSearch>(`/v1/saved-searches/${props.id}`));
      setRules((await call<Page<AlertRule>>(`/v1/alert-rules?saved_search_id=${props.id}&limit=200`)).items);
    } catch (err) {
      setError(errorText(err));
    }
  };
  useEffect(() => void load(), [props.id]);
  const me = session.value!;
  const groupId = search ? (search.project_id !== null ? groupOfProject(search.project_id) : search.group_id) : null;
  const mayCreate = groupId !== null && ownsGroup(me, groupId);
  return (
    <main>
      <p>
        <a href={href('alerts')}>All saved searches</a>
      </p>
      <h1>{search ? search.name : 'Saved search'}</h1>
      <ErrorLine message={error} />
      {search ? (
        <p>
          Entries of {scopeWords(search)} matching <code>{search.query || 'anything'}</code>. <a href={exploreLink(search)}>Open in Explore</a>
        </p>
      ) : null}
      <h2>Alert rules</h2>
      {!rules ? (
        <p role="status">Loading…</p>
      ) : rules.length === 0 ? (
        <p class="empty">No alert rule on this search.</p>
      ) : (
        rules.map((r) => <RuleCard key={r.id} rule={r} onChanged={load} />)
      )}
      {secret ? (
        <div class="shown-once" role="status">
          <p>
            The webhook's signing secret, shown this once: verify each delivery's <code>X-Logkeep-Signature</code> with it.
          </p>
          <code>{secret}</code>
        </div>
      ) : null}
      {search && mayCreate ? (
        <NewRuleForm
          searchId={search.id}
          onCreated={(s) => {
            setSecret(s);
            void load();
          }}
        />
      ) : null}
    </main>
  );
}

function RuleCard(props: { rule: AlertRule; onChanged: () => void }) {
  const r = props.rule;
  const [notes, setNotes] = useState<AlertNotification[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    call<Page<AlertNotification>>(`/v1/alert-rules/${r.id}/notifications?limit=5`)
      .then((p) => setNotes(p.items))
      .catch((err: unknown) => setError(errorText(err)));
  }, [r.id, r.state_since, r.updated_at]);
  return (
    <Card title={r.name}>
      <p>{ruleSummary(r)}</p>
      <p class={`rule-state rule-${r.enabled && !r.paused_reason ? r.state : 'paused'}`}>{ruleState(r, localTime(r.state_since))}</p>
      <p>
        {r.destination
          ? `Sends to ${r.destination.type === 'email' ? 'e-mail' : r.destination.type === 'slack' ? 'Slack' : 'a webhook'}: ${r.destination.label}`
          : 'Sends nowhere: notifications are only recorded here.'}
      </p>
      <ErrorLine message={error} />
      <h3>Last notifications</h3>
      {!notes ? (
        <p role="status">Loading…</p>
      ) : notes.length === 0 ? (
        <p class="empty">None yet.</p>
      ) : (
        <ul class="notifications">
          {notes.map((n) => (
            <li key={n.id}>
              <strong>{notificationWords(n)}</strong> ({localTime(n.window_start)} to {localTime(n.window_end)}). {deliveryWords(n.delivery, localTime)}
            </li>
          ))}
        </ul>
      )}
      {r.can_change ? (
        <ConfirmButton
          label="Delete rule"
          question={`Delete alert rule ${r.name}?`}
          confirmLabel="Yes, delete"
          onConfirm={() => call(`/v1/alert-rules/${r.id}`, { method: 'DELETE' }).then(props.onChanged, (err: unknown) => setError(errorText(err)))}
        />
      ) : null}
    </Card>
  );
}

function NewRuleForm(props: { searchId: number; onCreated: (secret: string | null) => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'any_match' | 'threshold'>('any_match');
  const [minutes, setMinutes] = useState('5');
  const [threshold, setThreshold] = useState('10');
  const [destType, setDestType] = useState<'none' | 'webhook' | 'slack' | 'email'>('none');
  const [target, setTarget] = useState('');
  const { submit, error } = useSubmit(async () => {
    const seconds = Math.round(Number(minutes) * 60);
    const destination =
      destType === 'none'
        ? null
        : destType === 'email'
          ? {
              type: destType,
              to: target
                .split(',')
                .map((a) => a.trim())
                .filter(Boolean),
            }
          : { type: destType, url: target.trim() };
    const created = await call<AlertRule>('/v1/alert-rules', {
      method: 'POST',
      json: {
        saved_search_id: props.searchId,
        name,
        kind,
        ...(kind === 'any_match' ? { quiet_seconds: seconds } : { window_seconds: seconds, threshold: Number(threshold) }),
        destination,
      },
    });
    setName('');
    props.onCreated(created.destination?.secret ?? null);
  });
  return (
    <Card title="New alert rule">
      <form onSubmit={submit}>
        <Field label="Rule name" name="rule_name" value={name} onInput={setName} required />
        <div class="field">
          <label for="f-rule-kind">Notify</label>
          <select id="f-rule-kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as 'any_match' | 'threshold')}>
            <option value="any_match">At the first match, then at most once per quiet period</option>
            <option value="threshold">When a number of matches within a window is reached</option>
          </select>
        </div>
        <Field
          label={kind === 'any_match' ? 'Quiet period (minutes)' : 'Window (minutes)'}
          name="rule_minutes"
          value={minutes}
          onInput={setMinutes}
          required
          hint="1 minute to 1,440 minutes (a day)."
        />
        {kind === 'threshold' ? <Field label="Matches that fire it" name="rule_threshold" value={threshold} onInput={setThreshold} required /> : null}
        <div class="field">
          <label for="f-rule-destination">Send to</label>
          <select id="f-rule-destination" value={destType} onChange={(e) => setDestType((e.target as HTMLSelectElement).value as 'none')}>
            <option value="none">Nowhere (record only)</option>
            <option value="webhook">A webhook (signed JSON)</option>
            <option value="slack">A Slack incoming webhook</option>
            <option value="email">E-mail</option>
          </select>
        </div>
        {destType !== 'none' ? (
          <Field label={destType === 'email' ? 'Addresses (comma-separated)' : 'URL'} name="rule_target" value={target} onInput={setTarget} required />
        ) : null}
        <ErrorLine message={error} />
        <button type="submit" class="primary">
          Create rule
        </button>
      </form>
    </Card>
  );
}

/** Explore's "Save search": the current filters (not the time range) under a name. */
export function SaveSearch(props: { params: URLSearchParams; filters: URLSearchParams }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const { submit, error } = useSubmit(async () => {
    const query = new URLSearchParams(props.filters);
    for (const k of ['project_id', 'group_id', 'from', 'to']) query.delete(k);
    const scope = props.params.get('project_id') ? { project_id: Number(props.params.get('project_id')) } : { group_id: Number(props.params.get('group_id')) };
    const saved = await call<SavedSearch>('/v1/saved-searches', { method: 'POST', json: { name, ...scope, query: query.toString() } });
    navigate('alerts', { search: String(saved.id) });
  });
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Save search
      </button>
    );
  }
  return (
    <form class="save-search" onSubmit={submit} aria-label="Save search">
      <label for="f-save-search-name">Name</label>
      <input id="f-save-search-name" value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <span class="hint">The filters are saved; the time range is not.</span>
      <button type="submit" class="primary">
        Save
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <ErrorLine message={error} />
    </form>
  );
}
