/**
 * An API error in words. Most messages are already sentences; the sole-owner
 * conflict also names the groups that would be left without an owner.
 */
import { ApiError } from './api';
import { groups, projects } from './scope';

interface BlockingGroup {
  id: number;
  name: string;
}

function blockingGroups(err: ApiError): BlockingGroup[] {
  const list = err.details?.blocking_groups;
  return Array.isArray(list) ? (list as BlockingGroup[]).filter((g) => g && typeof g.name === 'string') : [];
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError && err.code === 'sole_group_owner') {
    const names = blockingGroups(err).map((g) => g.name);
    if (names.length === 1) return `Refused: group ${names[0]} would be left without an owner. Make someone else its owner first.`;
    if (names.length > 1) return `Refused: groups ${names.join(', ')} would be left without an owner. Make someone else their owner first.`;
  }
  return (err as Error).message;
}

/** "project checkout", or "project 7" for one the caller does not see. */
export function scopeName(params: URLSearchParams): string {
  const projectId = params.get('project_id');
  if (projectId) return `project ${projects.value?.find((p) => String(p.id) === projectId)?.name ?? projectId}`;
  const groupId = params.get('group_id') ?? '';
  return `group ${groups.value?.find((g) => String(g.id) === groupId)?.name ?? groupId}`;
}

/**
 * A refused log query in words, naming the project or group of the link:
 * the case of a link to one the caller may not read, or that is gone.
 */
export function scopeRefusal(err: unknown, params: URLSearchParams): string {
  if (err instanceof ApiError && err.status === 403 && err.code === 'forbidden') {
    return `You may not read the logs of ${scopeName(params)}: no role of yours covers it. An administrator, or an owner of its group, can give you access.`;
  }
  if (err instanceof ApiError && err.status === 404) return `There is no ${scopeName(params)} (it may have been deleted).`;
  return errorText(err);
}
