/** Editing one user: display name and email, and a new temporary password shown once. */
import { useState } from 'preact/hooks';
import { call } from '../api';
import { useSubmit } from '../submit';
import { temporaryPassword, type User } from '../users';
import { ErrorLine, Field } from './form';
import { ShownOnce } from './shown-once';
import { UserIdentities } from './user-identities';

const orNull = (v: string) => (v.trim() === '' ? null : v.trim());

export function UserEditor(props: { user: User; onChanged: () => void; onClose: () => void }) {
  const u = props.user;
  const [displayName, setDisplayName] = useState(u.display_name ?? '');
  const [email, setEmail] = useState(u.email ?? '');
  const [password, setPassword] = useState<string | null>(null);
  /** Saving and a new password share one error line. */
  const { run, error } = useSubmit();
  const patch = async (body: Record<string, unknown>) => {
    await call(`/v1/users/${u.id}`, { method: 'PATCH', json: body });
    props.onChanged();
  };
  const save = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      await patch({ display_name: orNull(displayName), email: orNull(email) });
      props.onClose();
    });
  };
  const reset = () =>
    run(async () => {
      const next = temporaryPassword();
      await patch({ password: next });
      setPassword(next);
    });
  return (
    <div class="card editor" role="region" aria-label={`Edit ${u.username}`}>
      <h2>Edit {u.username}</h2>
      {password ? <ShownOnce title={`New temporary password of ${u.username}`} secret={password} onDone={() => setPassword(null)} /> : null}
      <form onSubmit={save}>
        <Field label="Display name" name="edit_display_name" value={displayName} onInput={setDisplayName} />
        <Field label="Email" name="edit_email" value={email} onInput={setEmail} hint="Changing it clears its verification." />
        <ErrorLine message={error} />
        <button type="submit" class="primary">
          Save
        </button>{' '}
        <button type="button" onClick={reset}>
          Set a new temporary password
        </button>{' '}
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </form>
      <UserIdentities userId={u.id} username={u.username} />
    </div>
  );
}
