/**
 * Handlers for role assignments. A caller who may grant nothing at all is
 * refused with 403 before the body or any lookup is read; the finer rules
 * live in `admin/role-assignments.ts`.
 */
import { enums, nullable, optional, type } from 'superstruct';
import { forbidden, invalidRequest } from '../core/errors.js';
import { mayGrantAnything, roleAssignmentListScope } from '../auth/rbac.js';
import {
  createRoleAssignment,
  deleteRoleAssignment as removeRoleAssignment,
  listRoleAssignments,
  type RoleAssignmentQuery,
} from '../admin/role-assignments.js';
import type { Role, ScopeType, SubjectType } from '../storage/types-org.js';
import { queryEnum, queryId } from './query-params.js';
import { BodyId, actorOf } from './org-request.js';
import { presentRoleAssignment } from './present-org.js';
import type { Reply, UserContext } from './route.js';

const SUBJECT_TYPES: readonly SubjectType[] = ['user', 'team'];
const ROLES: readonly Role[] = ['admin', 'owner', 'user'];
const SCOPE_TYPES: readonly ScopeType[] = ['global', 'group', 'project'];

const RoleAssignmentBody = type({
  subject_type: enums(SUBJECT_TYPES),
  subject_id: BodyId,
  role: enums(ROLES),
  scope_type: enums(SCOPE_TYPES),
  scope_id: optional(nullable(BodyId)),
});

/** The listing's filters; an id filter needs its type (400 naming the missing type). */
function roleAssignmentQueryFrom(query: URLSearchParams): RoleAssignmentQuery {
  const subjectType = queryEnum(query, 'subject_type', SUBJECT_TYPES);
  const subjectId = queryId(query, 'subject_id');
  const scopeType = queryEnum(query, 'scope_type', SCOPE_TYPES);
  const scopeId = queryId(query, 'scope_id');
  if (subjectId !== undefined && subjectType === undefined) throw invalidRequest('subject_id needs subject_type.', 'subject_type', 'required');
  if (scopeId !== undefined && scopeType === undefined) throw invalidRequest('scope_id needs scope_type.', 'scope_type', 'required');
  if (scopeId !== undefined && scopeType === 'global') throw invalidRequest('A global scope has no scope_id.', 'scope_id', 'invalid');
  return {
    ...(subjectType === undefined ? {} : { subjectType }),
    ...(subjectId === undefined ? {} : { subjectId }),
    ...(scopeType === undefined ? {} : { scopeType }),
    ...(scopeId === undefined ? {} : { scopeId }),
  };
}

export async function postRoleAssignments(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  if (!mayGrantAnything(actor.grants)) throw forbidden();
  const body = await ctx.json(RoleAssignmentBody);
  const row = await createRoleAssignment(
    ctx.deps.storage,
    actor,
    { subjectType: body.subject_type, subjectId: body.subject_id, role: body.role, scopeType: body.scope_type, scopeId: body.scope_id ?? null },
    ctx.deps.now(),
  );
  return { status: 201, body: presentRoleAssignment(row) };
}

export async function deleteRoleAssignment(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = actorOf(ctx);
  if (!mayGrantAnything(actor.grants)) throw forbidden();
  await removeRoleAssignment(ctx.deps.storage, actor, ctx.params.id, ctx.deps.now());
  // Streams the role covered end now (re-checked on fresh grants), not at the next heartbeat.
  ctx.deps.liveStreams.credentialsRevoked();
  return { status: 204 };
}

export async function getRoleAssignments(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  if (!roleAssignmentListScope(actor.grants)) throw forbidden();
  const rows = await listRoleAssignments(ctx.deps.storage, actor, roleAssignmentQueryFrom(ctx.query));
  return { status: 200, body: { items: rows.map(presentRoleAssignment) } };
}
