/**
 * Handlers of single sign-on: the public sign-in methods, the start of a
 * sign-in (to the provider) and the provider's way back (to the console,
 * with a one-time code in the address's fragment, or an error code), and
 * the administrators' identities and group-to-team mapping.
 */
import { array, type } from 'superstruct';
import { forbidden, notFound } from '../core/errors.js';
import { isAdmin } from '../auth/rbac.js';
import { OIDC_CALLBACK_PATH, OIDC_FLOW_COOKIE, OIDC_FLOW_TTL_SECONDS, OidcFlowError } from '../auth/oidc-client.js';
import { completeSsoSignIn, SsoSignInRefused } from '../admin/sso-sign-in.js';
import { linkIdentity, setGroupTeams, unlinkIdentity } from '../admin/sso-identities.js';
import { configuredGroupTeams } from '../admin/sso-group-sync.js';
import { isoOrNull, isoTimestamp } from '../core/timestamps.js';
import type { GroupTeamRow, IdentityRow } from '../storage/types-sso.js';
import { BodyId, Text } from './org-request.js';
import type { PublicContext, Reply, RequestInfo, UserContext } from './route.js';
import type { ServiceDeps } from './service-deps.js';

function ssoOf(deps: ServiceDeps): NonNullable<ServiceDeps['sso']> {
  if (!deps.sso) throw notFound('Single sign-on is not configured.');
  return deps.sso;
}

/** Where the console is, as people reach it. */
function consoleUrl(deps: ServiceDeps): string {
  return `${(deps.config.publicUrl as string).replace(/\/+$/, '')}/console/`;
}

function flowCookie(deps: ServiceDeps, value: string, maxAge: number): string {
  const path = new URL(`${(deps.config.publicUrl as string).replace(/\/+$/, '')}${OIDC_CALLBACK_PATH}`).pathname;
  const secure = deps.config.publicUrl?.startsWith('https:') ? '; Secure' : '';
  return `${OIDC_FLOW_COOKIE}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

function readCookie(request: RequestInfo, name: string): string | null {
  const header = request.req.headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function redirect(location: string, cookie?: string): Reply {
  return { status: 302, headers: { Location: location, ...(cookie === undefined ? {} : { 'Set-Cookie': cookie }) } };
}

/** The console's sign-in callback page with its fragment parameters. */
function toConsole(deps: ServiceDeps, params: Record<string, string>, clearCookie: boolean): Reply {
  const fragment = new URLSearchParams(params).toString();
  return redirect(`${consoleUrl(deps)}#/sso?${fragment}`, clearCookie ? flowCookie(deps, '', 0) : undefined);
}

/** `GET /v1/auth/methods`: how people may sign in (the console's sign-in page asks). */
export async function getAuthMethods(ctx: PublicContext): Promise<Reply> {
  const { config } = ctx.deps;
  return {
    status: 200,
    body: {
      password: config.passwordLoginEnabled,
      sso: ctx.deps.sso ? { provider_name: config.oidcProviderName, start_url: `${config.publicUrl?.replace(/\/+$/, '')}/v1/auth/oidc/start` } : null,
    },
  };
}

/** `GET /v1/auth/oidc/start`: to the provider, with the flow's secrets sealed in a cookie. */
export async function getOidcStart(ctx: PublicContext): Promise<Reply> {
  const sso = ssoOf(ctx.deps);
  try {
    const begun = await sso.client.begin(ctx.deps.now());
    return redirect(begun.authorizationUrl, flowCookie(ctx.deps, begun.cookie, OIDC_FLOW_TTL_SECONDS));
  } catch (err) {
    if (err instanceof OidcFlowError) return toConsole(ctx.deps, { error: err.reason }, false);
    throw err;
  }
}

/** `GET /v1/auth/oidc/callback`: the provider's answer checked, the account found, back to the console. */
export async function getOidcCallback(ctx: PublicContext): Promise<Reply> {
  const sso = ssoOf(ctx.deps);
  try {
    const signIn = await sso.client.finish(ctx.query, readCookie(ctx, OIDC_FLOW_COOKIE), ctx.deps.now());
    const code = await completeSsoSignIn(ctx.deps, signIn, { clientIp: ctx.clientIp, userAgent: ctx.userAgent });
    return toConsole(ctx.deps, { code }, true);
  } catch (err) {
    if (err instanceof OidcFlowError) {
      return toConsole(ctx.deps, { error: err.reason, ...(err.providerError === null ? {} : { provider_error: err.providerError }) }, true);
    }
    if (err instanceof SsoSignInRefused) return toConsole(ctx.deps, { error: err.reason }, true);
    throw err;
  }
}

function requireAdmin(ctx: Pick<UserContext, 'principal'>): void {
  if (!isAdmin(ctx.principal.grants)) throw forbidden();
}

function presentIdentity(identity: IdentityRow) {
  return {
    id: identity.id,
    user_id: identity.userId,
    issuer: identity.issuer,
    subject: identity.subject,
    created_at: isoTimestamp(identity.createdAt),
    last_login_at: isoOrNull(identity.lastLoginAt),
    groups: identity.groups,
  };
}

/** `GET /v1/users/:id/identities`. */
export async function getUserIdentities(ctx: UserContext<'id'>): Promise<Reply> {
  requireAdmin(ctx);
  const user = await ctx.deps.storage.getUserById(ctx.params.id);
  if (!user) throw notFound('No such user.');
  const items = await ctx.deps.storage.listIdentitiesOfUser(user.id);
  return { status: 200, body: { items: items.map(presentIdentity) } };
}

const LinkIdentityBody = type({ subject: Text });

/** `POST /v1/users/:id/identities`: links the user to a subject of the configured provider. */
export async function postUserIdentity(ctx: UserContext<'id'>): Promise<Reply> {
  requireAdmin(ctx);
  const sso = ssoOf(ctx.deps);
  const body = await ctx.json(LinkIdentityBody);
  const identity = await linkIdentity(
    ctx.deps.storage,
    ctx.principal.user.id,
    ctx.params.id,
    { issuer: sso.client.issuer, subject: body.subject },
    ctx.deps.now(),
  );
  return { status: 201, body: presentIdentity(identity) };
}

/** `DELETE /v1/users/:id/identities/:identityId`. */
export async function deleteUserIdentity(ctx: UserContext<'id' | 'identityId'>): Promise<Reply> {
  requireAdmin(ctx);
  await unlinkIdentity(ctx.deps.storage, ctx.principal.user.id, ctx.params.id, ctx.params.identityId, ctx.deps.now());
  return { status: 204 };
}

function presentMapping(configured: readonly GroupTeamRow[], stored: readonly GroupTeamRow[]) {
  const pair = (r: GroupTeamRow) => ({ provider_group: r.providerGroup, team_id: r.teamId });
  return { configured: configured.map(pair), items: stored.map(pair) };
}

/** `GET /v1/sso/group-teams`: the operator's pairs and the administrators'. */
export async function getSsoGroupTeams(ctx: UserContext): Promise<Reply> {
  requireAdmin(ctx);
  return { status: 200, body: presentMapping(configuredGroupTeams(ctx.deps.config.oidcGroupTeams), await ctx.deps.storage.listGroupTeams()) };
}

const GroupTeamsBody = type({ items: array(type({ provider_group: Text, team_id: BodyId })) });

/** `POST /v1/sso/group-teams`: replaces the administrators' pairs. */
export async function postSsoGroupTeams(ctx: UserContext): Promise<Reply> {
  requireAdmin(ctx);
  const body = await ctx.json(GroupTeamsBody);
  const rows = body.items.map((i) => ({ providerGroup: i.provider_group, teamId: i.team_id }));
  const stored = await setGroupTeams(ctx.deps.storage, ctx.principal.user.id, rows, ctx.deps.now());
  return { status: 200, body: presentMapping(configuredGroupTeams(ctx.deps.config.oidcGroupTeams), stored) };
}
