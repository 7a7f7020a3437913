/** One audit row: when (local, UTC on hover), what in words with links, and its metadata as a tree. */
import { describeAudit, type AuditEntry, type Ref } from '../audit-words';
import { auditNames, teamGroupId } from '../audit-names';
import { localTime, utcTitle } from '../format';
import { href } from '../router';
import { JsonTree } from './json-tree';

/** Where a name leads: the users page filtered to them, a project's or a group's page. */
function linkOf(r: Ref): string | null {
  if (!r.known) return null;
  switch (r.kind) {
    case 'user':
      return href('users', { username: r.name });
    case 'project':
      return href('project', { id: String(r.id) });
    case 'group':
      return href('group', { id: String(r.id) });
    case 'team': {
      const groupId = teamGroupId(r.id);
      return groupId === undefined ? null : href('group', { id: String(groupId) });
    }
  }
}

export function Sentence(props: { entry: AuditEntry }) {
  return (
    <>
      {describeAudit(props.entry, auditNames).map((p) => {
        if (typeof p === 'string') return p;
        const to = linkOf(p);
        return to ? <a href={to}>{p.name}</a> : <span class={p.known ? undefined : 'muted'}>{p.name}</span>;
      })}
    </>
  );
}

export function AuditRow(props: { entry: AuditEntry }) {
  const e = props.entry;
  const hasDetails = Object.keys(e.metadata ?? {}).length > 0;
  return (
    <tr>
      <td class="when" title={utcTitle(e.created_at)}>
        {localTime(e.created_at)}
      </td>
      <td class="what">
        <Sentence entry={e} />
      </td>
      <td class="details">
        {hasDetails ? (
          <details>
            <summary>
              Details<span class="visually-hidden"> of entry {e.id}</span>
            </summary>
            <JsonTree value={e.metadata} />
          </details>
        ) : (
          <span class="muted">none</span>
        )}
      </td>
    </tr>
  );
}
