/** The account page: who you are, change password, delete the account (confirmed with the password). */
import { useState } from 'preact/hooks';
import { deleteMyAccount, session } from '../api';
import { Card, ErrorLine, Field } from '../components/form';
import { useSubmit } from '../submit';
import { ChangePasswordForm } from './change-password';

export function AccountPage() {
  const me = session.value!;
  const [confirming, setConfirming] = useState(false);
  const [password, setPassword] = useState('');
  const { submit: remove, error } = useSubmit(() => deleteMyAccount(password));
  return (
    <main>
      <h1>Your account</h1>
      <p>
        Signed in as <strong>{me.username}</strong> (user {me.userId}).
      </p>
      <Card title="Change password">
        <ChangePasswordForm />
      </Card>
      <Card title="Delete my account">
        <p>Deleting your account signs you out everywhere and cannot be undone; your username stays taken.</p>
        {confirming ? (
          <form onSubmit={remove}>
            <Field
              label="Your password, to confirm"
              name="delete_password"
              type="password"
              value={password}
              onInput={setPassword}
              autoComplete="current-password"
              required
            />
            <ErrorLine message={error} />
            <button type="submit" class="danger">
              Delete my account for good
            </button>{' '}
            <button type="button" onClick={() => setConfirming(false)}>
              Keep my account
            </button>
          </form>
        ) : (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Delete my account…
          </button>
        )}
      </Card>
    </main>
  );
}
