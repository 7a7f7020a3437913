/**
 * Changing the password: forced (the temporary password leads straight
 * here, and nothing else is reachable until it is done) or from the account page.
 */
import { useState } from 'preact/hooks';
import { changePassword, signOut } from '../api';
import { ErrorLine, Field } from '../components/form';
import { useSubmit } from '../submit';

export function ChangePasswordForm(props: { onDone?: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const { submit, error, busy } = useSubmit(async () => {
    setDone(false);
    if (next !== again) throw new Error('The two new passwords differ.');
    await changePassword(current, next);
    setCurrent('');
    setNext('');
    setAgain('');
    setDone(true);
    props.onDone?.();
  });
  return (
    <form onSubmit={submit}>
      <Field label="Current password" name="current_password" type="password" value={current} onInput={setCurrent} autoComplete="current-password" required />
      <Field
        label="New password"
        name="new_password"
        type="password"
        value={next}
        onInput={setNext}
        autoComplete="new-password"
        required
        hint="At least 8 characters and at most 72 bytes."
      />
      <Field label="New password, again" name="new_password_again" type="password" value={again} onInput={setAgain} autoComplete="new-password" required />
      <ErrorLine message={error} />
      {done ? (
        <p class="notice" role="status">
          Your password has been changed.
        </p>
      ) : null}
      <button type="submit" class="primary" disabled={busy}>
        Change password
      </button>
    </form>
  );
}

export function ForcedChangePage(props: { username: string }) {
  return (
    <main class="narrow">
      <h1>Choose a new password</h1>
      <p>
        The password <strong>{props.username}</strong> signed in with is temporary. Choose your own before going on.
      </p>
      <ChangePasswordForm />
      <p>
        <button type="button" class="link" onClick={() => void signOut()}>
          Sign out instead
        </button>
      </p>
    </main>
  );
}
