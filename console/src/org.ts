/** Teams, members and role assignments as the API answers them, and how a grant's scope reads. */
import type { RoleAssignment, Team, TeamMember } from './api-types';

export type { RoleAssignment, Team };
/** A member of a team. */
export type Member = TeamMember;

export interface Listing<T> {
  items: T[];
}
