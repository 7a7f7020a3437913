/**
 * Handlers for people's access keys (`/v1/access-keys`): create (the key
 * shown once), list and revoke, one's own or, for an administrator,
 * anyone's. These routes take an access token only: an access key cannot
 * make, list or revoke keys (the handler answers 403 before they run).
 */
import { array, enums, optional, size, type } from 'superstruct';
import { invalidRequest } from '../core/errors.js';
import { isoOrNull, isoTimestamp, parseIsoTimestamp } from '../core/timestamps.js';
import { ACCESS_KEY_PERMISSIONS, parseScope } from '../auth/access-keys.js';
import { ACCESS_KEY_SCOPE_MAX_ITEMS, createAccessKey, listAccessKeys, revokeAccessKey } from '../admin/access-keys.js';
import type { AccessKeyRow } from '../storage/types-org.js';
import { BodyId, Text, actorOf } from './org-request.js';
import { queryId } from './query-params.js';
import type { Reply, UserContext } from './route.js';

const Ids = size(array(BodyId), 0, ACCESS_KEY_SCOPE_MAX_ITEMS);

const NewAccessKeyBody = type({
  label: size(Text, 1, 200),
  expires_at: size(Text, 1, 64),
  scope: type({
    permissions: size(array(enums(ACCESS_KEY_PERMISSIONS)), 1, ACCESS_KEY_PERMISSIONS.length),
    project_ids: optional(Ids),
    group_ids: optional(Ids),
  }),
  user_id: optional(BodyId),
});

/** A key's metadata; `secret` only in the create response, the one time it is shown. */
export function presentAccessKey(row: AccessKeyRow, secret?: string) {
  const scope = parseScope(row.scope);
  const key = {
    id: row.id,
    user_id: row.userId,
    label: row.label,
    scope: { permissions: scope.permissions, project_ids: scope.projectIds, group_ids: scope.groupIds },
    created_by: row.createdBy,
    created_at: isoTimestamp(row.createdAt),
    expires_at: isoTimestamp(row.expiresAt),
    last_used_at: isoOrNull(row.lastUsedAt),
    revoked_at: isoOrNull(row.revokedAt),
  };
  return secret === undefined ? key : { ...key, secret };
}

export async function postAccessKeys(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  const body = await ctx.json(NewAccessKeyBody);
  const expiresAt = parseIsoTimestamp(body.expires_at);
  if (expiresAt === null) throw invalidRequest('expires_at must be an ISO 8601 timestamp.', 'expires_at', 'invalid');
  const { key, secret } = await createAccessKey(
    ctx.deps.storage,
    actor,
    {
      userId: body.user_id ?? actor.userId,
      label: body.label,
      expiresAt,
      scope: { permissions: body.scope.permissions, projectIds: body.scope.project_ids ?? [], groupIds: body.scope.group_ids ?? [] },
    },
    ctx.deps.config.accessKeyMaxDays,
    ctx.deps.now(),
  );
  return { status: 201, body: presentAccessKey(key, secret) };
}

/** The caller's keys, or with `user_id` someone else's (administrators only). */
export async function getAccessKeys(ctx: UserContext): Promise<Reply> {
  const actor = actorOf(ctx);
  const userId = queryId(ctx.query, 'user_id') ?? actor.userId;
  const rows = await listAccessKeys(ctx.deps.storage, actor, userId);
  return { status: 200, body: { items: rows.map((row) => presentAccessKey(row)) } };
}

export async function deleteAccessKey(ctx: UserContext<'id'>): Promise<Reply> {
  await revokeAccessKey(ctx.deps.storage, actorOf(ctx), ctx.params.id, ctx.deps.now());
  // Streams opened with the key end now, here and in other processes.
  ctx.deps.liveStreams.credentialsRevoked();
  return { status: 204 };
}
