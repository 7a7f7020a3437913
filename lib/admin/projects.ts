/**
 * Projects: created inside a group with a mandatory retention and optional
 * quotas, listed flat with visibility applied inside the query, changed
 * through PATCH (audited as `project.quota_updated` with before and after),
 * blocked and unblocked by an administrator.
 */
import type { Page, ProjectRow, Visibility } from '../storage/types-org.js';
import type { Storage } from '../storage/storage.js';
import { seesNothing, visibilityOf } from '../auth/rbac.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor } from './org-access.js';

export interface NewProjectInput {
  name: string;
  retentionDays: number;
  maxEntries: number | null;
  maxBytes: number | null;
}

/** The PATCHable settings; an absent key stays as it is. */
export interface ProjectSettingsChange {
  retentionDays?: number;
  maxEntries?: number | null;
  maxBytes?: number | null;
}

/** Inserts the project and its `project.created` row. The caller checked it may manage the group. */
export function createProject(storage: Storage, actor: Actor, groupId: number, input: NewProjectInput, now: number): Promise<ProjectRow> {
  return storage.write(async (tx) => {
    const project = await tx.insertProject({ groupId, ...input, createdAt: now });
    await recordAudit(
      tx,
      {
        actorUserId: actor.userId,
        action: 'project.created',
        targetType: 'project',
        targetId: project.id,
        metadata: { name: input.name, group_id: groupId, retention_days: input.retentionDays },
      },
      now,
    );
    return project;
  });
}

/** Every project the caller may read (its group visible, or a grant on the project), newest first. */
export async function listVisibleProjects(
  storage: Storage,
  actor: Actor,
  filter: Page & { groupId?: number; nameContains?: string },
  /** What may be listed when narrower than the actor's grants (an access key's scope). */
  narrowed?: Visibility,
): Promise<ProjectRow[]> {
  const visibility = narrowed ?? visibilityOf(actor.grants);
  if (seesNothing(visibility)) return [];
  return storage.listProjects({
    limit: filter.limit,
    ...(filter.beforeId === undefined ? {} : { beforeId: filter.beforeId }),
    ...(filter.groupId === undefined ? {} : { groupId: filter.groupId }),
    ...(filter.nameContains === undefined ? {} : { nameContains: filter.nameContains.toLowerCase() }),
    visibility,
  });
}

function settingsOf(p: ProjectRow) {
  return { retention_days: p.retentionDays, max_entries: p.maxEntries, max_bytes: p.maxBytes };
}

/**
 * Applies a PATCH. The before/after pair is read inside the transaction, so
 * the audit row describes exactly what this change did; a PATCH that
 * changes no value writes nothing and no audit row.
 */
export function updateProjectSettings(storage: Storage, actor: Actor, projectId: number, change: ProjectSettingsChange, now: number): Promise<ProjectRow> {
  return storage.write(async (tx) => {
    const current = await tx.getProject(projectId);
    if (!current) throw new Error(`project ${projectId} vanished`);
    const changes: ProjectSettingsChange = {};
    if (change.retentionDays !== undefined && change.retentionDays !== current.retentionDays) changes.retentionDays = change.retentionDays;
    if (change.maxEntries !== undefined && change.maxEntries !== current.maxEntries) changes.maxEntries = change.maxEntries;
    if (change.maxBytes !== undefined && change.maxBytes !== current.maxBytes) changes.maxBytes = change.maxBytes;
    if (Object.keys(changes).length === 0) return current;
    const updated = await tx.updateProject(projectId, changes);
    await recordAudit(
      tx,
      {
        actorUserId: actor.userId,
        action: 'project.quota_updated',
        targetType: 'project',
        targetId: projectId,
        metadata: { before: settingsOf(current), after: settingsOf(updated) },
      },
      now,
    );
    return updated;
  });
}

/**
 * Blocks or unblocks (admin only; the route checked). Only a real transition
 * writes `project.blocked` / `project.unblocked`; repeating it answers the
 * project unchanged.
 */
export function setProjectBlocked(storage: Storage, actor: Actor, projectId: number, blocked: boolean, now: number): Promise<ProjectRow> {
  return storage.write(async (tx) => {
    const current = await tx.getProject(projectId);
    if (!current) throw new Error(`project ${projectId} vanished`);
    if (current.isBlocked === blocked) return current;
    const updated = await tx.updateProject(projectId, { isBlocked: blocked });
    await recordAudit(
      tx,
      { actorUserId: actor.userId, action: blocked ? 'project.blocked' : 'project.unblocked', targetType: 'project', targetId: projectId },
      now,
    );
    return updated;
  });
}
