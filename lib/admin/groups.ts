/**
 * Groups: created by an administrator, listed with visibility applied
 * inside the query (so the first page already holds visible groups).
 */
import type { GroupRow, Page } from '../storage/types-org.js';
import type { Storage } from '../storage/storage.js';
import { seesNothing, visibilityOf } from '../auth/rbac.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor } from './org-access.js';

/** Inserts the group and its `group.created` audit row in one transaction. The admin check is the route's. */
export function createGroup(storage: Storage, actor: Actor, name: string, now: number): Promise<GroupRow> {
  return storage.write(async (tx) => {
    const group = await tx.insertGroup(name, now);
    await recordAudit(tx, { actorUserId: actor.userId, action: 'group.created', targetType: 'group', targetId: group.id, metadata: { name } }, now);
    return group;
  });
}

/** Groups the caller may see, newest first; `nameContains` is matched case-insensitively. */
export async function listVisibleGroups(storage: Storage, actor: Actor, filter: Page & { nameContains?: string }): Promise<GroupRow[]> {
  const visibility = visibilityOf(actor.grants);
  if (seesNothing(visibility)) return [];
  return storage.listGroups({
    limit: filter.limit,
    ...(filter.beforeId === undefined ? {} : { beforeId: filter.beforeId }),
    ...(filter.nameContains === undefined ? {} : { nameContains: filter.nameContains.toLowerCase() }),
    visibility,
  });
}
