/**
 * A form's submit in one place: it keeps the page from reloading, clears
 * the last failure, runs the action, and shows a refusal in words (the
 * sole-owner conflict naming its groups, see errors.ts). A refusal found
 * here before asking the server is thrown by the action as an Error with
 * its sentence, and shows in the same place. `busy` holds while the action
 * runs, for forms that disable their button meanwhile.
 *
 * `run(action)` does the same without an event: for buttons outside a form
 * (a confirmed revoke, block or delete) and for components whose several
 * actions share one error line, each passing its own action. Without an
 * argument it runs the action given to the hook. `clear()` drops the
 * shown refusal, for pages whose error line a successful reload also clears.
 */
import { useState } from 'preact/hooks';
import { errorText } from './errors';

export function useSubmit(action?: () => Promise<unknown>): {
  submit: (e: Event) => Promise<void>;
  run: (act?: () => Promise<unknown>) => Promise<void>;
  error: string | null;
  busy: boolean;
  clear: () => void;
} {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (act = action) => {
    setError(null);
    setBusy(true);
    try {
      await act?.();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    await run();
  };
  return { submit, run, error, busy, clear: () => setError(null) };
}
