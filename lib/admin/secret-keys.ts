/**
 * Project secret keys: `slk_` + 32 random bytes in base64url, shown
 * once at creation; only the SHA-256 hash is stored and keys are looked up
 * by that hash. Revocation is irreversible and takes effect at once for
 * every process sharing the database, because ingestion reads `revoked_at`
 * from the database (no process-local key cache to invalidate).
 */
import { createHash, randomBytes } from 'node:crypto';
import { notFound } from '../core/errors.js';
import type { ProjectRow, SecretKeyRow } from '../storage/types-org.js';
import type { Storage } from '../storage/storage.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor } from './org-access.js';

export const SECRET_KEY_PREFIX = 'slk_';

/** A new plaintext key: `slk_` + 32 random bytes, base64url (43 characters). */
export function generateSecretKey(): string {
  return SECRET_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form of a key, and the lookup value ingestion uses: SHA-256, lower-case hex. */
export function hashSecretKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Creates a key; the plaintext is returned here and never again. The caller checked it may manage the project. */
export async function createSecretKey(
  storage: Storage,
  actor: Actor,
  project: ProjectRow,
  label: string | null,
  now: number,
): Promise<{ key: SecretKeyRow; secret: string }> {
  const secret = generateSecretKey();
  const key = await storage.write(async (tx) => {
    const row = await tx.insertSecretKey({ projectId: project.id, label, keyHash: hashSecretKey(secret), createdAt: now });
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: 'secret_key.created', targetType: 'secret_key', targetId: row.id, metadata: { project_id: project.id, label } },
      now,
    );
    return row;
  });
  return { key, secret };
}

/** Metadata of the project's keys, newest first. */
export function listSecretKeys(storage: Storage, project: ProjectRow): Promise<SecretKeyRow[]> {
  return storage.listSecretKeys(project.id);
}

/**
 * Revokes a key of this project (404 for a key of another project).
 * Revoking an already revoked key keeps the first `revoked_at` and writes no
 * second audit row.
 */
export function revokeSecretKey(storage: Storage, actor: Actor, project: ProjectRow, keyId: number, now: number): Promise<SecretKeyRow> {
  return storage.write(async (tx) => {
    const key = await tx.getSecretKey(keyId);
    if (!key || key.projectId !== project.id) throw notFound('No such secret key.');
    const revoked = await tx.revokeSecretKey(keyId, now);
    // Already revoked (also by a concurrent request that won): keep the first revoked_at, no second audit row.
    if (revoked === null) return (await tx.getSecretKey(keyId)) ?? key;
    await recordAudit(
      tx,
      {
        actorUserId: actor.userId,
        action: 'secret_key.revoked',
        targetType: 'secret_key',
        targetId: keyId,
        metadata: { project_id: project.id, label: key.label },
      },
      now,
    );
    return revoked;
  });
}
