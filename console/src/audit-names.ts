/**
 * Names for the audit page: audit rows carry ids, so the page looks up
 * what an administrator may list (users, groups, projects, and teams when a
 * row names one). Anything not found reads as "user #12" (see audit-words.ts).
 */
import { signal } from '@preact/signals';
import { call } from './api';
import type { Page, Team, TeamList, User } from './api-types';
import type { NameLookup, RefKind } from './audit-words';
import { groups, loadScopes, projects } from './scope';

/** Past this many users the rest read as "user #N" rather than slowing the page down. */
const USER_CAP = 2000;
/** Teams are listed per group; past this many groups the rest read as "team #N". */
const GROUP_CAP = 100;

const users = signal<Map<number, string>>(new Map());
const teams = signal<Map<number, Team>>(new Map());
let teamsAsked = false;

async function allUsers(): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  let cursor: string | null = null;
  do {
    const page: Page<User> = await call(`/v1/users?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    for (const u of page.items) found.set(u.id, u.username);
    cursor = page.next_cursor;
  } while (cursor && found.size < USER_CAP);
  return found;
}

/** Users, groups and projects, fresh for this visit. Errors are the caller's to show. */
export async function loadAuditNames(): Promise<void> {
  teamsAsked = false;
  const [found] = await Promise.all([allUsers(), loadScopes(true)]);
  users.value = found;
}

/** Teams of every group (a request per group), asked once per visit and only when a row names a team. */
export async function loadTeamNames(): Promise<void> {
  if (teamsAsked) return;
  teamsAsked = true;
  const found = new Map<number, Team>();
  const lists = await Promise.all(
    (groups.value ?? []).slice(0, GROUP_CAP).map((g) => call<TeamList>(`/v1/groups/${g.id}/teams`).catch((): TeamList => ({ items: [] }))),
  );
  for (const t of lists.flatMap((l) => l.items)) found.set(t.id, t);
  teams.value = found;
}

/** Reads the signals, so a page using it redraws as names arrive. */
export const auditNames: NameLookup = (kind: RefKind, id: number) => {
  switch (kind) {
    case 'user':
      return users.value.get(id);
    case 'group':
      return groups.value?.find((g) => g.id === id)?.name;
    case 'project':
      return projects.value?.find((p) => p.id === id)?.name;
    case 'team':
      return teams.value.get(id)?.name;
  }
};

export function teamGroupId(teamId: number): number | undefined {
  return teams.value.get(teamId)?.group_id;
}

/** The id of the user with exactly this username, if loaded. */
export function userIdByName(username: string): number | undefined {
  for (const [id, name] of users.value) if (name === username) return id;
  return undefined;
}

export function knownUsernames(): string[] {
  return [...users.value.values()].sort((a, b) => a.localeCompare(b));
}
