/**
 * Everything the group page shows, loaded together: the group, its projects,
 * its teams and their members, and (for those who may list them) the role
 * assignments on the group and its projects, with the names of their users.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, session } from './api';
import { errorText } from './errors';
import type { Listing, Member, RoleAssignment, Team } from './org';
import { isAdmin, ownsGroup } from './rights';
import { all, loadScopes, groups, type Group, type Project } from './scope';
import type { User } from './users';

export interface GroupData {
  group: Group;
  projects: Project[];
  teams: Team[];
  members: Record<number, Member[]>;
  /** Null: the caller may not list them (not an owner of this group). */
  grants: RoleAssignment[] | null;
  /** Usernames by id, as far as the caller can know them. */
  names: Map<number, string>;
}

async function grantsOn(groupId: number, projects: Project[]): Promise<RoleAssignment[]> {
  const scopes = [`scope_type=group&scope_id=${groupId}`, ...projects.map((p) => `scope_type=project&scope_id=${p.id}`)];
  const lists = await Promise.all(scopes.map((q) => call<Listing<RoleAssignment>>(`/v1/role-assignments?${q}`)));
  return lists.flatMap((l) => l.items);
}

/** Owners may not list users: they know the members of the group's teams and themselves; admins know everyone. */
async function knownNames(members: Record<number, Member[]>): Promise<Map<number, string>> {
  const me = session.value!;
  const names = new Map<number, string>([[me.userId, me.username]]);
  for (const list of Object.values(members)) for (const m of list) names.set(m.user_id, m.username);
  if (isAdmin(me)) for (const u of await all<User>('/v1/users')) names.set(u.id, u.username);
  return names;
}

async function loadGroup(id: number): Promise<GroupData | null> {
  await loadScopes();
  let group = groups.value?.find((g) => g.id === id);
  if (!group) {
    // Perhaps created since the list was read.
    await loadScopes(true);
    group = groups.value?.find((g) => g.id === id);
  }
  if (!group) return null;
  const [projects, teams] = await Promise.all([
    all<Project>(`/v1/projects?group_id=${id}`),
    call<Listing<Team>>(`/v1/groups/${id}/teams`).then((l) => l.items),
  ]);
  const memberLists = await Promise.all(teams.map((t) => call<Listing<Member>>(`/v1/teams/${t.id}/members`)));
  const members = Object.fromEntries(teams.map((t, i) => [t.id, memberLists[i]!.items]));
  const mayList = ownsGroup(session.value!, id);
  const [grants, names] = await Promise.all([mayList ? grantsOn(id, projects) : Promise.resolve(null), knownNames(members)]);
  const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
  return { group, projects: projects.sort(byName), teams: teams.sort(byName), members, grants, names };
}

export function useGroupData(id: number): { data: GroupData | null; missing: boolean; error: string | null; reload: () => Promise<void> } {
  const [data, setData] = useState<GroupData | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const reload = async () => {
    try {
      const d = await loadGroup(id);
      setMissing(d === null);
      setData(d);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  };
  useEffect(() => {
    // Another group: not the previous one's page while this one loads.
    setData(null);
    setMissing(false);
    void reload();
  }, [id]);
  return { data, missing, error, reload };
}
