/**
 * Handlers of `/v1/users…`: the admin-only user administration (403 to a
 * non-admin before any lookup) and the self-service `DELETE /v1/users/me`.
 */
import { nullable, optional, type } from 'superstruct';
import { forbidden } from '../core/errors.js';
import { isAdmin } from '../auth/rbac.js';
import { deleteOwnAccount } from '../admin/account.js';
import { blockUser, createUser, deleteUserByAdmin, findUserOr404, unblockUser, updateUser } from '../admin/users.js';
import type { UserRow } from '../storage/types-org.js';
import { readPageRequest, rowsToFetch, toPage } from '../core/pagination.js';
import { queryText } from './query-params.js';
import { Text } from './org-request.js';
import { presentUser } from './present-user.js';
import type { Reply, UserContext } from './route.js';

/** The cursor namespace of GET /v1/users. */
const USERS_LIST = 'users';

const CreateUserBody = type({
  username: Text,
  password: Text,
  display_name: optional(nullable(Text)),
  email: optional(nullable(Text)),
});

const PatchUserBody = type({
  email: optional(nullable(Text)),
  display_name: optional(nullable(Text)),
  password: optional(Text),
});

const DeleteMeBody = type({ password: Text });

/** The caller, who must be an admin (403 before anything is looked up). */
function requireAdmin(ctx: Pick<UserContext, 'principal'>): UserRow {
  if (!isAdmin(ctx.principal.grants)) throw forbidden();
  return ctx.principal.user;
}

/** `DELETE /v1/users/me`: the caller deletes their own account, confirming with their password. */
export async function deleteMe(ctx: UserContext): Promise<Reply> {
  const body = await ctx.json(DeleteMeBody);
  await deleteOwnAccount(ctx.deps, ctx.principal.user, body.password, { clientIp: ctx.clientIp, path: ctx.route.path });
  ctx.deps.liveStreams.credentialsRevoked();
  return { status: 204 };
}

export async function postUsers(ctx: UserContext): Promise<Reply> {
  const actor = requireAdmin(ctx);
  const body = await ctx.json(CreateUserBody);
  const user = await createUser(ctx.deps, actor, {
    username: body.username,
    password: body.password,
    displayName: body.display_name ?? null,
    email: body.email ?? null,
  });
  return { status: 201, body: presentUser(user) };
}

export async function getUsers(ctx: UserContext): Promise<Reply> {
  requireAdmin(ctx);
  const page = readPageRequest(ctx.query, USERS_LIST, ctx.deps.cursors);
  const usernameContains = queryText(ctx.query, 'username');
  const rows = await ctx.deps.storage.listUsers({
    ...rowsToFetch(page),
    ...(usernameContains === undefined ? {} : { usernameContains }),
  });
  return { status: 200, body: toPage(rows, page, USERS_LIST, ctx.deps.cursors, presentUser) };
}

export async function patchUser(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = requireAdmin(ctx);
  await findUserOr404(ctx.deps.storage, ctx.params.id);
  const body = await ctx.json(PatchUserBody);
  const user = await updateUser(ctx.deps, actor, ctx.params.id, {
    ...(body.email === undefined ? {} : { email: body.email }),
    ...(body.display_name === undefined ? {} : { displayName: body.display_name }),
    ...(body.password === undefined ? {} : { password: body.password }),
  });
  return { status: 200, body: presentUser(user) };
}

export async function postUserBlock(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = requireAdmin(ctx);
  const user = await blockUser(ctx.deps, actor, ctx.params.id);
  // The person's streams, access tokens' and access keys' alike, end now, here and in other processes.
  ctx.deps.liveStreams.credentialsRevoked();
  return { status: 200, body: presentUser(user) };
}

export async function postUserUnblock(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = requireAdmin(ctx);
  return { status: 200, body: presentUser(await unblockUser(ctx.deps, actor, ctx.params.id)) };
}

export async function deleteUser(ctx: UserContext<'id'>): Promise<Reply> {
  const actor = requireAdmin(ctx);
  await deleteUserByAdmin(ctx.deps, actor, ctx.params.id);
  ctx.deps.liveStreams.credentialsRevoked();
  return { status: 204 };
}
