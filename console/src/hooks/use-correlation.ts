/**
 * Every entry sharing one correlation value within a scope (a group's
 * projects or one project), read page after page up to a cap and sorted
 * oldest first. A new question drops the answer of the one it replaces.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import type { Page } from '../api-types';
import type { Entry } from '../components/entry-detail';

/** Most entries one timeline reads: a request's story, not a project's history. */
export const CORRELATION_CAP = 2000;

export interface Correlation {
  /** Oldest first; null until read. */
  items: Entry[] | null;
  /** More entries share the value than the cap let it read. */
  capped: boolean;
  error: string | null;
}

/**
 * `scope`: `{group_id}` or `{project_id}`; `enabled`: the field and value
 * make a question; `key`: its identity (asked again when it changes).
 */
export function useCorrelation(scope: Record<string, string>, field: string, value: string, enabled: boolean, key: string): Correlation {
  const [items, setItems] = useState<Entry[] | null>(null);
  const [capped, setCapped] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!enabled) return;
    let cancelled = false;
    (async () => {
      const all: Entry[] = [];
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ ...scope, [field]: value, limit: '200' });
        if (cursor) q.set('cursor', cursor);
        const page: Page<Entry> = await call(`/v1/logs?${q}`);
        all.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor && all.length < CORRELATION_CAP && !cancelled);
      if (cancelled) return;
      setCapped(Boolean(cursor));
      all.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.id - b.id);
      setItems(all);
    })().catch((err: Error) => setError(err.message));
    return () => {
      cancelled = true;
    };
  }, [key]);
  return { items, capped, error };
}
