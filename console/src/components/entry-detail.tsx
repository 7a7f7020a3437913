/** The side panel of one entry: its JSON tree, copy, and the ways out (correlate, context). */
import { useState } from 'preact/hooks';
import { copyText, localTime, utcTitle } from '../format';
import { CORRELATION_FIELDS } from '../query';
import { href } from '../router';
import { groupOfProject, groups, projectName } from '../scope';
import { JsonTree, type OnFilter } from './json-tree';

export type Entry = Record<string, unknown> & { id: number; project_id: number; level: string; event: string; timestamp: string };

/** Where "correlate" looks: the whole group when the caller sees it, else the entry's project. */
export function correlateHref(entry: Entry, field: string): string {
  const groupId = groupOfProject(entry.project_id);
  const inGroup = groupId !== null && (groups.value ?? []).some((g) => g.id === groupId);
  return href('correlate', {
    ...(inGroup ? { group_id: String(groupId) } : { project_id: String(entry.project_id) }),
    field,
    value: String(entry[field]),
    entry: String(entry.id),
  });
}

export function EntryDetail(props: { entry: Entry; onClose: () => void; onFilter?: OnFilter }) {
  const e = props.entry;
  const [copied, setCopied] = useState(false);
  const correlations = CORRELATION_FIELDS.filter((f) => e[f] !== null && e[f] !== undefined);
  return (
    <aside class="detail" aria-labelledby="detail-title">
      <div class="detail-head">
        <h2 id="detail-title">Entry {e.id}</h2>
        <button type="button" onClick={props.onClose} aria-label="Close entry">
          Close
        </button>
      </div>
      <p class="detail-meta">
        <span class={`lvl lvl-${e.level}`}>{e.level}</span> <time title={utcTitle(e.timestamp)}>{localTime(e.timestamp)}</time> in {projectName(e.project_id)}
      </p>
      <p class="detail-event">{String(e.event)}</p>
      <div class="detail-actions">
        <button type="button" onClick={async () => setCopied(await copyText(JSON.stringify(e, null, 2)))}>
          {copied ? 'Copied' : 'Copy JSON'}
        </button>
        <a class="button" href={href('context', { project_id: String(e.project_id), entry: String(e.id), ts: e.timestamp })}>
          Show context
        </a>
        {correlations.map((f) => (
          <a class="button" href={correlateHref(e, f)}>
            Correlate by {f}
          </a>
        ))}
      </div>
      <JsonTree value={e} onFilter={props.onFilter} />
    </aside>
  );
}
