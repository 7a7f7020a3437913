/**
 * The sole-owner guard, one implementation for user deletion,
 * self-deletion, team member removal and role revocation: run the change
 * inside the caller's transaction, recount the owners of the groups it may
 * affect, and refuse (rolling the transaction back) when a group that had an
 * owner would be left with none. A group that never had an owner never blocks.
 */
import { conflict } from '../core/errors.js';
import type { WriteOps } from '../storage/storage.js';

export async function guardGroupOwners<T>(tx: WriteOps, groupIds: readonly number[], change: () => Promise<T>): Promise<T> {
  const ids = [...new Set(groupIds)];
  if (ids.length === 0) return change();
  // Concurrent guarded changes of one group take turns (PostgreSQL), so each counts the other's result.
  await tx.lockGroups(ids);
  const before = await tx.countGroupOwners(ids);
  const result = await change();
  const after = new Map((await tx.countGroupOwners(ids)).map((g) => [g.groupId, g.owners]));
  const blocking = before.filter((g) => g.owners > 0 && (after.get(g.groupId) ?? 0) === 0);
  if (blocking.length > 0) {
    throw conflict('sole_group_owner', 'This change would leave a group without an owner.', {
      blocking_groups: blocking.map((g) => ({ id: g.groupId, name: g.name })),
    });
  }
  return result;
}
