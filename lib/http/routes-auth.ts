/**
 * Route rows of the authentication endpoints: the public token endpoint
 * (RFC 6749 envelope, form bodies, `no-store` on every answer) and the
 * password change, which stays reachable while the password must change.
 */
import { type } from 'superstruct';
import { grantToken, NO_STORE, revokeToken, TOKEN_FORM_MAX_BYTES, withNoStore, type TokenRequestOrigin } from '../auth/token-endpoint.js';
import { changeOwnPassword } from '../admin/account.js';
import { parseForm, readBody } from './body.js';
import { Text } from './org-request.js';
import type { RequestContext, Route } from './route.js';

function origin(ctx: RequestContext): TokenRequestOrigin {
  return { clientIp: ctx.clientIp, path: ctx.route.path, userAgent: ctx.userAgent };
}

/** The token endpoint's form, with its own smaller size limit (413 beyond it). */
async function tokenForm(ctx: RequestContext): Promise<URLSearchParams> {
  return parseForm(await readBody(ctx.req, TOKEN_FORM_MAX_BYTES));
}

const ChangePasswordBody = type({ current_password: Text, new_password: Text });

export const authRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/auth/token',
    auth: 'none',
    envelope: 'oauth',
    rateLimited: true,
    async handle(ctx) {
      try {
        const body = await grantToken(ctx.deps, await tokenForm(ctx), origin(ctx));
        return { status: 200, body, headers: { ...NO_STORE } };
      } catch (err) {
        throw withNoStore(err);
      }
    },
  },
  {
    method: 'DELETE',
    path: '/v1/auth/token',
    auth: 'none',
    envelope: 'oauth',
    rateLimited: true,
    async handle(ctx) {
      try {
        await revokeToken(ctx.deps, await tokenForm(ctx), origin(ctx));
        return { status: 200, headers: { ...NO_STORE } };
      } catch (err) {
        throw withNoStore(err);
      }
    },
  },
  {
    method: 'POST',
    path: '/v1/auth/change-password',
    auth: 'user',
    envelope: 'general',
    allowDuringPasswordChange: true,
    rateLimited: true,
    async handle(ctx) {
      const body = await ctx.json(ChangePasswordBody);
      await changeOwnPassword(ctx.deps, ctx.principal!.user, { currentPassword: body.current_password, newPassword: body.new_password }, origin(ctx));
      return { status: 200, body: {} };
    },
  },
];
