/** Groups: those the caller sees, filtered by name and paged; administrators create new ones. */
import { useEffect, useState } from 'preact/hooks';
import { call, session } from '../api';
import { Card, ErrorLine, Field } from '../components/form';
import { errorText } from '../errors';
import { isAdmin } from '../rights';
import { href, navigate } from '../router';
import { loadScopes, type Group } from '../scope';

interface GroupPage {
  items: Group[];
  next_cursor: string | null;
}

const PAGE_SIZE = 50;

export function GroupsPage() {
  const [filter, setFilter] = useState('');
  const [applied, setApplied] = useState('');
  /** The cursors of the pages before this one (the first is null), for going back. */
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<GroupPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = cursors[cursors.length - 1] ?? null;
  useEffect(() => {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (applied) q.set('name', applied);
    if (cursor) q.set('cursor', cursor);
    call<GroupPage>(`/v1/groups?${q}`).then(
      (p) => {
        setPage(p);
        setError(null);
      },
      (err) => setError(errorText(err)),
    );
  }, [applied, cursor]);
  return (
    <main>
      <h1>Groups</h1>
      <form
        class="filter-row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setCursors([null]);
          setApplied(filter.trim());
        }}
      >
        <Field label="Name contains" name="group_filter" value={filter} onInput={setFilter} />
        <div class="field actions"><button type="submit">Filter</button></div>
      </form>
      <ErrorLine message={error} />
      {!page ? <p role="status">Loading…</p> : page.items.length === 0 ? <p class="empty">You see no group{applied ? ' of that name' : ''}.</p> : (
        <table class="list groups">
          <thead><tr><th scope="col">Group</th><th scope="col">Logs</th></tr></thead>
          <tbody>
            {page.items.map((g) => (
              <tr key={g.id}>
                <td><a href={href('group', { id: String(g.id) })}>{g.name}</a></td>
                <td><a href={href('explore', { group_id: String(g.id) })}>Explore<span class="visually-hidden"> {g.name}</span></a></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="pager">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button>{' '}
        <button type="button" disabled={!page?.next_cursor} onClick={() => setCursors([...cursors, page!.next_cursor])}>Next page</button>
      </p>
      {isAdmin(session.value!) ? <NewGroupForm /> : null}
    </main>
  );
}

function NewGroupForm() {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const g = await call<Group>('/v1/groups', { method: 'POST', json: { name } });
      await loadScopes(true);
      navigate('group', { id: String(g.id) });
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Card title="New group">
      <form onSubmit={submit}>
        <Field label="Group name" name="new_group_name" value={name} onInput={setName} required />
        <ErrorLine message={error} />
        <button type="submit" class="primary">Create group</button>
      </form>
    </Card>
  );
}
