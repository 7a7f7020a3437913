/**
 * Handlers of the authentication endpoints: the public token endpoint (RFC
 * 6749 envelope and form bodies; its rows carry `noStore`) and the password
 * change, which stays reachable while the password must change.
 */
import { type } from 'superstruct';
import { grantToken, revokeToken, TOKEN_FORM_MAX_BYTES, type TokenRequestOrigin } from '../auth/token-endpoint.js';
import { changeOwnPassword } from '../admin/account.js';
import { parseForm, readBody } from './body.js';
import { Text } from './org-request.js';
import type { PublicContext, Reply, RequestInfo, UserContext } from './route.js';

function origin(request: RequestInfo): TokenRequestOrigin {
  return { clientIp: request.clientIp, path: request.route.path, userAgent: request.userAgent };
}

/** The token endpoint's form, with its own smaller size limit (413 beyond it). */
async function tokenForm(request: RequestInfo): Promise<URLSearchParams> {
  return parseForm(await readBody(request.req, TOKEN_FORM_MAX_BYTES));
}

const ChangePasswordBody = type({ current_password: Text, new_password: Text });

/** `POST /v1/auth/token`: the password and refresh grants. */
export async function postToken(ctx: PublicContext): Promise<Reply> {
  const body = await grantToken(ctx.deps, await tokenForm(ctx), origin(ctx));
  return { status: 200, body };
}

/** `DELETE /v1/auth/token`: revocation (RFC 7009); 200 whether or not the token was known. */
export async function deleteToken(ctx: PublicContext): Promise<Reply> {
  await revokeToken(ctx.deps, await tokenForm(ctx), origin(ctx));
  return { status: 200 };
}

/** `POST /v1/auth/change-password`. */
export async function postChangePassword(ctx: UserContext): Promise<Reply> {
  const body = await ctx.json(ChangePasswordBody);
  await changeOwnPassword(ctx.deps, ctx.principal.user, { currentPassword: body.current_password, newPassword: body.new_password }, origin(ctx));
  return { status: 200, body: {} };
}
