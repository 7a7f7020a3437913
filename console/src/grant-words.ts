/** A role assignment's grantee and scope in words, for tables and confirmation questions. */
import type { RoleAssignment, Team } from './org';
import type { Group, Project } from './scope';

export interface NameBook {
  group: Group;
  projects: Project[];
  teams: Team[];
  names: Map<number, string>;
}

export function granteeText(g: Pick<RoleAssignment, 'subject_type' | 'subject_id'>, book: NameBook): string {
  if (g.subject_type === 'team') return `team ${book.teams.find((t) => t.id === g.subject_id)?.name ?? `#${g.subject_id}`}`;
  return `user ${book.names.get(g.subject_id) ?? `#${g.subject_id}`}`;
}

export function scopeText(g: Pick<RoleAssignment, 'scope_type' | 'scope_id'>, book: NameBook): string {
  if (g.scope_type === 'global') return 'everything (global)';
  if (g.scope_type === 'group') return `group ${g.scope_id === book.group.id ? book.group.name : `#${g.scope_id}`}`;
  return `project ${book.projects.find((p) => p.id === g.scope_id)?.name ?? `#${g.scope_id}`}`;
}
