/** One team: its members, with adding (by search or from the known people) and removing for those who manage the group. */
import { useState } from 'preact/hooks';
import { call } from '../api';
import type { Member, Team } from '../org';
import { useSubmit } from '../submit';
import { ConfirmButton } from './confirm';
import { ErrorLine } from './form';
import { UserPicker } from './user-picker';

export function TeamCard(props: { team: Team; members: Member[]; canManage: boolean; canSearch: boolean; known: Member[]; onChanged: () => Promise<void> }) {
  const t = props.team;
  const [adding, setAdding] = useState<number | null>(null);
  /** Bumped after an addition: a fresh picker, its search and choice cleared. */
  const [round, setRound] = useState(0);
  /** Removing and adding share one error line. */
  const { run, error } = useSubmit();
  const act = (change: () => Promise<unknown>) =>
    run(async () => {
      await change();
      await props.onChanged();
    });
  const candidates = props.known.filter((k) => !props.members.some((m) => m.user_id === k.user_id));
  return (
    <section class="card" aria-label={`Team ${t.name}`}>
      <h3>Team {t.name}</h3>
      {props.members.length === 0 ? (
        <p class="muted">No members yet.</p>
      ) : (
        <ul class="members">
          {props.members.map((m) => (
            <li key={m.user_id}>
              {m.username}{' '}
              {props.canManage ? (
                <ConfirmButton
                  label={`Remove ${m.username}`}
                  question={`Remove ${m.username} from team ${t.name}?`}
                  confirmLabel="Yes, remove"
                  onConfirm={() => act(() => call(`/v1/teams/${t.id}/members/${m.user_id}`, { method: 'DELETE' }))}
                />
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <ErrorLine message={error} />
      {props.canManage ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void act(async () => {
              if (adding === null) throw new Error('Choose a user first.');
              await call(`/v1/teams/${t.id}/members`, { method: 'POST', json: { user_id: adding } });
              setAdding(null);
              setRound(round + 1);
            });
          }}
        >
          <UserPicker
            key={round}
            id={`team-${t.id}`}
            label={`New member of ${t.name}`}
            canSearch={props.canSearch}
            known={candidates}
            value={adding}
            onChange={setAdding}
          />
          <button type="submit" disabled={adding === null}>
            Add member<span class="visually-hidden"> to {t.name}</span>
          </button>
        </form>
      ) : null}
    </section>
  );
}
