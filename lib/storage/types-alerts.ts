/**
 * Rows and filters of saved searches (and, built on them, alert rules), as
 * the storage contract (`storage.ts`) reads and writes them.
 */
import type { Page, Visibility } from './types-org.js';

/**
 * A saved search: a name, a scope (exactly one of a project or a group) and
 * the filters of `GET /v1/logs` as a query string (`level=error&q=disk`),
 * checked when saved.
 */
export interface SavedSearchRow {
  id: number;
  name: string;
  /** Exactly one of projectId and groupId is set. */
  projectId: number | null;
  groupId: number | null;
  /** The group that owns the scope: the group itself, or the project's group. */
  ownerGroupId: number;
  query: string;
  authorUserId: number;
  createdAt: number;
  updatedAt: number;
}

export interface NewSavedSearch {
  name: string;
  projectId: number | null;
  groupId: number | null;
  query: string;
  authorUserId: number;
  createdAt: number;
}

/** Fields `updateSavedSearch` may change; absent keys stay as they are. */
export interface SavedSearchChanges {
  name?: string;
  query?: string;
  updatedAt: number;
}

export interface SavedSearchFilter extends Page {
  /** Only searches scoped to this project. */
  projectId?: number;
  /** Only searches scoped to this group (not those of its projects). */
  groupId?: number;
  /** Searches of projects visible here and of groups in `groupIds`. */
  visibility: Visibility;
}
