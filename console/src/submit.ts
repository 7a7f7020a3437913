/**
 * A form's submit in one place: it keeps the page from reloading, clears
 * the last failure, runs the action, and shows a refusal in words (the
 * sole-owner conflict naming its groups, see errors.ts). A refusal found
 * here before asking the server is thrown by the action as an Error with
 * its sentence, and shows in the same place. `busy` holds while the action
 * runs, for forms that disable their button meanwhile.
 */
import { useState } from 'preact/hooks';
import { errorText } from './errors';

export function useSubmit(action: () => Promise<void>): { submit: (e: Event) => Promise<void>; error: string | null; busy: boolean } {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      await action();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return { submit, error, busy };
}
