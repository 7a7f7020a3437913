/**
 * The audit log (administrators): every filter of `GET /v1/audit-log` in
 * the URL, rows newest first in words, older pages through `next_cursor`,
 * and the retention policy. The data comes from `useAuditLog`.
 */
import { AUDIT_FILTERS, AuditFilters } from '../components/audit-filters';
import { AuditRow } from '../components/audit-row';
import { ErrorLine } from '../components/form';
import { useAuditLog } from '../hooks/use-audit-log';
import { navigate, refreshTick, route } from '../router';

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

export function AuditPage() {
  const params = route.value.params;
  const query = queryOf(params).toString();
  const tick = refreshTick.value;
  const { rows, cursor, loading, error, retention, namesReady, older } = useAuditLog(query, tick);

  return (
    <main>
      <h1>Audit log</h1>
      {retention ? <p class="muted retention">{retention}</p> : null}
      <AuditFilters params={params} namesReady={namesReady} onSubmit={(p) => navigate('audit', p)} />
      <ErrorLine message={error} />
      {!rows ? (
        error ? null : (
          <p role="status">Loading…</p>
        )
      ) : rows.length === 0 ? (
        <p class="empty">No audit entry matches.</p>
      ) : (
        <table class="list audit">
          <caption class="visually-hidden">Audit entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <AuditRow key={r.id} entry={r} />
            ))}
          </tbody>
        </table>
      )}
      {rows ? (
        <p class="pager">
          <span role="status">{`${rows.length}${cursor ? '+' : ''} ${rows.length === 1 && !cursor ? 'entry' : 'entries'}`}</span>{' '}
          {cursor ? (
            <button type="button" disabled={loading} onClick={older}>
              Load older entries
            </button>
          ) : null}
        </p>
      ) : null}
    </main>
  );
}
