/**
 * The sign-in page: "Sign in with <provider>" when single sign-on is
 * configured, the password grant (folded away when password sign-in is off,
 * for the break-glass accounts), the reason the last session ended, and a
 * refused single sign-on in words.
 */
import { useState } from 'preact/hooks';
import { authMethods, signIn, signedOutReason, ssoRefusal } from '../api';
import { ErrorLine, Field } from '../components/form';
import { useSubmit } from '../submit';

/** The callback's refusals (see docs/sso.md), as a person reads them. */
const SSO_WORDS: Record<string, string> = {
  flow_missing: 'The sign-in did not start in this browser, or the browser blocked its cookie. Please try again.',
  flow_expired: 'The sign-in took too long. Please try again.',
  state_mismatch: 'The answer from the identity provider did not belong to this sign-in, so it was refused. Please try again.',
  provider_error: 'The identity provider refused the sign-in.',
  provider_unreachable: 'The identity provider cannot be reached right now. Please try again later.',
  token_rejected: "The identity provider's answer failed a security check, so it was refused. Ask an administrator to check the single sign-on set-up.",
  not_linked: 'You have no logkeep account yet. Ask an administrator to link your account to your single sign-on identity.',
  account_disabled: 'Your logkeep account is blocked or deleted.',
  claims_invalid: 'The identity provider sent more or longer groups than logkeep accepts. Ask an administrator.',
  code_refused: 'The sign-in had expired or was already used. Please sign in again.',
};

/** The provider's own codes that a person can act on, in words. */
const PROVIDER_WORDS: Record<string, string> = {
  access_denied: 'Access was denied (you may have cancelled, or you are not allowed to use logkeep).',
  login_required: 'You need to sign in at the identity provider.',
  consent_required: 'logkeep needs your consent at the identity provider.',
  invalid_grant: 'The sign-in was already used or has expired.',
  temporarily_unavailable: 'The identity provider is busy; try again shortly.',
  server_error: 'The identity provider had an error.',
};

export function ssoRefusalText(refusal: { error: string; providerError: string | null }): string {
  const words = SSO_WORDS[refusal.error] ?? 'Single sign-on failed. Please try again.';
  if (refusal.providerError === null) return words;
  return `${words} ${PROVIDER_WORDS[refusal.providerError] ?? `(The provider said: ${refusal.providerError}.)`}`;
}

function PasswordForm() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // Signed in, the app shows another page before `busy` falls: the button stays "Signing in…".
  const { submit, error, busy } = useSubmit(() => signIn(username, password));
  return (
    <form onSubmit={submit}>
      <Field label="Username" name="username" value={username} onInput={setUsername} autoComplete="username" required />
      <Field label="Password" name="password" type="password" value={password} onInput={setPassword} autoComplete="current-password" required />
      <ErrorLine message={error} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

export function SignInPage() {
  const methods = authMethods.value;
  const refusal = ssoRefusal.value;
  return (
    <main class="narrow">
      <h1>Sign in to logkeep</h1>
      {signedOutReason.value ? (
        <p class="notice" role="status">
          {signedOutReason.value}
        </p>
      ) : null}
      {refusal ? (
        <p class="error" role="alert">
          {ssoRefusalText(refusal)}
        </p>
      ) : null}
      {methods?.sso ? (
        <p>
          <a class="button primary" href={methods.sso.start_url}>
            Sign in with {methods.sso.provider_name}
          </a>
        </p>
      ) : null}
      {methods?.password === false ? (
        <details>
          <summary>Sign in with a password (administrators' emergency accounts)</summary>
          <PasswordForm />
        </details>
      ) : (
        <PasswordForm />
      )}
    </main>
  );
}
