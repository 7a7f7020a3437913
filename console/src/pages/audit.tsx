/**
 * The audit log (administrators): every filter of `GET /v1/audit-log` in
 * the URL, rows newest first in words, older pages through `next_cursor`,
 * and the retention policy.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import type { AuditLogPage, Page } from '../api-types';
import { loadAuditNames, loadTeamNames } from '../audit-names';
import { retentionInWords, type AuditEntry } from '../audit-words';
import { AUDIT_FILTERS, AuditFilters } from '../components/audit-filters';
import { AuditRow } from '../components/audit-row';
import { ErrorLine } from '../components/form';
import { navigate, refreshTick, route } from '../router';

/** An audit page as the console reads it (an action it does not know still reads, generically). */
type AuditPage = Omit<AuditLogPage, 'items'> & Page<AuditEntry>;

const PAGE_SIZE = 50;

/** The service's query for the URL (only its filters; `limit` may be set in the URL to page in smaller steps). */
function queryOf(params: URLSearchParams): URLSearchParams {
  const q = new URLSearchParams();
  for (const k of AUDIT_FILTERS) {
    const v = params.get(k);
    if (v) q.set(k, v);
  }
  q.set('limit', params.get('limit') ?? String(PAGE_SIZE));
  return q;
}

const mentionsTeam = (rows: AuditEntry[]) =>
  rows.some((r) => r.target_type === 'team' || r.metadata?.subject_type === 'team');

export function AuditPage() {
  const params = route.value.params;
  const query = queryOf(params).toString();
  const tick = refreshTick.value;
  const [rows, setRows] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [retention, setRetention] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [namesReady, setNamesReady] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** The query the rows shown belong to: an older page asked for another one is dropped. */
  const shownQuery = useRef(query);
  shownQuery.current = query;

  useEffect(() => {
    loadAuditNames().then(() => setNamesReady(true), (err: Error) => setError(err.message));
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
  }, [query, tick]);

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

  return (
    <main>
      <h1>Audit log</h1>
      {retention ? <p class="muted retention">{retention}</p> : null}
      <AuditFilters params={params} namesReady={namesReady} onSubmit={(p) => navigate('audit', p)} />
      <ErrorLine message={error} />
      {!rows ? (error ? null : <p role="status">Loading…</p>) : rows.length === 0 ? (
        <p class="empty">No audit entry matches.</p>
      ) : (
        <table class="list audit">
          <caption class="visually-hidden">Audit entries, newest first</caption>
          <thead>
            <tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Details</th></tr>
          </thead>
          <tbody>
            {rows.map((r) => <AuditRow key={r.id} entry={r} />)}
          </tbody>
        </table>
      )}
      {rows ? (
        <p class="pager">
          <span role="status">{`${rows.length}${cursor ? '+' : ''} ${rows.length === 1 && !cursor ? 'entry' : 'entries'}`}</span>{' '}
          {cursor ? <button type="button" disabled={loading} onClick={older}>Load older entries</button> : null}
        </p>
      ) : null}
    </main>
  );
}
