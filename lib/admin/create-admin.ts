/**
 * Administrators created outside the API: the first one at startup on an
 * empty database (general convention 7) and any later one through the
 * `create-admin` command or its exported function. At most one user is
 * ever primary; the database's unique index is the final word when two
 * processes race.
 */
import { randomBytes } from 'node:crypto';
import type { DatabaseConfig } from '../core/config.js';
import { silentLogger, type ServiceLogger } from '../core/logger.js';
import { createPasswordHasher, type PasswordHasher } from '../auth/passwords.js';
import { checkNewPassword, checkUsername } from './users.js';
import { openStorage } from '../storage/open-storage.js';
import type { Storage, WriteOps } from '../storage/storage.js';
import type { UserRow } from '../storage/types-org.js';
import { LogServiceError, StorageConflict } from '../core/errors.js';

export interface CreatedAdmin {
  user: UserRow;
  /** The password to hand to the person: the given one or a generated one. */
  password: string;
  /** The password was generated here and must be shown once. */
  generated: boolean;
}

/** 18 random bytes, base64url: 24 characters, within the password rule. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * Inserts an administrator (user row, global admin grant, audit row) in one
 * transaction. `primary`: 'if-first' makes the user primary when nobody ever
 * was; 'never' does not.
 */
export async function insertAdmin(
  tx: WriteOps,
  input: { username: string; passwordHash: string; now: number; primary: 'if-none-yet' | 'never' },
): Promise<UserRow> {
  const isPrimaryAdmin = input.primary === 'if-none-yet' && !(await tx.hasPrimaryAdmin());
  const user = await tx.insertUser({
    username: input.username,
    passwordHash: input.passwordHash,
    displayName: null,
    email: null,
    mustChangePassword: true,
    isPrimaryAdmin,
    createdAt: input.now,
  });
  await tx.insertRoleAssignment({ subjectType: 'user', subjectId: user.id, role: 'admin', scopeType: 'global', scopeId: null, createdAt: input.now });
  // Made outside the API: it keeps its password when password sign-in is off.
  await tx.markBreakGlassAccount(user.id);
  await tx.insertAudit({
    actorUserId: null,
    action: 'user.created',
    targetType: 'user',
    targetId: user.id,
    metadata: { username: user.username },
    createdAt: input.now,
  });
  return user;
}

/**
 * Creates the first administrator when the users table is empty. Returns
 * null when users exist (also when another process won the race).
 */
export async function bootstrapFirstAdmin(
  storage: Storage,
  hasher: PasswordHasher,
  options: { username: string; password: string | null; now: number },
): Promise<CreatedAdmin | null> {
  if ((await storage.countUsers()) > 0) return null;
  const generated = options.password === null;
  const password = options.password ?? generatePassword();
  const passwordHash = await hasher.hash(password);
  try {
    const user = await storage.write(async (tx) => {
      if ((await tx.countUsers()) > 0) return null;
      return insertAdmin(tx, { username: options.username, passwordHash, now: options.now, primary: 'if-none-yet' });
    });
    return user ? { user, password, generated } : null;
  } catch (err) {
    // Another process created the first user (or the primary) at the same moment.
    if (err instanceof StorageConflict) return null;
    throw err;
  }
}

export interface CreateAdminOptions {
  username: string;
  /** Omit to generate one (returned, to be shown once). */
  password?: string | null;
  logger?: ServiceLogger;
  /** scrypt cost; the default follows OWASP. */
  passwordHashLogN?: number;
}

/**
 * Creates an administrator with `must_change_password` true, primary
 * only if no user ever was. Needs only the database settings. Throws a
 * LogServiceError `invalid_request` (naming the field) for a username or
 * password the API would refuse, and `username_taken` when the name is
 * taken (deleted users keep theirs).
 */
export async function createAdmin(database: DatabaseConfig, options: CreateAdminOptions): Promise<CreatedAdmin> {
  if (!options.username) throw new LogServiceError('invalid_request', 'A username is required.', { details: { field: 'username', reason: 'required' } });
  // The same rules as an account made through POST /v1/users.
  checkUsername(options.username);
  const generated = options.password === undefined || options.password === null;
  const password = generated ? generatePassword() : (options.password as string);
  checkNewPassword(password, 'password');
  const storage = await openStorage(database, { logger: options.logger ?? silentLogger });
  try {
    const hasher = createPasswordHasher(options.passwordHashLogN === undefined ? {} : { logN: options.passwordHashLogN });
    const passwordHash = await hasher.hash(password).finally(() => hasher.close());
    const now = Date.now();
    const insert = (primary: 'if-none-yet' | 'never') => storage.write((tx) => insertAdmin(tx, { username: options.username, passwordHash, now, primary }));
    let user: UserRow;
    try {
      user = await insert('if-none-yet');
    } catch (err) {
      if (!(err instanceof StorageConflict)) throw err;
      if (err.constraint === 'username') throw new LogServiceError('username_taken', `The username '${options.username}' is taken.`);
      // Someone became primary between our check and our insert: this one is not.
      user = await insert('never');
    }
    return { user, password, generated };
  } catch (err) {
    if (err instanceof StorageConflict && err.constraint === 'username') {
      throw new LogServiceError('username_taken', `The username '${options.username}' is taken.`);
    }
    throw err;
  } finally {
    await storage.close();
  }
}
