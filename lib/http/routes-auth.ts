/**
 * Route rows of the authentication endpoints: the public token endpoint
 * (RFC 6749 envelope, form bodies, `no-store` on every answer) and the
 * password change, which stays reachable while the password must change.
 */
import { string, type } from 'superstruct';
import { grantToken, NO_STORE, revokeToken, withNoStore, type TokenRequestOrigin } from '../auth/token-endpoint.js';
import { changeOwnPassword } from '../admin/account.js';
import type { RequestContext, Route } from './route.js';

function origin(ctx: RequestContext): TokenRequestOrigin {
  return { clientIp: ctx.clientIp, path: ctx.route.path, userAgent: ctx.userAgent };
}

const ChangePasswordBody = type({ current_password: string(), new_password: string() });

export const authRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/auth/token',
    auth: 'none',
    envelope: 'oauth',
    rateLimited: true,
    async handle(ctx) {
      try {
        const body = await grantToken(ctx.deps, await ctx.form(), origin(ctx));
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
        await revokeToken(ctx.deps, await ctx.form(), origin(ctx));
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
