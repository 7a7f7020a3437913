/** Projects: every project the caller may see, and a form to create one in a group they own. */
import { useEffect, useState } from 'preact/hooks';
import { call, session } from '../api';
import { Card, ErrorLine, NewProjectFields } from '../components/form';
import { ownsGroup } from '../rights';
import { href, navigate } from '../router';
import { groups, loadScopes, projects, scopeError } from '../scope';
import { useSubmit } from '../submit';
import { ExploreLink } from '../components/table-cells';

export function ProjectsPage() {
  useEffect(() => void loadScopes(true), []);
  const me = session.value!;
  const list = projects.value;
  const groupName = (id: number) => groups.value?.find((g) => g.id === id)?.name ?? `group ${id}`;
  const ownGroups = (groups.value ?? []).filter((g) => ownsGroup(me, g.id));
  return (
    <main>
      <h1>Projects</h1>
      <ErrorLine message={scopeError.value} />
      {!list ? (
        <p role="status">Loading…</p>
      ) : list.length === 0 ? (
        <p class="empty">You see no project yet.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Group</th>
              <th scope="col">Logs</th>
            </tr>
          </thead>
          <tbody>
            {list.map((p) => (
              <tr key={p.id}>
                <td>
                  <a href={href('project', { id: String(p.id) })}>{p.name}</a>
                </td>
                <td>{groupName(p.group_id)}</td>
                <td>
                  <ExploreLink scope={{ project_id: String(p.id) }} name={p.name} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {ownGroups.length > 0 ? <NewProjectForm groups={ownGroups} /> : null}
    </main>
  );
}

function NewProjectForm(props: { groups: { id: number; name: string }[] }) {
  const [groupId, setGroupId] = useState(String(props.groups[0]!.id));
  const [name, setName] = useState('');
  const [retention, setRetention] = useState('30');
  const { submit, error } = useSubmit(async () => {
    const p = await call<{ id: number }>(`/v1/groups/${Number(groupId)}/projects`, {
      method: 'POST',
      json: { name, retention_days: Number(retention) },
    });
    await loadScopes(true);
    navigate('project', { id: String(p.id) });
  });
  return (
    <Card title="New project">
      <form onSubmit={submit}>
        <div class="field">
          <label for="f-new-project-group">Group</label>
          <select id="f-new-project-group" value={groupId} onChange={(e) => setGroupId((e.target as HTMLSelectElement).value)}>
            {props.groups.map((g) => (
              <option key={g.id} value={String(g.id)}>
                {g.name}
              </option>
            ))}
          </select>
        </div>
        <NewProjectFields prefix="new_project" name={name} onName={setName} retention={retention} onRetention={setRetention} error={error} />
      </form>
    </Card>
  );
}
