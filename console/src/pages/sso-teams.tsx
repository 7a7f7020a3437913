/**
 * Provider groups to teams (administrators, with single sign-on on): the
 * operator's pairs, read-only, and the administrators' pairs, added and
 * removed here. People signed in through single sign-on join and leave the
 * mapped teams at their next sign-in or refresh.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import type { GroupPage, GroupTeamMapping, GroupTeamPair, Team } from '../api-types';
import { ConfirmButton } from '../components/confirm';
import { Card, ErrorLine, Field } from '../components/form';
import { useSubmit } from '../submit';
import { ActionsHeader } from '../components/table-cells';

interface TeamChoice {
  id: number;
  label: string;
}

async function loadTeams(): Promise<TeamChoice[]> {
  const groups = await call<GroupPage>('/v1/groups?limit=200');
  const choices: TeamChoice[] = [];
  for (const group of groups.items) {
    const teams = await call<{ items: Team[] }>(`/v1/groups/${group.id}/teams`);
    for (const team of teams.items) choices.push({ id: team.id, label: `${team.name} (${group.name})` });
  }
  return choices;
}

export function SsoTeamsPage() {
  const [mapping, setMapping] = useState<GroupTeamMapping | null>(null);
  const [teams, setTeams] = useState<TeamChoice[]>([]);
  const [group, setGroup] = useState('');
  const [teamId, setTeamId] = useState('');
  const { run, error } = useSubmit();
  useEffect(() => {
    void run(async () => {
      setMapping(await call<GroupTeamMapping>('/v1/sso/group-teams'));
      setTeams(await loadTeams());
    });
  }, []);
  const teamName = (id: number) => teams.find((t) => t.id === id)?.label ?? `team #${id}`;
  const save = (items: GroupTeamPair[]) =>
    run(async () => setMapping(await call<GroupTeamMapping>('/v1/sso/group-teams', { method: 'POST', json: { items } })));
  const add = (e: Event) => {
    e.preventDefault();
    if (!mapping || teamId === '') return Promise.resolve();
    return save([...mapping.items, { provider_group: group.trim(), team_id: Number(teamId) }]).then(() => setGroup(''));
  };
  const rows = (pairs: GroupTeamPair[], removable: boolean) => (
    <table>
      <thead>
        <tr>
          <th scope="col">Provider group</th>
          <th scope="col">Team</th>
          {removable ? <ActionsHeader /> : null}
        </tr>
      </thead>
      <tbody>
        {pairs.map((p) => (
          <tr key={`${p.provider_group}:${p.team_id}`}>
            <td>
              <code>{p.provider_group}</code>
            </td>
            <td>{teamName(p.team_id)}</td>
            {removable ? (
              <td>
                <ConfirmButton
                  label="Remove"
                  question={`Stop feeding ${teamName(p.team_id)} from ${p.provider_group}?`}
                  confirmLabel="Yes, remove"
                  onConfirm={() => save(mapping!.items.filter((q) => q !== p))}
                />
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
  return (
    <main>
      <h1>Provider groups and teams</h1>
      <p>
        People who sign in with single sign-on join a team while one of their provider groups maps to it, and leave it when none does, at each sign-in and
        refresh. A team holding a global role cannot be fed by a provider group.
      </p>
      <ErrorLine message={error} />
      {mapping === null ? (
        <p role="status">Loading…</p>
      ) : (
        <>
          <Card title="Set by administrators">
            {mapping.items.length === 0 ? <p>No pairs yet.</p> : rows(mapping.items, true)}
            <form onSubmit={add}>
              <Field
                label="Provider group"
                name="provider_group"
                value={group}
                onInput={setGroup}
                required
                hint="As the groups claim spells it (Entra ID: the group's object id)."
              />
              <div class="field">
                <label for="f-team">Team</label>
                <select id="f-team" value={teamId} required onChange={(e) => setTeamId((e.target as HTMLSelectElement).value)}>
                  <option value="">Choose a team</option>
                  {teams.map((t) => (
                    <option key={t.id} value={String(t.id)}>
                      {t.label}
                    </option>
                  ))}
                </select>
              </div>
              <button type="submit" class="primary">
                Add pair
              </button>
            </form>
          </Card>
          {mapping.configured.length > 0 ? <Card title="From the service's configuration">{rows(mapping.configured, false)}</Card> : null}
        </>
      )}
    </main>
  );
}
