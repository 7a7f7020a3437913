/** Groups: those the caller sees, filtered by name and paged; administrators create new ones. */
import { useState } from 'preact/hooks';
import { session } from '../api';
import { ErrorLine } from '../components/form';
import { FilterRow, Pager } from '../components/list-controls';
import { NewGroupForm } from '../components/new-group';
import { isAdmin } from '../rights';
import { href, navigate } from '../router';
import { usePagedList } from '../paged';
import type { Group } from '../scope';
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
      {isAdmin(session.value!) ? (
        <NewGroupForm title="New group" fieldName="new_group_name" onCreated={(g) => navigate('group', { id: String(g.id) })} />
      ) : null}
    </main>
  );
}
