/**
 * Creating, listing and revoking people's access keys. A signed-in person
 * manages their own keys; an administrator anyone's. A key names the
 * projects and groups it covers, each of which its user must be able to see
 * when the key is made (what it may do later is decided at each request,
 * from the user's rights then). Every creation and revocation is audited in
 * the same transaction.
 */
import { forbidden, invalidRequest, notFound } from '../core/errors.js';
import { canSeeGroup, canSeeProject, hasGlobalGrant, isAdmin } from '../auth/rbac.js';
import { accessKeyLive, generateAccessKey, hashAccessKey, scopeJson, type AccessKeyScope } from '../auth/access-keys.js';
import { recordAudit } from '../audit/audit.js';
import { isoTimestamp } from '../core/timestamps.js';
import type { Storage } from '../storage/storage.js';
import type { AccessKeyRow, RoleGrant, UserRow, Visibility } from '../storage/types-org.js';
import type { ReadOps } from '../storage/storage.js';
import type { Actor } from './org-access.js';

/** Projects and groups one key may name together: a key is for a task, and its scope is stored and read at every request. */
export const ACCESS_KEY_SCOPE_MAX_ITEMS = 100;

/** Live (unrevoked, unexpired) keys one person may hold: enough for every script and agent, few enough that a listing stays one small answer. */
export const ACCESS_KEYS_PER_USER_MAX = 100;

const DAY_MS = 86_400_000;

export interface NewAccessKeyRequest {
  /** Whose key; the caller's own unless an administrator names someone. */
  userId: number;
  label: string;
  expiresAt: number;
  scope: AccessKeyScope;
}

/** The key's owner, for creation and listing: oneself, or anyone for an administrator (404 for a missing or deleted user). */
async function requireKeyOwner(storage: Storage, actor: Actor, userId: number): Promise<UserRow> {
  if (userId !== actor.userId && !isAdmin(actor.grants)) throw forbidden("Only an administrator may manage another person's access keys.");
  const user = await storage.getUserById(userId);
  if (!user || user.deletedAt !== null) throw notFound('No such user.');
  return user;
}

/**
 * Creates a key; the plaintext is returned here and never again. Checks,
 * in order: the owner (403, 404) → the expiry (400) → the scope: each
 * project or group must exist and be visible to the caller (404), and its
 * owner must hold a role covering it (403) → the owner's count of live
 * keys (400).
 */
export async function createAccessKey(
  storage: Storage,
  actor: Actor,
  request: NewAccessKeyRequest,
  maxDays: number,
  now: number,
): Promise<{ key: AccessKeyRow; secret: string }> {
  const owner = await requireKeyOwner(storage, actor, request.userId);
  if (request.expiresAt <= now) throw invalidRequest('expires_at must be in the future.', 'expires_at', 'invalid');
  if (request.expiresAt > now + maxDays * DAY_MS) {
    throw invalidRequest(`expires_at must be at most ${maxDays} days ahead.`, 'expires_at', 'invalid', { max_days: maxDays });
  }
  const { projectIds, groupIds } = request.scope;
  if (projectIds.length + groupIds.length === 0) throw invalidRequest('A key must name at least one project or group.', 'scope', 'required');
  if (projectIds.length + groupIds.length > ACCESS_KEY_SCOPE_MAX_ITEMS) {
    throw invalidRequest(`A key may name at most ${ACCESS_KEY_SCOPE_MAX_ITEMS} projects and groups.`, 'scope', 'invalid');
  }
  const ownerGrants = await storage.effectiveGrants(owner.id);
  await requireScopeVisible(storage, actor.grants, ownerGrants, request.scope);

  const secret = generateAccessKey();
  const key = await storage.write(async (tx) => {
    const live = (await tx.listAccessKeys(owner.id)).filter((k) => accessKeyLive(k, now)).length;
    if (live >= ACCESS_KEYS_PER_USER_MAX) throw invalidRequest(`A person may hold at most ${ACCESS_KEYS_PER_USER_MAX} live access keys.`);
    const row = await tx.insertAccessKey({
      userId: owner.id,
      label: request.label,
      keyHash: hashAccessKey(secret),
      scope: scopeJson(request.scope),
      createdBy: actor.userId,
      createdAt: now,
      expiresAt: request.expiresAt,
    });
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'access_key.created', targetType: 'access_key', targetId: row.id, metadata: auditMetadata(row) },
      now,
    );
    return row;
  });
  return { key, secret };
}

/** 404 for a scope item missing or hidden from the caller; 403 for one the key's owner holds no role over. */
async function requireScopeVisible(
  storage: Storage,
  callerGrants: readonly RoleGrant[],
  ownerGrants: readonly RoleGrant[],
  scope: AccessKeyScope,
): Promise<void> {
  for (const id of scope.groupIds) {
    const group = await storage.getGroup(id);
    if (!group || !canSeeGroup(callerGrants, id)) throw notFound(`No such group: ${id}.`);
    if (!canSeeGroup(ownerGrants, id)) throw forbidden(`The key's owner holds no role covering group ${id}.`);
  }
  for (const id of scope.projectIds) {
    const project = await storage.getProject(id);
    if (!project || !canSeeProject(callerGrants, project)) throw notFound(`No such project: ${id}.`);
    if (!canSeeProject(ownerGrants, project)) throw forbidden(`The key's owner holds no role covering project ${id}.`);
  }
}

/** A person's keys, newest first, revoked and expired ones included (never a key or its hash). */
export async function listAccessKeys(storage: Storage, actor: Actor, userId: number): Promise<AccessKeyRow[]> {
  await requireKeyOwner(storage, actor, userId);
  return storage.listAccessKeys(userId);
}

/**
 * Revokes a key (404 for a key that does not exist or is someone else's,
 * unless the caller is an administrator). Revoking a revoked key keeps the
 * first `revoked_at` and writes no second audit row.
 */
export function revokeAccessKey(storage: Storage, actor: Actor, keyId: number, now: number): Promise<AccessKeyRow> {
  return storage.write(async (tx) => {
    const key = await tx.getAccessKey(keyId);
    if (!key || (key.userId !== actor.userId && !isAdmin(actor.grants))) throw notFound('No such access key.');
    const revoked = await tx.revokeAccessKey(keyId, now);
    if (revoked === null) return (await tx.getAccessKey(keyId)) ?? key;
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'access_key.revoked', targetType: 'access_key', targetId: keyId, metadata: auditMetadata(revoked) },
      now,
    );
    return revoked;
  });
}

/** What an audit row says about a key: whose, its label and scope; never the key. */
function auditMetadata(row: AccessKeyRow): Record<string, unknown> {
  return { user_id: row.userId, label: row.label, scope: JSON.parse(row.scope) as unknown, expires_at: isoTimestamp(row.expiresAt) };
}

/**
 * The projects a key may list: those its scope names (directly or by
 * group) that its person may see now. Groups of the scope the person
 * sees are listed whole; other projects are resolved to their group once
 * (at most the scope's 100, plus the person's own project grants).
 */
export async function accessKeyVisibility(db: ReadOps, grants: readonly RoleGrant[], scope: AccessKeyScope): Promise<Visibility> {
  const global = hasGlobalGrant(grants);
  const groupIds = scope.groupIds.filter((id) => global || canSeeGroup(grants, id));
  const candidates = new Set(scope.projectIds);
  for (const g of grants) if (g.scope_type === 'project' && g.scope_id !== null) candidates.add(g.scope_id);
  const projectIds: number[] = [];
  for (const id of candidates) {
    const project = await db.getProject(id);
    if (!project || !canSeeProject(grants, project)) continue;
    if (scope.projectIds.includes(id) || scope.groupIds.includes(project.groupId)) projectIds.push(id);
  }
  return { all: false, groupIds, projectIds };
}
