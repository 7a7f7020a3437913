/**
 * User administration: create, list, patch, block, unblock and delete users.
 * Every change re-reads its target inside the write transaction, applies the
 * side effects the state table lists (token_version bumps, refresh-token
 * revocation, `must_change_password`, `email_verified_at`) and writes its
 * audit row in that same transaction (a refused request writes none). Callers
 * have already checked that the actor is an admin (and, for PATCH, that the
 * target exists: a 404 comes before body validation).
 */
import { LogServiceError, StorageConflict, conflict, invalidRequest, notFound } from '../core/errors.js';
import type { ReadOps, Storage, WriteOps } from '../storage/storage.js';
import type { UserChanges, UserRow } from '../storage/types-org.js';
import { checkPasswordRule, type PasswordHasher } from '../auth/passwords.js';
import { recordAudit } from '../audit/audit.js';
import { rejectNul } from '../core/text-fields.js';
import { guardGroupOwners } from './owner-guard.js';

/** What user administration needs from the service: the database, password hashing and the clock. */
export interface UserAdminDeps {
  storage: Storage;
  passwords: PasswordHasher;
  now(): number;
}

export const USERNAME_MAX_CHARS = 128;
export const EMAIL_MAX_CHARS = 254;
export const DISPLAY_NAME_MAX_CHARS = 200;

export interface NewUserInput {
  username: string;
  password: string;
  displayName: string | null;
  email: string | null;
}

/** `PATCH /v1/users/:id`: absent keys stay as they are. */
export interface UserPatch {
  email?: string | null;
  displayName?: string | null;
  password?: string;
}

// Control characters would make a username ambiguous in logs and audit views.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/;

/** The username rule of every new account (API, `create-admin`, bootstrap): 1 to 128 characters, no control characters. */
export function checkUsername(username: string): void {
  if (username.length === 0 || CONTROL_CHARS.test(username)) {
    throw invalidRequest('The username must be non-empty and contain no control characters.', 'username', 'invalid');
  }
  if ([...username].length > USERNAME_MAX_CHARS) {
    throw invalidRequest(`The username must be at most ${USERNAME_MAX_CHARS} characters.`, 'username', 'too_long', { max_length: USERNAME_MAX_CHARS });
  }
}

/** The password rule, and no U+0000 (scrypt cannot tell a trailing NUL from none). */
export function checkNewPassword(password: string, field: 'password' | 'new_password'): void {
  rejectNul(password, field);
  checkPasswordRule(password, field);
}

function checkEmail(email: string | null | undefined): void {
  if (email === null || email === undefined) return;
  rejectNul(email, 'email');
  if ([...email].length > EMAIL_MAX_CHARS) {
    throw invalidRequest(`The email must be at most ${EMAIL_MAX_CHARS} characters.`, 'email', 'too_long', { max_length: EMAIL_MAX_CHARS });
  }
  if (!EMAIL_SHAPE.test(email)) throw invalidRequest('The email is not an email address.', 'email', 'invalid');
}

function checkDisplayName(displayName: string | null | undefined): void {
  rejectNul(displayName, 'display_name');
  if (typeof displayName === 'string' && [...displayName].length > DISPLAY_NAME_MAX_CHARS) {
    throw invalidRequest(`The display name must be at most ${DISPLAY_NAME_MAX_CHARS} characters.`, 'display_name', 'too_long', {
      max_length: DISPLAY_NAME_MAX_CHARS,
    });
  }
}

/** Maps the database's uniqueness verdicts to the API's 409s. */
function mapConflict(err: unknown): unknown {
  if (err instanceof StorageConflict) {
    if (err.constraint === 'username') return conflict('username_taken', 'The username is taken.');
    if (err.constraint === 'email') return conflict('email_taken', 'The email is taken.');
  }
  return err;
}

/** The user with this id (deleted ones included), or 404. */
export async function findUserOr404(ops: ReadOps, id: number): Promise<UserRow> {
  const user = await ops.getUserById(id);
  if (!user) throw notFound('No such user.');
  return user;
}

/**
 * `POST /v1/users`: the new account's password was set by someone else, so
 * `must_change_password` is always true; never primary.
 */
export async function createUser(deps: UserAdminDeps, actor: UserRow, input: NewUserInput): Promise<UserRow> {
  checkUsername(input.username);
  checkNewPassword(input.password, 'password');
  checkEmail(input.email);
  checkDisplayName(input.displayName);
  const passwordHash = await deps.passwords.hash(input.password);
  const now = deps.now();
  try {
    return await deps.storage.write(async (tx) => {
      const user = await tx.insertUser({
        username: input.username,
        passwordHash,
        displayName: input.displayName,
        email: input.email,
        mustChangePassword: true,
        isPrimaryAdmin: false,
        createdAt: now,
      });
      await recordAudit(
        tx,
        { actorUserId: actor.id, action: 'user.created', targetType: 'user', targetId: user.id, metadata: { username: user.username } },
        now,
      );
      return user;
    });
  } catch (err) {
    throw mapConflict(err);
  }
}

/**
 * `PATCH /v1/users/:id`. A new email clears `email_verified_at`; a password
 * set here is temporary (must_change_password), revokes the target's refresh
 * tokens and bumps token_version. `user.updated` names the changed fields
 * (never a value) and is written only when something changed.
 */
export async function updateUser(deps: UserAdminDeps, actor: UserRow, targetId: number, patch: UserPatch): Promise<UserRow> {
  if (patch.password !== undefined) checkNewPassword(patch.password, 'password');
  checkEmail(patch.email);
  checkDisplayName(patch.displayName);
  const passwordHash = patch.password === undefined ? undefined : await deps.passwords.hash(patch.password);
  const now = deps.now();
  try {
    return await deps.storage.write(async (tx) => {
      const target = await findUserOr404(tx, targetId);
      const changes: UserChanges = {};
      const changed: string[] = [];
      if (patch.email !== undefined && patch.email !== target.email) {
        changes.email = patch.email;
        changes.emailVerifiedAt = null;
        changed.push('email');
      }
      if (patch.displayName !== undefined && patch.displayName !== target.displayName) {
        changes.displayName = patch.displayName;
        changed.push('display_name');
      }
      if (passwordHash !== undefined) {
        changes.passwordHash = passwordHash;
        changes.mustChangePassword = true;
        changed.push('password');
      }
      if (changed.length === 0) return target;
      const updated = await tx.updateUser(targetId, changes);
      if (passwordHash !== undefined) {
        await tx.revokeUserRefreshTokens(targetId, now);
        await tx.bumpTokenVersion([targetId]);
      }
      await recordAudit(tx, { actorUserId: actor.id, action: 'user.updated', targetType: 'user', targetId, metadata: { changed_fields: changed } }, now);
      return updated;
    });
  } catch (err) {
    throw mapConflict(err);
  }
}

/** `POST /v1/users/:id/block`: deactivates, bumps token_version, revokes refresh tokens. Idempotent. */
export async function blockUser(deps: UserAdminDeps, actor: UserRow, targetId: number): Promise<UserRow> {
  const now = deps.now();
  return deps.storage.write(async (tx) => {
    const target = await findUserOr404(tx, targetId);
    if (!target.isActive) return target;
    const updated = await tx.updateUser(targetId, { isActive: false });
    await tx.revokeUserRefreshTokens(targetId, now);
    await tx.bumpTokenVersion([targetId]);
    await recordAudit(tx, { actorUserId: actor.id, action: 'user.blocked', targetType: 'user', targetId }, now);
    return updated;
  });
}

/** `POST /v1/users/:id/unblock`: reactivates a live account; a deleted one is 409 `deleted_account`. */
export async function unblockUser(deps: UserAdminDeps, actor: UserRow, targetId: number): Promise<UserRow> {
  const now = deps.now();
  return deps.storage.write(async (tx) => {
    const target = await findUserOr404(tx, targetId);
    if (target.deletedAt !== null) throw conflict('deleted_account', 'The account is deleted and cannot be unblocked.');
    if (target.isActive) return target;
    const updated = await tx.updateUser(targetId, { isActive: true });
    await recordAudit(tx, { actorUserId: actor.id, action: 'user.unblocked', targetType: 'user', targetId }, now);
    return updated;
  });
}

/** 403 `cannot_delete_primary_admin`. */
export function cannotDeletePrimaryAdmin(): LogServiceError {
  return new LogServiceError('cannot_delete_primary_admin', 'The primary administrator cannot be deleted.');
}

/**
 * Deletes an account inside the caller's transaction: guards first
 * (primary admin, then the sole-owner guard on the state after the change),
 * then `deleted_at` and `is_active` false, the user's own role assignments
 * and team memberships removed, refresh tokens revoked, token_version
 * bumped, `user.deleted` audited. The row stays, so the username and email
 * stay taken. An account already deleted is left exactly as it is (first
 * `deleted_at` kept); returns whether anything changed.
 */
export async function deleteUserInTransaction(tx: WriteOps, target: UserRow, actorUserId: number, now: number): Promise<boolean> {
  if (target.deletedAt !== null) return false;
  if (target.isPrimaryAdmin) throw cannotDeletePrimaryAdmin();
  const owned = await tx.groupsOwnedBy(target.id);
  await guardGroupOwners(
    tx,
    owned.map((g) => g.id),
    async () => {
      await tx.deleteUserRoleAssignments(target.id);
      await tx.removeUserFromAllTeams(target.id);
    },
  );
  await tx.updateUser(target.id, { deletedAt: now, isActive: false });
  await tx.revokeUserRefreshTokens(target.id, now);
  await tx.bumpTokenVersion([target.id]);
  await recordAudit(tx, { actorUserId, action: 'user.deleted', targetType: 'user', targetId: target.id }, now);
  return true;
}

/** `DELETE /v1/users/:id` by an admin; deleting oneself goes through `/v1/users/me`. */
export async function deleteUserByAdmin(deps: UserAdminDeps, actor: UserRow, targetId: number): Promise<void> {
  if (targetId === actor.id) {
    throw new LogServiceError('self_deletion_requires_me', 'To delete your own account use DELETE /v1/users/me with your password.');
  }
  const now = deps.now();
  await deps.storage.write(async (tx) => {
    const target = await findUserOr404(tx, targetId);
    await deleteUserInTransaction(tx, target, actor.id, now);
  });
}
