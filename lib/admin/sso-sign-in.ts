/**
 * What a verified single sign-on does to the organisation, in one
 * transaction: find the account linked to the provider's subject (never by
 * e-mail or username), or create one when `--oidc-auto-create` is on; apply
 * the admin claim; bring mapped teams up to date; and issue the one-time
 * code the console exchanges for tokens. A refusal changes nothing but its
 * `auth.login_failed` row.
 */
import { createHash } from 'node:crypto';
import type { LogServiceConfig } from '../core/config.js';
import type { ServiceLogger } from '../core/logger.js';
import type { Storage, WriteOps } from '../storage/storage.js';
import type { IdentityRow } from '../storage/types-sso.js';
import type { UserRow } from '../storage/types-org.js';
import { recordAudit } from '../audit/audit.js';
import { issueLoginCode } from '../auth/login-codes.js';
import { unusablePasswordHash } from '../auth/passwords.js';
import type { VerifiedSignIn } from '../auth/oidc-client.js';
import { configuredGroupTeams, syncGroupTeams } from './sso-group-sync.js';
import { USERNAME_MAX_CHARS, DISPLAY_NAME_MAX_CHARS } from './users.js';

/** OpenID Connect caps `sub` at 255 ASCII characters; a longer one is not a subject. */
export const OIDC_SUBJECT_MAX_CHARS = 255;
/** Most provider groups read from one sign-in: Entra ID stops listing at 200 (and sends an overage claim), large Keycloak realms rarely pass a few hundred per person. */
export const OIDC_MAX_GROUPS = 1000;
/** Longest provider group name kept: group paths and ids are well under it. */
export const OIDC_GROUP_MAX_CHARS = 256;

export type SsoRefusal = 'not_linked' | 'account_disabled' | 'claims_invalid';

export class SsoSignInRefused extends Error {
  constructor(readonly reason: SsoRefusal) {
    super(`single sign-on refused: ${reason}`);
  }
}

export interface SsoSignInDeps {
  storage: Storage;
  config: Pick<LogServiceConfig, 'oidcAutoCreate' | 'oidcAdminClaim' | 'oidcGroupsClaim' | 'oidcGroupTeams'>;
  logger: ServiceLogger;
  now(): number;
}

export interface SignInOrigin {
  clientIp: string;
  userAgent: string | null;
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** The groups claim as a list of names, or null when it is not one within the bounds. */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] | null {
  const value = claims[claim];
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length > OIDC_MAX_GROUPS) return null;
  const groups: string[] = [];
  for (const item of list) {
    if (typeof item !== 'string' || item.length > OIDC_GROUP_MAX_CHARS || item.includes('\u0000')) return null;
    groups.push(item);
  }
  return [...new Set(groups)];
}

/** Whether the claims carry the admin claim: `claim=value`, or a bare provider group. */
export function holdsAdminClaim(claims: Record<string, unknown>, groups: readonly string[], adminClaim: string | null): boolean {
  if (adminClaim === null) return false;
  const at = adminClaim.indexOf('=');
  if (at <= 0) return groups.includes(adminClaim);
  const value = claims[adminClaim.slice(0, at)];
  const wanted = adminClaim.slice(at + 1);
  return value === wanted || (Array.isArray(value) && value.includes(wanted));
}

function cleanText(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text === '' || CONTROL_CHARS.test(text)) return null;
  return [...text].slice(0, max).join('');
}

/** A free username for a new account: the provider's preferred name, made unique with a digest of the subject when taken. */
async function freeUsername(tx: WriteOps, claims: Record<string, unknown>, issuer: string, subject: string): Promise<string> {
  const digest = createHash('sha256').update(`${issuer}\n${subject}`).digest('hex');
  const base = cleanText(claims.preferred_username, USERNAME_MAX_CHARS - 13) ?? cleanText(claims.email, USERNAME_MAX_CHARS - 13) ?? 'sso-user';
  for (const candidate of [base, `${base}-${digest.slice(0, 6)}`, `${base}-${digest.slice(0, 12)}`]) {
    if (!(await tx.getUserByUsername(candidate))) return candidate;
  }
  return `sso-${digest.slice(0, 32)}`;
}

async function createLinkedUser(tx: WriteOps, signIn: VerifiedSignIn, now: number): Promise<IdentityRow> {
  const user = await tx.insertUser({
    username: await freeUsername(tx, signIn.claims, signIn.issuer, signIn.subject),
    passwordHash: unusablePasswordHash(),
    displayName: cleanText(signIn.claims.name, DISPLAY_NAME_MAX_CHARS),
    // The provider's e-mail is never trusted to identify anyone, so it is not stored either.
    email: null,
    mustChangePassword: false,
    isPrimaryAdmin: false,
    createdAt: now,
  });
  await recordAudit(
    tx,
    { actorUserId: null, action: 'user.created', targetType: 'user', targetId: user.id, metadata: { username: user.username, source: 'oidc' } },
    now,
  );
  const identity = await tx.insertIdentity({ userId: user.id, issuer: signIn.issuer, subject: signIn.subject, createdAt: now });
  await recordAudit(
    tx,
    { actorUserId: null, action: 'user.identity_linked', targetType: 'user', targetId: user.id, metadata: { issuer: signIn.issuer, subject: signIn.subject } },
    now,
  );
  return identity;
}

/** Grants admin while the claim is held and revokes the grant the claim made once it is not; returns the grant the claim holds now. */
async function applyAdminClaim(tx: WriteOps, user: UserRow, identity: IdentityRow, claimed: boolean, now: number): Promise<number | null> {
  const existing = identity.adminGrantId === null ? null : await tx.getRoleAssignment(identity.adminGrantId);
  const details = (id: number) => ({
    role: 'admin',
    scope_type: 'global',
    scope_id: null,
    subject_type: 'user',
    subject_id: user.id,
    assignment_id: id,
    source: 'oidc',
  });
  if (claimed) {
    if (existing) return existing.id;
    const direct = await tx.listRoleAssignments({ subjectType: 'user', subjectId: user.id, scopeType: 'global' });
    // An admin by an administrator's hand stays one by that hand: the claim adds nothing to revoke later.
    if (direct.some((g) => g.role === 'admin')) return null;
    const grant = await tx.insertRoleAssignment({ subjectType: 'user', subjectId: user.id, role: 'admin', scopeType: 'global', scopeId: null, createdAt: now });
    await tx.bumpTokenVersion([user.id]);
    await recordAudit(
      tx,
      { actorUserId: null, action: 'role_assignment.created', targetType: 'role_assignment', targetId: grant.id, metadata: details(grant.id) },
      now,
    );
    return grant.id;
  }
  if (existing && (await tx.deleteRoleAssignment(existing.id))) {
    await tx.bumpTokenVersion([user.id]);
    await recordAudit(
      tx,
      { actorUserId: null, action: 'role_assignment.revoked', targetType: 'role_assignment', targetId: existing.id, metadata: details(existing.id) },
      now,
    );
  }
  return null;
}

/**
 * A temporary password someone else set (an administrator creating the
 * account before linking it) is retired at the first single sign-on: the
 * person proved who they are at the provider, so the forced change would
 * only ask them for a password they never chose. The break-glass accounts
 * keep theirs (they are the way in when the provider is down).
 */
async function retireTemporaryPassword(tx: WriteOps, user: UserRow, now: number): Promise<void> {
  if (!user.mustChangePassword || (await tx.isBreakGlassAccount(user.id))) return;
  await tx.updateUser(user.id, { passwordHash: unusablePasswordHash(), mustChangePassword: false });
  await recordAudit(
    tx,
    { actorUserId: null, action: 'user.updated', targetType: 'user', targetId: user.id, metadata: { changed_fields: ['password'], source: 'oidc' } },
    now,
  );
}

/**
 * The account a verified sign-in stands for, brought up to date, and a
 * one-time code for it. Throws SsoSignInRefused (its audit row committed).
 */
export async function completeSsoSignIn(deps: SsoSignInDeps, signIn: VerifiedSignIn, origin: SignInOrigin): Promise<string> {
  const now = deps.now();
  const meta = { client_ip: origin.clientIp, user_agent: origin.userAgent === null ? null : origin.userAgent.slice(0, 512), method: 'oidc' };
  const groups = groupsOf(signIn.claims, deps.config.oidcGroupsClaim);
  if (groups === null || signIn.subject.length === 0 || signIn.subject.length > OIDC_SUBJECT_MAX_CHARS || signIn.subject.includes('\u0000')) {
    throw new SsoSignInRefused('claims_invalid');
  }
  const outcome = await deps.storage.write(async (tx): Promise<{ refused: SsoRefusal } | { code: string }> => {
    let identity = await tx.findIdentity(signIn.issuer, signIn.subject);
    if (!identity) {
      if (!deps.config.oidcAutoCreate) {
        await recordAudit(
          tx,
          {
            actorUserId: null,
            action: 'auth.login_failed',
            targetType: 'user',
            targetId: null,
            metadata: { unknown_user: true, ...meta, oidc_subject: signIn.subject },
          },
          now,
        );
        return { refused: 'not_linked' };
      }
      identity = await createLinkedUser(tx, signIn, now);
    }
    const user = await tx.getUserForUpdate(identity.userId);
    if (!user?.isActive || user.deletedAt !== null) {
      const reason = user && user.deletedAt === null ? 'blocked' : 'deleted';
      await recordAudit(
        tx,
        { actorUserId: identity.userId, action: 'auth.login_failed', targetType: 'user', targetId: identity.userId, metadata: { reason, ...meta } },
        now,
      );
      return { refused: 'account_disabled' };
    }
    await retireTemporaryPassword(tx, user, now);
    const adminGrantId = await applyAdminClaim(tx, user, identity, holdsAdminClaim(signIn.claims, groups, deps.config.oidcAdminClaim), now);
    await syncGroupTeams(tx, { userId: user.id, groups, configured: configuredGroupTeams(deps.config.oidcGroupTeams), now, logger: deps.logger });
    await tx.updateIdentitySeen(identity.id, { lastLoginAt: now, groups, adminGrantId });
    return { code: await issueLoginCode(tx, user.id, now) };
  });
  if ('refused' in outcome) throw new SsoSignInRefused(outcome.refused);
  return outcome.code;
}

/**
 * The refresh grant's hook: re-applies the groups of the user's last
 * sign-in through the configured issuer to the current mapping.
 */
export function refreshSync(deps: Pick<SsoSignInDeps, 'config' | 'logger'>, issuer: string) {
  return async (tx: WriteOps, userId: number, now: number): Promise<void> => {
    const identity = (await tx.listIdentitiesOfUser(userId)).find((i) => i.issuer === issuer && i.groups !== null);
    if (!identity) return;
    await syncGroupTeams(tx, { userId, groups: identity.groups ?? [], configured: configuredGroupTeams(deps.config.oidcGroupTeams), now, logger: deps.logger });
  };
}
