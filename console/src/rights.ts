/**
 * What the caller may do, read from the grants in their token, to hide
 * actions the service would refuse (it still decides: a 403 is shown in words).
 */
import type { Session } from './api';

type Grant = Session['roles'][number];

const has = (s: Session, ok: (g: Grant) => boolean) => s.roles.some(ok);

export function isAdmin(s: Session): boolean {
  return has(s, (g) => g.role === 'admin' && g.scope_type === 'global');
}

const globalOwner = (g: Grant) => (g.role === 'admin' || g.role === 'owner') && g.scope_type === 'global';

/** May create projects in this group (and manage its teams). */
export function ownsGroup(s: Session, groupId: number): boolean {
  return has(s, (g) => globalOwner(g) || (g.role === 'owner' && g.scope_type === 'group' && g.scope_id === groupId));
}

/** May edit this project's quotas and create or revoke its keys. */
export function ownsProject(s: Session, project: { id: number; group_id: number }): boolean {
  return ownsGroup(s, project.group_id) || has(s, (g) => g.role === 'owner' && g.scope_type === 'project' && g.scope_id === project.id);
}

/** Owns anything (or administers): sees the administration pages. */
export function administers(s: Session): boolean {
  return has(s, (g) => g.role === 'admin' || g.role === 'owner');
}
