/** Creating a user: the temporary password is generated here and shown once. */
import { useState } from 'preact/hooks';
import { call } from '../api';
import { useSubmit } from '../submit';
import { temporaryPassword, type User } from '../users';
import { Card, ErrorLine, Field } from './form';
import { ShownOnce } from './shown-once';

export function NewUserForm(props: { onCreated: () => void }) {
  const [username, setUsername] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [email, setEmail] = useState('');
  const [created, setCreated] = useState<{ username: string; password: string } | null>(null);
  const { submit, error } = useSubmit(async () => {
    const password = temporaryPassword();
    const u = await call<User>('/v1/users', {
      method: 'POST',
      json: { username, password, ...(displayName ? { display_name: displayName } : {}), ...(email ? { email } : {}) },
    });
    setCreated({ username: u.username, password });
    setUsername('');
    setDisplayName('');
    setEmail('');
    props.onCreated();
  });
  return (
    <Card title="New user">
      {created ? (
        <ShownOnce title={`Temporary password of ${created.username}`} secret={created.password} onDone={() => setCreated(null)}>
          <p class="hint">They must choose their own password when they first sign in.</p>
        </ShownOnce>
      ) : null}
      <form onSubmit={submit}>
        <Field label="Username" name="new_username" value={username} onInput={setUsername} required />
        <Field label="Display name" name="new_display_name" value={displayName} onInput={setDisplayName} hint="Optional." />
        <Field label="Email" name="new_email" value={email} onInput={setEmail} hint="Optional; a contact, not a sign-in name." />
        <ErrorLine message={error} />
        <button type="submit" class="primary">
          Create user
        </button>
      </form>
    </Card>
  );
}
