/**
 * What a signed-in person does to their own account: change the password
 * and delete the account. Both confirm the current password
 * (401 `invalid_grant` in the general envelope when wrong) behind the
 * subject bucket `user:<id>`, and both are allowed while
 * `must_change_password` is set.
 */
import { LogServiceError, unauthorized } from '../core/errors.js';
import type { UserRow } from '../storage/types-org.js';
import type { WriteOps } from '../storage/storage.js';
import type { Throttle, ThrottleOrigin } from '../auth/throttle.js';
import { recordAudit } from '../audit/audit.js';
import { checkNewPassword, deleteUserInTransaction, type UserAdminDeps } from './users.js';

/** User administration's needs plus the throttle that guards password confirmation. */
export interface AccountDeps extends UserAdminDeps {
  throttle: Throttle;
}

function wrongPassword(): LogServiceError {
  return new LogServiceError('invalid_grant', 'The current password is incorrect.', { status: 401 });
}

/**
 * Confirms the caller's password behind their subject bucket; a wrong one
 * spends the token and answers 401, a right one refills the bucket.
 */
async function confirmPassword(deps: AccountDeps, user: UserRow, password: string, origin: ThrottleOrigin): Promise<void> {
  const attempt = await deps.throttle.beginAttempt(origin, { key: `user:${user.id}`, actorUserId: async () => user.id });
  try {
    const ok = await deps.passwords.verify(user.passwordHash, password);
    if (!ok) {
      attempt.failed();
      throw wrongPassword();
    }
    attempt.succeeded();
  } finally {
    attempt.abandoned();
  }
}

/**
 * The caller's row, locked for the rest of the transaction, as long as it
 * is the one the password was confirmed against. The hashing in between
 * takes a while; if meanwhile an administrator reset the password, blocked
 * or deleted the account, or anything else moved its token_version, the
 * caller's access token is no longer valid, so the answer is the 401 the
 * next request with it would get, and nothing is written.
 */
async function unchangedAccount(tx: WriteOps, seen: UserRow): Promise<UserRow> {
  const current = await tx.getUserForUpdate(seen.id);
  if (!current || current.tokenVersion !== seen.tokenVersion || current.passwordHash !== seen.passwordHash) {
    throw unauthorized('Your account changed while this request ran (for example its password was reset); sign in again.');
  }
  return current;
}

/**
 * `POST /v1/auth/change-password`: the rule is checked before the current
 * password; success stores the new hash, clears
 * `must_change_password`, bumps token_version (every access token, the
 * caller's included, answers 401 from now on) and keeps refresh tokens.
 */
export async function changeOwnPassword(
  deps: AccountDeps,
  user: UserRow,
  input: { currentPassword: string; newPassword: string },
  origin: ThrottleOrigin,
): Promise<void> {
  checkNewPassword(input.newPassword, 'new_password');
  await confirmPassword(deps, user, input.currentPassword, origin);
  const passwordHash = await deps.passwords.hash(input.newPassword);
  const now = deps.now();
  await deps.storage.write(async (tx) => {
    await unchangedAccount(tx, user);
    await tx.updateUser(user.id, { passwordHash, mustChangePassword: false });
    await tx.bumpTokenVersion([user.id]);
    await recordAudit(tx, { actorUserId: user.id, action: 'user.password_changed', targetType: 'user', targetId: user.id }, now);
  });
}

/**
 * `DELETE /v1/users/me`: password first, then the primary-admin and
 * sole-owner guards and the deletion itself, as for an admin deletion.
 */
export async function deleteOwnAccount(deps: AccountDeps, user: UserRow, password: string, origin: ThrottleOrigin): Promise<void> {
  await confirmPassword(deps, user, password, origin);
  const now = deps.now();
  await deps.storage.write(async (tx) => {
    const current = await unchangedAccount(tx, user);
    await deleteUserInTransaction(tx, current, user.id, now);
  });
}
