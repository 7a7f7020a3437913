/**
 * The scope checks for `GET /v1/logs` (and the stream), after the
 * `project_id`/`group_id` shape check: 404 for a scope that does not exist,
 * 403 `forbidden` when no grant covers it (here, unlike the other lookups,
 * an existing scope without a grant is 403, not 404), then 403
 * `project_blocked` for a blocked direct project. Visibility follows
 * through the shared rbac predicates. With an access key, the key's scope
 * must also name the project (or its group) or the group itself: a key
 * narrows what its user may see, never widens it.
 */
import { forbidden, notFound, projectBlocked } from '../core/errors.js';
import { canSeeGroup, canSeeProject } from '../auth/rbac.js';
import { scopeCoversGroup, scopeCoversProject, type AuthenticatedAccessKey } from '../auth/access-keys.js';
import type { GroupRow, ProjectRow, RoleGrant } from '../storage/types-org.js';
import type { ReadOps } from '../storage/storage.js';
import type { LogScope } from './log-query-params.js';

export type CheckedLogScope = { kind: 'project'; project: ProjectRow } | { kind: 'group'; group: GroupRow };

/** Who reads: the caller's grants and, when they came with an access key, that key. */
export interface LogReader {
  grants: readonly RoleGrant[];
  accessKey: AuthenticatedAccessKey | null;
}

/** Looks the scope up and applies the 404 → 403 forbidden → 403 project_blocked order. */
export async function requireLogScope(db: ReadOps, reader: LogReader, scope: LogScope): Promise<CheckedLogScope> {
  const { grants, accessKey } = reader;
  if (scope.kind === 'project') {
    const project = await db.getProject(scope.projectId);
    if (!project) throw notFound('No such project.');
    if (!canSeeProject(grants, project)) throw forbidden('No role of yours covers this project.');
    if (accessKey && !scopeCoversProject(accessKey.scope, project)) throw forbidden('This access key does not cover this project.');
    if (project.isBlocked) throw projectBlocked();
    return { kind: 'project', project };
  }
  const group = await db.getGroup(scope.groupId);
  if (!group) throw notFound('No such group.');
  // A grant on one of its projects does not reveal the group.
  if (!canSeeGroup(grants, group.id)) throw forbidden('No role of yours covers this group.');
  if (accessKey && !scopeCoversGroup(accessKey.scope, group.id)) throw forbidden('This access key does not cover this group.');
  return { kind: 'group', group };
}
