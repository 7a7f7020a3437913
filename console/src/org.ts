/** Teams, members and role assignments as the API answers them, and how a grant's scope reads. */
export interface Team {
  id: number;
  group_id: number;
  name: string;
}

export interface Member {
  user_id: number;
  username: string;
}

export interface RoleAssignment {
  id: number;
  subject_type: 'user' | 'team';
  subject_id: number;
  role: 'admin' | 'owner' | 'user';
  scope_type: 'global' | 'group' | 'project';
  scope_id: number | null;
  created_at: string;
}

export interface Listing<T> {
  items: T[];
}
