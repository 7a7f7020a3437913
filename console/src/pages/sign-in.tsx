/** The sign-in page: the password grant, with the reason the last session ended. */
import { useState } from 'preact/hooks';
import { signIn, signedOutReason } from '../api';
import { ErrorLine, Field } from '../components/form';
import { useSubmit } from '../submit';

export function SignInPage() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // Signed in, the app shows another page before `busy` falls: the button stays "Signing in…".
  const { submit, error, busy } = useSubmit(() => signIn(username, password));
  return (
    <main class="narrow">
      <h1>Sign in to logkeep</h1>
      {signedOutReason.value ? <p class="notice" role="status">{signedOutReason.value}</p> : null}
      <form onSubmit={submit}>
        <Field label="Username" name="username" value={username} onInput={setUsername} autoComplete="username" required />
        <Field label="Password" name="password" type="password" value={password} onInput={setPassword} autoComplete="current-password" required />
        <ErrorLine message={error} />
        <button type="submit" class="primary" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
