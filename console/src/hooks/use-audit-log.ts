/**
 * The audit log for one query, newest first: the names its rows refer to
 * (loaded once per visit, teams only when a row names one), the newest page
 * as soon as the query changes, older pages on demand, and the retention
 * policy each answer states. Owns its requests: a new query aborts the
 * newest page in flight, and an older page asked for another query is dropped.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import type { AuditLogPage, Page } from '../api-types';
import { loadAuditNames, loadTeamNames } from '../audit-names';
import { retentionInWords, type AuditEntry } from '../audit-words';

/** An audit page as the console reads it (an action it does not know still reads, generically). */
type AuditPage = Omit<AuditLogPage, 'items'> & Page<AuditEntry>;

export interface AuditLog {
  /** The rows shown, or null while the newest page of the query is on its way (or refused). */
  rows: AuditEntry[] | null;
  /** The next (older) page's cursor; null on the last page. */
  cursor: string | null;
  loading: boolean;
  error: string | null;
  /** The retention policy in words, from the last answer. */
  retention: string | null;
  /** The names of users, groups and projects are loaded (the filters offer them). */
  namesReady: boolean;
  /** Asks the next older page, unless one is on its way or this was the last. */
  older(): void;
  /** Asks the newest page again. */
  refetch(): void;
}

const mentionsTeam = (rows: AuditEntry[]) => rows.some((r) => r.target_type === 'team' || r.metadata?.subject_type === 'team');

/** `query`: the service's query string; `refresh` asks again when it changes. */
export function useAuditLog(query: string, refresh: number): AuditLog {
  const [rows, setRows] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [retention, setRetention] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [namesReady, setNamesReady] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [again, setAgain] = useState(0);
  /** The query the rows shown belong to: an older page asked for another one is dropped. */
  const shownQuery = useRef(query);
  shownQuery.current = query;

  useEffect(() => {
    loadAuditNames().then(
      () => setNamesReady(true),
      (err: Error) => setError(err.message),
    );
  }, []);

  const fetchPage = async (after: string | null, signal?: AbortSignal): Promise<AuditPage> => {
    const page = await call<AuditPage>(`/v1/audit-log?${query}${after ? `&cursor=${encodeURIComponent(after)}` : ''}`, signal ? { signal } : {});
    setRetention(retentionInWords(page.audit_retention_days, page.auth_event_retention_days));
    if (mentionsTeam(page.items)) void loadTeamNames();
    return page;
  };

  // A new query: the newest page.
  useEffect(() => {
    const abort = new AbortController();
    setRows(null);
    setCursor(null);
    setError(null);
    setLoading(true);
    fetchPage(null, abort.signal)
      .then((page) => {
        setRows(page.items);
        setCursor(page.next_cursor);
      })
      .catch((err: Error) => {
        if (!abort.signal.aborted) setError(err.message);
      })
      .finally(() => setLoading(false));
    return () => abort.abort();
  }, [query, refresh, again]);

  const older = () => {
    if (!cursor || loading) return;
    const asked = query;
    setLoading(true);
    fetchPage(cursor)
      .then((page) => {
        if (shownQuery.current !== asked) return;
        setRows((old) => [...(old ?? []), ...page.items]);
        setCursor(page.next_cursor);
      })
      .catch((err: Error) => setError(err.message))
      .finally(() => setLoading(false));
  };

  return { rows, cursor, loading, error, retention, namesReady, older, refetch: () => setAgain((n) => n + 1) };
}
