/** The role assignments on a group and its projects: who, role, scope; revoking asks first, naming all three. */
import { call } from '../api';
import { granteeText, scopeText, type NameBook } from '../grant-words';
import type { RoleAssignment } from '../org';
import { useSubmit } from '../submit';
import { ConfirmButton } from './confirm';
import { ErrorLine } from './form';
import { ActionsHeader } from './table-cells';

export function GrantList(props: { grants: RoleAssignment[]; book: NameBook; canRevoke: (g: RoleAssignment) => boolean; onChanged: () => Promise<void> }) {
  const { run, error } = useSubmit();
  const revoke = (g: RoleAssignment) =>
    run(async () => {
      await call(`/v1/role-assignments/${g.id}`, { method: 'DELETE' });
      await props.onChanged();
    });
  return (
    <>
      <ErrorLine message={error} />
      {props.grants.length === 0 ? (
        <p class="empty">No role is granted here yet.</p>
      ) : (
        <table class="list grants">
          <thead>
            <tr>
              <th scope="col">Who</th>
              <th scope="col">Role</th>
              <th scope="col">Scope</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {props.grants.map((g) => {
              const who = granteeText(g, props.book);
              const where = scopeText(g, props.book);
              return (
                <tr key={g.id}>
                  <td>{who}</td>
                  <td>{g.role}</td>
                  <td>{where}</td>
                  <td class="actions">
                    {props.canRevoke(g) ? (
                      <ConfirmButton
                        label="Revoke"
                        question={`Revoke ${g.role} on ${where} from ${who}?`}
                        confirmLabel="Yes, revoke"
                        onConfirm={() => revoke(g)}
                      />
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}
