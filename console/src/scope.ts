/** The groups and projects the caller may see, loaded once per session for the pickers. */
import { signal } from '@preact/signals';
import { call } from './api';
import type { Group, Page, Project } from './api-types';

export type { Group, Project };

export const groups = signal<Group[] | null>(null);
export const projects = signal<Project[] | null>(null);
export const scopeError = signal<string | null>(null);

/** Every page of a listing, capped so a huge installation stays responsive (the picker filters by name beyond that). */
export async function all<T>(path: string, cap = 2000): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page: Page<T> = await call<Page<T>>(`${path}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < cap);
  return items;
}

export async function loadScopes(force = false): Promise<void> {
  if (!force && groups.value && projects.value) return;
  try {
    const [g, p] = await Promise.all([all<Group>('/v1/groups'), all<Project>('/v1/projects')]);
    groups.value = g.sort((a, b) => a.name.localeCompare(b.name));
    projects.value = p.sort((a, b) => a.name.localeCompare(b.name));
    scopeError.value = null;
  } catch (err) {
    scopeError.value = (err as Error).message;
  }
}

export function clearScopes(): void {
  groups.value = null;
  projects.value = null;
}

export function projectName(id: number): string {
  return projects.value?.find((p) => p.id === id)?.name ?? `project ${id}`;
}

export function groupOfProject(id: number): number | null {
  return projects.value?.find((p) => p.id === id)?.group_id ?? null;
}
