/**
 * A list the service pages with `next_cursor` (users, groups), filtered by
 * one text parameter: the page shown, the cursors of the pages before it
 * (to go back), and reloading after a change.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from './api';
import type { Page } from './api-types';
import { errorText } from './errors';

const PAGE_SIZE = 50;

export function usePagedList<T>(path: string, filterParam: string, filter: string) {
  /** The cursors of the pages before this one (the first is null), for going back. */
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<Page<T> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = cursors[cursors.length - 1] ?? null;
  const load = async () => {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (filter) q.set(filterParam, filter);
    if (cursor) q.set('cursor', cursor);
    try {
      setPage(await call<Page<T>>(`${path}?${q}`));
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  };
  useEffect(() => void load(), [filter, cursor]);
  return {
    page,
    error,
    setError,
    reload: load,
    /** Back to the first page (a new filter). */
    restart: () => setCursors([null]),
    back: cursors.length > 1 ? () => setCursors(cursors.slice(0, -1)) : null,
    next: page?.next_cursor ? () => setCursors([...cursors, page.next_cursor]) : null,
  };
}
