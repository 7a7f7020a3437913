/**
 * The first-run guide (administrators, while no group exists): create a
 * group, a project in it, a key (shown once, with its curl example), then
 * wait live for the first entry. Each step's result is in the URL
 * (`group_id`, `project_id`), so a reload resumes where it was.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, session } from '../api';
import { FirstEntry } from '../components/first-entry';
import { Card, ErrorLine, NewProjectFields } from '../components/form';
import { SecretKeys } from '../components/secret-keys';
import { isAdmin } from '../rights';
import { href, navigate, route } from '../router';
import { groups, loadScopes } from '../scope';
import { useSubmit } from '../submit';
import { NewGroupForm } from '../components/new-group';

const STEPS = ['Create a group', 'Create a project in it', 'Create a secret key', 'Send your first entry'];

/** An administrator who sees no group yet (so there is none): Explore offers the guide. */
export function offersFirstRun(): boolean {
  const me = session.value;
  return Boolean(me && isAdmin(me) && groups.value !== null && groups.value.length === 0);
}

/** On Explore: the way in. */
export function FirstRunOffer() {
  if (!offersFirstRun()) return null;
  return (
    <div class="notice first-run-offer" role="region" aria-label="Getting started">
      <p>
        <strong>Welcome to logkeep.</strong> There is no group yet: a group holds projects, and each project its logs.
      </p>
      <p>
        <a class="button primary" href={href('first-run')}>
          Set up a first project
        </a>{' '}
        (a group, a project, a key, then a first entry)
      </p>
    </div>
  );
}

function Steps(props: { current: number }) {
  return (
    <ol class="steps">
      {STEPS.map((s, i) => (
        <li key={s} class={i < props.current ? 'done' : i === props.current ? 'current' : undefined} aria-current={i === props.current ? 'step' : undefined}>
          {s}
          {i < props.current ? <span class="visually-hidden"> (done)</span> : null}
        </li>
      ))}
    </ol>
  );
}

interface Named {
  id: number;
  name: string;
  group_id?: number;
}

export function FirstRunPage() {
  const params = route.value.params;
  const groupId = Number(params.get('group_id') ?? 0);
  const projectId = Number(params.get('project_id') ?? 0);
  const [group, setGroup] = useState<Named | null>(null);
  const [project, setProject] = useState<Named | null>(null);
  const [keyMade, setKeyMade] = useState(false);
  const [arrived, setArrived] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    if (projectId) {
      call<Named>(`/v1/projects/${projectId}`).then(setProject, (e: Error) => setError(e.message));
      // After a reload on the last steps: a live key means the key step is done.
      call<{ items: { revoked_at: string | null }[] }>(`/v1/projects/${projectId}/secret-keys`).then(
        (k) => setKeyMade(k.items.some((key) => key.revoked_at === null)),
        () => undefined,
      );
    } else if (groupId) {
      call<{ items: Named[] }>(`/v1/groups?limit=200`).then(
        (g) => setGroup(g.items.find((x) => x.id === groupId) ?? { id: groupId, name: `group #${groupId}` }),
        (e: Error) => setError(e.message),
      );
    }
  }, [groupId, projectId]);
  const step = projectId ? (arrived ? STEPS.length : keyMade ? 3 : 2) : groupId ? 1 : 0;
  return (
    <main class="first-run">
      <h1>Set up a first project</h1>
      <Steps current={step} />
      <ErrorLine message={error} />
      {step === 0 ? <NewGroup /> : null}
      {step === 1 && group ? <NewProject group={group} /> : null}
      {projectId && project ? (
        <>
          <p>
            Project <strong>{project.name}</strong> is ready. Its applications send logs with a secret key.
          </p>
          <SecretKeys project={project} canManage onCreated={() => setKeyMade(true)} />
          <FirstEntry projectId={project.id} keyMade={keyMade} onArrived={() => setArrived(true)} />
        </>
      ) : null}
    </main>
  );
}

function NewGroup() {
  return (
    <NewGroupForm title="1. Create a group" fieldName="first_group_name" onCreated={(g) => navigate('first-run', { group_id: String(g.id) }, true)}>
      <p>A group is usually a team or a product; its projects can be read together, and it can have its own owners.</p>
    </NewGroupForm>
  );
}

function NewProject(props: { group: Named }) {
  const [name, setName] = useState('');
  const [retention, setRetention] = useState('30');
  const { submit, error } = useSubmit(async () => {
    const p = await call<Named>(`/v1/groups/${props.group.id}/projects`, { method: 'POST', json: { name: name.trim(), retention_days: Number(retention) } });
    await loadScopes(true);
    navigate('first-run', { group_id: String(props.group.id), project_id: String(p.id) }, true);
  });
  return (
    <Card title="2. Create a project">
      <p>
        In group <strong>{props.group.name}</strong>. A project is one application or service: its logs, quotas and keys.
      </p>
      <form onSubmit={submit}>
        <NewProjectFields prefix="first_project" name={name} onName={setName} retention={retention} onRetention={setRetention} error={error} />
      </form>
    </Card>
  );
}
