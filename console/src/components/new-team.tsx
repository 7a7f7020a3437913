/** Creating a team in a group (its owners and administrators). */
import { useState } from 'preact/hooks';
import { call } from '../api';
import { useSubmit } from '../submit';
import { ErrorLine, Field } from './form';

export function NewTeamForm(props: { groupId: number; onCreated: () => Promise<void> }) {
  const [name, setName] = useState('');
  const { submit, error } = useSubmit(async () => {
    await call(`/v1/groups/${props.groupId}/teams`, { method: 'POST', json: { name } });
    setName('');
    await props.onCreated();
  });
  return (
    <form class="filter-row" onSubmit={submit}>
      <Field label="New team's name" name="new_team_name" value={name} onInput={setName} required />
      <div class="field actions">
        <button type="submit" class="primary">
          Create team
        </button>
      </div>
      <ErrorLine message={error} />
    </form>
  );
}
