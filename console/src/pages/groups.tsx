/** Groups: those the caller sees, filtered by name and paged; administrators create new ones. */
import { useState } from 'preact/hooks';
import { call, session } from '../api';
import { Card, ErrorLine, Field } from '../components/form';
import { FilterRow, Pager } from '../components/list-controls';
import { useSubmit } from '../submit';
import { isAdmin } from '../rights';
import { href, navigate } from '../router';
import { usePagedList } from '../paged';
import { loadScopes, type Group } from '../scope';
import { ExploreLink } from '../components/table-cells';

export function GroupsPage() {
  const [filter, setFilter] = useState('');
  const [applied, setApplied] = useState('');
  const list = usePagedList<Group>('/v1/groups', 'name', applied);
  const page = list.page;
  return (
    <main>
      <h1>Groups</h1>
      <FilterRow
        label="Name contains"
        name="group_filter"
        value={filter}
        onInput={setFilter}
        onApply={() => {
          list.restart();
          setApplied(filter.trim());
        }}
      />
      <ErrorLine message={list.error} />
      {!page ? (
        <p role="status">Loading…</p>
      ) : page.items.length === 0 ? (
        <p class="empty">You see no group{applied ? ' of that name' : ''}.</p>
      ) : (
        <table class="list groups">
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">Logs</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((g) => (
              <tr key={g.id}>
                <td>
                  <a href={href('group', { id: String(g.id) })}>{g.name}</a>
                </td>
                <td>
                  <ExploreLink scope={{ group_id: String(g.id) }} name={g.name} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager back={list.back} next={list.next} />
      {isAdmin(session.value!) ? <NewGroupForm /> : null}
    </main>
  );
}

function NewGroupForm() {
  const [name, setName] = useState('');
  const { submit, error } = useSubmit(async () => {
    const g = await call<Group>('/v1/groups', { method: 'POST', json: { name } });
    await loadScopes(true);
    navigate('group', { id: String(g.id) });
  });
  return (
    <Card title="New group">
      <form onSubmit={submit}>
        <Field label="Group name" name="new_group_name" value={name} onInput={setName} required />
        <ErrorLine message={error} />
        <button type="submit" class="primary">
          Create group
        </button>
      </form>
    </Card>
  );
}
