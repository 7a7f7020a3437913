/** One project: usage against its quotas, its retention and quotas (owners edit), block (admins), its keys. */
import { useEffect, useState } from 'preact/hooks';
import { call, session } from '../api';
import { ConfirmButton } from '../components/confirm';
import { Card, ErrorLine, Field } from '../components/form';
import { SecretKeys } from '../components/secret-keys';
import { UsageBar } from '../components/usage-bar';
import { isAdmin, ownsProject } from '../rights';
import { href, route } from '../router';
import { groups, loadScopes } from '../scope';
import { useSubmit } from '../submit';

export interface ProjectDetail {
  id: number;
  group_id: number;
  name: string;
  retention_days: number;
  max_entries: number | null;
  max_bytes: number | null;
  is_blocked: boolean;
  created_at: string;
  entry_count: number;
  total_bytes: number;
}

export function ProjectPage() {
  const id = Number(route.value.params.get('id') ?? 0);
  const me = session.value!;
  const [project, setProject] = useState<ProjectDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** Block and unblock: their refusal shows on the page's error line, which a reading without fault clears. */
  const blocking = useSubmit();
  const load = async () => {
    try {
      setProject(await call<ProjectDetail>(`/v1/projects/${id}`));
      setError(null);
      blocking.clear();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => void load(), [id]);
  useEffect(() => void loadScopes(), []);
  if (!project)
    return (
      <main>
        <h1>Project</h1>
        {error ? <ErrorLine message={error} /> : <p role="status">Loading…</p>}
      </main>
    );
  const owner = ownsProject(me, project);
  const groupName = groups.value?.find((g) => g.id === project.group_id)?.name;
  const block = (action: 'block' | 'unblock') =>
    blocking.run(async () => {
      await call(`/v1/projects/${project.id}/${action}`, { method: 'POST' });
      await load();
    });
  return (
    <main>
      <p>
        <a href={href('projects')}>All projects</a>
        {/* A project grant does not reveal its group: the link only when the group is visible. */}
        {groupName ? (
          <>
            {' '}
            · <a href={href('group', { id: String(project.group_id) })}>Group {groupName}</a>
          </>
        ) : null}
      </p>
      <h1>Project {project.name}</h1>
      <p>
        {project.is_blocked ? <strong class="error">Blocked: ingestion and queries are refused. </strong> : null}
        <a href={href('explore', { project_id: String(project.id) })}>Explore its logs</a>
      </p>
      <ErrorLine message={blocking.error ?? error} />
      <div class="cards">
        <Card title="Usage">
          <UsageBar label="Entries" used={project.entry_count} quota={project.max_entries} />
          <UsageBar label="Size" used={project.total_bytes} quota={project.max_bytes} unit=" bytes" />
        </Card>
        <Card title="Retention and quotas">
          {owner ? (
            <QuotaForm project={project} onSaved={setProject} />
          ) : (
            <p>
              Entries are kept {project.retention_days} days; entry quota {project.max_entries ?? 'none'}; byte quota {project.max_bytes ?? 'none'}.
            </p>
          )}
        </Card>
        {isAdmin(me) ? (
          <Card title="Blocking">
            {project.is_blocked ? (
              <ConfirmButton
                label="Unblock project"
                question={`Unblock project ${project.name}?`}
                confirmLabel="Yes, unblock"
                danger={false}
                onConfirm={() => block('unblock')}
              />
            ) : (
              <ConfirmButton
                label="Block project"
                question={`Block project ${project.name}? Its ingestion and queries will be refused.`}
                confirmLabel="Yes, block"
                onConfirm={() => block('block')}
              />
            )}
          </Card>
        ) : null}
      </div>
      <SecretKeys project={project} canManage={owner} />
    </main>
  );
}

/** Empty: no quota; otherwise a whole number (anything else is refused here, as NaN would be sent as null). */
const quotaOf = (v: string): number | null | undefined => (v.trim() === '' ? null : /^\d+$/.test(v.trim()) ? Number(v.trim()) : undefined);

function QuotaForm(props: { project: ProjectDetail; onSaved: (p: ProjectDetail) => void }) {
  const p = props.project;
  const [retention, setRetention] = useState(String(p.retention_days));
  const [entries, setEntries] = useState(p.max_entries === null ? '' : String(p.max_entries));
  const [bytes, setBytes] = useState(p.max_bytes === null ? '' : String(p.max_bytes));
  const [message, setMessage] = useState<string | null>(null);
  const { submit, error } = useSubmit(async () => {
    setMessage(null);
    const maxEntries = quotaOf(entries);
    const maxBytes = quotaOf(bytes);
    if (maxEntries === undefined || maxBytes === undefined || !/^\d+$/.test(retention.trim())) {
      throw new Error('Retention and quotas are whole numbers (quotas 0 or more, or empty for none).');
    }
    await call(`/v1/projects/${p.id}`, {
      method: 'PATCH',
      json: { retention_days: Number(retention.trim()), max_entries: maxEntries, max_bytes: maxBytes },
    });
    // The PATCH answer has no usage figures: read the project again.
    props.onSaved(await call<ProjectDetail>(`/v1/projects/${p.id}`));
    setMessage('Saved.');
  });
  return (
    <form onSubmit={submit}>
      <Field label="Retention (days)" name="retention_days" value={retention} onInput={setRetention} required />
      <Field label="Entry quota" name="max_entries" value={entries} onInput={setEntries} hint="Empty: no quota." />
      <Field label="Byte quota" name="max_bytes" value={bytes} onInput={setBytes} hint="Empty: no quota." />
      <ErrorLine message={error} />
      <button type="submit" class="primary">
        Save
      </button>{' '}
      <span role="status">{message ?? ''}</span>
    </form>
  );
}
