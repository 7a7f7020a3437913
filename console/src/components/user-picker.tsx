/**
 * Choosing a person without typing an id. Administrators search every user
 * by part of the username (`GET /v1/users`). Owners may not list users, so
 * they choose among the people the group already knows: its teams' members
 * (and themselves); someone new is first added by an administrator.
 */
import { useState } from 'preact/hooks';
import { call } from '../api';
import type { Member } from '../org';
import { useSubmit } from '../submit';
import type { User } from '../users';
import { ErrorLine } from './form';

export function UserPicker(props: {
  /** Unique on the page: the fields' ids and labels derive from it. */
  id: string;
  label: string;
  canSearch: boolean;
  known: Member[];
  value: number | null;
  onChange: (userId: number | null) => void;
}) {
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<Member[] | null>(null);
  /** The search is its own action inside the surrounding form, with its own error line. */
  const { run: search, error } = useSubmit(async () => {
    const page = await call<{ items: User[] }>(`/v1/users?limit=50&username=${encodeURIComponent(query.trim())}`);
    const people = page.items.filter((u) => !u.deleted_at).map((u) => ({ user_id: u.id, username: u.username }));
    setFound(people);
    props.onChange(people[0]?.user_id ?? null);
  });
  const choices = props.canSearch ? found : props.known;
  return (
    <>
      {props.canSearch ? (
        <div class="filter-row">
          <div class="field">
            <label for={`${props.id}-q`}>Find user (username contains)</label>
            <input
              id={`${props.id}-q`}
              value={query}
              onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
              onKeyDown={(e) => {
                // Enter searches here instead of submitting the surrounding form.
                if (e.key === 'Enter') {
                  e.preventDefault();
                  void search();
                }
              }}
            />
          </div>
          <div class="field actions">
            <button type="button" onClick={() => void search()}>
              Search
            </button>
          </div>
        </div>
      ) : null}
      <ErrorLine message={error} />
      {choices === null ? null : choices.length === 0 ? (
        <p class="hint">{props.canSearch ? 'No user matches.' : 'No one known yet: an administrator adds new people to the group.'}</p>
      ) : (
        <div class="field">
          <label for={`${props.id}-user`}>{props.label}</label>
          <select
            id={`${props.id}-user`}
            value={props.value === null ? '' : String(props.value)}
            onChange={(e) => {
              const v = (e.target as HTMLSelectElement).value;
              props.onChange(v ? Number(v) : null);
            }}
          >
            {props.canSearch ? null : <option value="">Choose…</option>}
            {choices.map((m) => (
              <option key={m.user_id} value={String(m.user_id)}>
                {m.username}
              </option>
            ))}
          </select>
          {props.canSearch ? null : <p class="hint">People in this group's teams; only administrators search all users.</p>}
        </div>
      )}
    </>
  );
}
