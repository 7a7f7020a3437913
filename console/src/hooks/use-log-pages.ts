/**
 * The entries of one query, newest first, page after page through
 * `next_cursor`: the first page asked as soon as the query renders, older
 * pages on demand, entries followed live put on top. Owns its requests: a
 * new query drops the one in flight, lest the old query's rows land in the
 * new list.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import type { Page } from '../api-types';
import type { Entry } from '../components/entry-detail';

/** Entries per request: enough to fill a tall screen a few times, small enough to answer quickly. */
export const LOG_PAGE_SIZE = 200;

export interface LogPages {
  items: Entry[];
  /** The next (older) page's cursor; null on the last page. */
  cursor: string | null;
  loading: boolean;
  /** The first page of the current query has answered. */
  loaded: boolean;
  /** The query whose first page has been answered with rows (never after a refusal). */
  answered: string | null;
  error: string | null;
  /** Asks the next older page, unless one is on its way or this was the last. */
  loadMore(): void;
  /** Puts entries followed live on top (newest first). */
  prepend(newestFirst: Entry[]): void;
  /** The newest entry's id (0 for none): where following live starts. */
  newestId(): number;
  /** Asks the first page again. */
  refetch(): void;
}

/**
 * `query`: the service's query string, or null when there is nothing to ask
 * (no scope chosen). `refresh` asks again when it changes. `refusal` words
 * the first page's error (an older page's reads as its message).
 */
export function useLogPages(query: string | null, refresh: number, refusal: (err: unknown) => string): LogPages {
  const [items, setItems] = useState<Entry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const [answered, setAnswered] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [again, setAgain] = useState(0);
  const lastId = useRef(0);
  /** The next page being fetched: a new query drops it. */
  const more = useRef<AbortController | null>(null);

  // A new query: the first page, asked as soon as the query renders (not a frame later, as `useEffect` would).
  useLayoutEffect(() => {
    more.current?.abort();
    setItems([]);
    setCursor(null);
    setLoaded(false);
    setError(null);
    if (query === null) return;
    const abort = new AbortController();
    setLoading(true);
    call<Page<Entry>>(`/v1/logs?${query}&limit=${LOG_PAGE_SIZE}`, { signal: abort.signal })
      .then((page) => {
        if (abort.signal.aborted) return;
        setItems(page.items);
        setCursor(page.next_cursor);
        lastId.current = page.items[0]?.id ?? 0;
        setLoaded(true);
        setAnswered(query);
      })
      .catch((err: unknown) => {
        if (abort.signal.aborted) return;
        setError(refusal(err));
      })
      // A dropped answer leaves the flag to the query that replaced it.
      .finally(() => abort.signal.aborted || setLoading(false));
    return () => abort.abort();
  }, [query, refresh, again]);

  const loadMore = () => {
    if (!cursor || loading || query === null) return;
    const abort = new AbortController();
    more.current = abort;
    setLoading(true);
    call<Page<Entry>>(`/v1/logs?${query}&limit=${LOG_PAGE_SIZE}&cursor=${encodeURIComponent(cursor)}`, { signal: abort.signal })
      .then((page) => {
        if (abort.signal.aborted) return;
        setItems((old) => [...old, ...page.items]);
        setCursor(page.next_cursor);
      })
      .catch((err: Error) => {
        if (!abort.signal.aborted) setError(err.message);
      })
      .finally(() => abort.signal.aborted || setLoading(false));
  };

  const prepend = (newestFirst: Entry[]) => {
    if (newestFirst.length === 0) return;
    lastId.current = Number(newestFirst[0]!.id);
    setItems((old) => [...newestFirst, ...old]);
  };

  return { items, cursor, loading, loaded, answered, error, loadMore, prepend, newestId: () => lastId.current, refetch: () => setAgain((n) => n + 1) };
}
