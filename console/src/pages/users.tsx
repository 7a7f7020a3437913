/** Users (admins): the list with a username filter and paging, create, edit, block, unblock, delete. */
import { useEffect, useState } from 'preact/hooks';
import { call, session } from '../api';
import { ConfirmButton } from '../components/confirm';
import { ErrorLine } from '../components/form';
import { FilterRow, Pager } from '../components/list-controls';
import { NewUserForm } from '../components/new-user';
import { UserEditor } from '../components/user-edit';
import { localTime, utcTitle } from '../format';
import { route } from '../router';
import { usePagedList } from '../paged';
import { useSubmit } from '../submit';
import { userState, type User } from '../users';
import { ActionsHeader } from '../components/table-cells';

export function UsersPage() {
  // `#/users?username=alice` (the audit page's links) opens filtered.
  const linked = route.value.params.get('username') ?? '';
  const [filter, setFilter] = useState(linked);
  const [applied, setApplied] = useState(linked);
  const [editing, setEditing] = useState<number | null>(null);
  const list = usePagedList<User>('/v1/users', 'username', applied);
  const { page, reload: load } = list;
  /** Block, unblock and delete: their refusal shows on the list's error line. */
  const acting = useSubmit();
  // A list read without fault clears the line, as it always has.
  useEffect(() => acting.clear(), [page]);
  useEffect(() => {
    setFilter(linked);
    setApplied(linked);
    list.restart();
  }, [linked]);
  const act = (path: string, method = 'POST') =>
    acting.run(async () => {
      await call(path, { method });
      await load();
    });
  const editingUser = page?.items.find((u) => u.id === editing);
  return (
    <main>
      <h1>Users</h1>
      <FilterRow
        label="Username contains"
        name="user_filter"
        value={filter}
        onInput={setFilter}
        onApply={() => {
          list.restart();
          setApplied(filter.trim());
        }}
      />
      <ErrorLine message={acting.error ?? list.error} />
      {editingUser ? <UserEditor key={editingUser.id} user={editingUser} onChanged={load} onClose={() => setEditing(null)} /> : null}
      {!page ? (
        <p role="status">Loading…</p>
      ) : page.items.length === 0 ? (
        <p class="empty">No user matches.</p>
      ) : (
        <table class="list users">
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Display name</th>
              <th scope="col">Email</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {page.items.map((u) => (
              <tr key={u.id}>
                <td>
                  {u.username}
                  {u.is_primary_admin ? (
                    <>
                      {' '}
                      <span class="badge">primary admin</span>
                    </>
                  ) : null}
                </td>
                <td>{u.display_name ?? ''}</td>
                <td>{u.email ?? ''}</td>
                <td>{userState(u)}</td>
                <td title={utcTitle(u.created_at)}>{localTime(u.created_at)}</td>
                <td class="actions">{u.deleted_at ? null : <UserActions user={u} onEdit={() => setEditing(u.id)} act={act} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager back={list.back} next={list.next} />
      <NewUserForm onCreated={() => void load()} />
    </main>
  );
}

function UserActions(props: { user: User; onEdit: () => void; act: (path: string, method?: string) => Promise<void> }) {
  const u = props.user;
  const base = `/v1/users/${u.id}`;
  // Oneself: edited here, but blocked or deleted only from the account page.
  if (u.id === session.value!.userId) {
    return (
      <button type="button" class="small" onClick={props.onEdit}>
        Edit<span class="visually-hidden"> {u.username}</span>
      </button>
    );
  }
  return (
    <>
      <button type="button" class="small" onClick={props.onEdit}>
        Edit<span class="visually-hidden"> {u.username}</span>
      </button>{' '}
      {u.is_active ? (
        <ConfirmButton
          label="Block"
          question={`Block user ${u.username}? They are signed out at once.`}
          confirmLabel="Yes, block"
          onConfirm={() => props.act(`${base}/block`)}
        />
      ) : (
        <ConfirmButton
          label="Unblock"
          question={`Unblock user ${u.username}?`}
          confirmLabel="Yes, unblock"
          danger={false}
          onConfirm={() => props.act(`${base}/unblock`)}
        />
      )}{' '}
      {u.is_primary_admin ? null : (
        <ConfirmButton label="Delete" question={`Delete user ${u.username} for good?`} confirmLabel="Yes, delete" onConfirm={() => props.act(base, 'DELETE')} />
      )}
    </>
  );
}
