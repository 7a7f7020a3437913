/**
 * A form's submit in one place: it keeps the page from reloading, clears
 * the last failure, runs the action, and shows a refusal in words (the
 * sole-owner conflict naming its groups, see errors.ts). A refusal found
 * here before asking the server is thrown by the action as an Error with
 * its sentence, and shows in the same place.
 */
import { useState } from 'preact/hooks';
import { errorText } from './errors';

export function useSubmit(action: () => Promise<void>): { submit: (e: Event) => Promise<void>; error: string | null } {
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return { submit, error };
}
