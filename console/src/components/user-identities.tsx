/**
 * A user's single sign-on identities (administrators, inside the user
 * editor): which provider subject is linked, when it last signed in and
 * with which groups; link a subject, or unlink one after a confirmation.
 */
import { useEffect, useState } from 'preact/hooks';
import { authMethods, call } from '../api';
import type { Identity } from '../api-types';
import { localTime, utcTitle } from '../format';
import { useSubmit } from '../submit';
import { ConfirmButton } from './confirm';
import { ErrorLine, Field } from './form';
import { ActionsHeader } from './table-cells';

export function UserIdentities(props: { userId: number; username: string }) {
  const [items, setItems] = useState<Identity[] | null>(null);
  const [subject, setSubject] = useState('');
  const { run, error } = useSubmit();
  const load = () => run(async () => setItems((await call<{ items: Identity[] }>(`/v1/users/${props.userId}/identities`)).items));
  useEffect(() => void load(), [props.userId]);
  const link = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      await call(`/v1/users/${props.userId}/identities`, { method: 'POST', json: { subject: subject.trim() } });
      setSubject('');
      setItems((await call<{ items: Identity[] }>(`/v1/users/${props.userId}/identities`)).items);
    });
  };
  const unlink = (id: number) =>
    run(async () => {
      await call(`/v1/users/${props.userId}/identities/${id}`, { method: 'DELETE' });
      setItems((await call<{ items: Identity[] }>(`/v1/users/${props.userId}/identities`)).items);
    });
  return (
    <section aria-label={`Single sign-on of ${props.username}`}>
      <h3>Single sign-on</h3>
      {items === null ? null : items.length === 0 ? (
        <p>No identity at the provider is linked to {props.username}.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Subject</th>
              <th scope="col">Issuer</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">Provider groups</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr key={i.id}>
                <td>
                  <code>{i.subject}</code>
                </td>
                <td>{i.issuer}</td>
                <td>
                  {i.last_login_at ? (
                    <time dateTime={i.last_login_at} title={utcTitle(i.last_login_at)}>
                      {localTime(i.last_login_at)}
                    </time>
                  ) : (
                    'never'
                  )}
                </td>
                <td>{i.groups && i.groups.length > 0 ? i.groups.join(', ') : '—'}</td>
                <td>
                  <ConfirmButton
                    label="Unlink"
                    question={`Unlink ${i.subject} from ${props.username}? They can no longer sign in with it.`}
                    confirmLabel="Yes, unlink"
                    onConfirm={() => unlink(i.id)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {authMethods.value?.sso ? (
        <form onSubmit={link}>
          <Field
            label="Subject at the provider"
            name="link_subject"
            value={subject}
            onInput={setSubject}
            required
            hint="The provider's sub claim; a refused sign-in records it in the audit log."
          />
          <button type="submit">Link identity</button>
        </form>
      ) : null}
      <ErrorLine message={error} />
    </section>
  );
}
