/**
 * Granting a role on a group or one of its projects: the grantee chosen from
 * lists (never an id), the role, the scope. Owners are offered only `owner`
 * and `user` inside their group; administrators also `admin` and global scope.
 */
import { useState } from 'preact/hooks';
import { call } from '../api';
import { granteeText, scopeText, type NameBook } from '../grant-words';
import type { Member, RoleAssignment } from '../org';
import { useSubmit } from '../submit';
import { Card, ErrorLine } from './form';
import { UserPicker } from './user-picker';

type Role = 'admin' | 'owner' | 'user';

function Select(props: { id: string; label: string; value: string; onChange: (v: string) => void; options: [string, string][] }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

export function GrantForm(props: { book: NameBook; admin: boolean; known: Member[]; onGranted: () => Promise<void> }) {
  const { group, projects, teams } = props.book;
  const [kind, setKind] = useState<'user' | 'team'>('user');
  const [userId, setUserId] = useState<number | null>(null);
  const [teamId, setTeamId] = useState(teams[0] ? String(teams[0].id) : '');
  const [role, setRole] = useState<Role>('user');
  const [scope, setScope] = useState(`group:${group.id}`);
  const [done, setDone] = useState<string | null>(null);
  const roles: [string, string][] = [
    ['user', 'user (reads logs)'],
    ['owner', 'owner (manages)'],
    ...(props.admin ? [['admin', 'admin (everything)'] as [string, string]] : []),
  ];
  // `admin` exists only at global scope; global scope is for administrators only.
  const scopes: [string, string][] =
    role === 'admin'
      ? [['global', 'Everything (global)']]
      : [
          [`group:${group.id}`, `Group ${group.name}`],
          ...projects.map((p) => [`project:${p.id}`, `Project ${p.name}`] as [string, string]),
          ...(props.admin ? [['global', 'Everything (global)'] as [string, string]] : []),
        ];
  const chosenScope = scopes.some(([v]) => v === scope) ? scope : scopes[0]![0];
  const { submit, error } = useSubmit(async () => {
    setDone(null);
    const subjectId = kind === 'user' ? userId : teamId ? Number(teamId) : null;
    if (subjectId === null) throw new Error(kind === 'user' ? 'Choose a user first.' : 'Choose a team first.');
    const [scopeType, scopeId] = chosenScope.split(':');
    const where = { scope_type: scopeType as RoleAssignment['scope_type'], scope_id: scopeId ? Number(scopeId) : null };
    await call('/v1/role-assignments', { method: 'POST', json: { subject_type: kind, subject_id: subjectId, role, ...where } });
    setDone(`Granted ${role} on ${scopeText(where, props.book)} to ${granteeText({ subject_type: kind, subject_id: subjectId }, props.book)}.`);
    await props.onGranted();
  });
  return (
    <Card title="Grant a role">
      <form onSubmit={submit}>
        <Select
          id="grant-kind"
          label="Grant to"
          value={kind}
          onChange={(v) => setKind(v as 'user' | 'team')}
          options={[
            ['user', 'A user'],
            ['team', 'A team of this group'],
          ]}
        />
        {kind === 'user' ? (
          <UserPicker id="grant" label="User" canSearch={props.admin} known={props.known} value={userId} onChange={setUserId} />
        ) : teams.length === 0 ? (
          <p class="hint">This group has no team yet.</p>
        ) : (
          <Select id="grant-team" label="Team" value={teamId} onChange={setTeamId} options={teams.map((t) => [String(t.id), t.name])} />
        )}
        <Select id="grant-role" label="Role" value={role} onChange={(v) => setRole(v as Role)} options={roles} />
        <Select id="grant-scope" label="Scope" value={chosenScope} onChange={setScope} options={scopes} />
        <ErrorLine message={error} />
        <button type="submit" class="primary">
          Grant
        </button>{' '}
        <span role="status">{done ?? ''}</span>
      </form>
    </Card>
  );
}
