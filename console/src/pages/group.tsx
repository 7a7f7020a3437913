/** One group: its projects, its teams and their members, and the roles granted on it and its projects. */
import { session } from '../api';
import { ErrorLine } from '../components/form';
import { GrantForm } from '../components/grant-form';
import { GrantList } from '../components/grant-list';
import { GroupProjects } from '../components/group-projects';
import { NewTeamForm } from '../components/new-team';
import { TeamCard } from '../components/team-card';
import { useGroupData } from '../group-data';
import type { Member } from '../org';
import { isAdmin, ownsGroup } from '../rights';
import { href, route } from '../router';

export function GroupPage() {
  const id = Number(route.value.params.get('id') ?? 0);
  const me = session.value!;
  const { data, missing, error, reload } = useGroupData(id);
  if (missing)
    return (
      <main>
        <h1>Group not found</h1>
        <p>
          There is no such group, or you do not see it. <a href={href('groups')}>All groups</a>
        </p>
      </main>
    );
  if (!data)
    return (
      <main>
        <h1>Group</h1>
        {error ? <ErrorLine message={error} /> : <p role="status">Loading…</p>}
      </main>
    );
  const { group, projects, teams, members, grants, names } = data;
  const admin = isAdmin(me);
  const owner = ownsGroup(me, group.id);
  // Owners may not search users: they choose among the people the group already knows.
  const known: Member[] = [...names].map(([user_id, username]) => ({ user_id, username })).sort((a, b) => a.username.localeCompare(b.username));
  const book = { group, projects, teams, names };
  return (
    <main>
      <p>
        <a href={href('groups')}>All groups</a>
      </p>
      <h1>Group {group.name}</h1>
      <p>
        <a href={href('explore', { group_id: String(group.id) })}>Explore the logs of all its projects</a>
      </p>
      <ErrorLine message={error} />
      <div class="columns">
        <section aria-labelledby="group-projects">
          <h2 id="group-projects">Projects</h2>
          <GroupProjects projects={projects} />
          <h2>Teams</h2>
          {teams.length === 0 ? <p class="empty">No team yet.</p> : null}
          {teams.map((t) => (
            <TeamCard key={t.id} team={t} members={members[t.id] ?? []} canManage={owner} canSearch={admin} known={known} onChanged={reload} />
          ))}
          {owner ? <NewTeamForm groupId={group.id} onCreated={reload} /> : null}
        </section>
        {grants ? (
          <section aria-labelledby="group-roles">
            <h2 id="group-roles">Roles granted here</h2>
            <GrantList grants={grants} book={book} canRevoke={(g) => admin || g.role !== 'admin'} onChanged={reload} />
            <GrantForm book={book} admin={admin} known={known} onGranted={reload} />
          </section>
        ) : null}
      </div>
    </main>
  );
}
