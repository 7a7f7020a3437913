/** A group's projects, each linking to its page and to its logs. */
import { href } from '../router';
import type { Project } from '../scope';
import { ExploreLink } from './table-cells';

export function GroupProjects(props: { projects: Project[] }) {
  if (props.projects.length === 0) return <p class="empty">No project in this group yet.</p>;
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Project</th>
          <th scope="col">Logs</th>
        </tr>
      </thead>
      <tbody>
        {props.projects.map((p) => (
          <tr key={p.id}>
            <td>
              <a href={href('project', { id: String(p.id) })}>{p.name}</a>
            </td>
            <td>
              <ExploreLink scope={{ project_id: String(p.id) }} name={p.name} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
