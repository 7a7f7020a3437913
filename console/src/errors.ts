/**
 * An API error in words. Most messages are already sentences; the sole-owner
 * conflict also names the groups that would be left without an owner.
 */
import { ApiError } from './api';

interface BlockingGroup {
  id: number;
  name: string;
}

function blockingGroups(err: ApiError): BlockingGroup[] {
  const list = err.details?.['blocking_groups'];
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
