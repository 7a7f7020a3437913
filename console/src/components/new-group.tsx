/** The form that creates a group: on the groups page, and as the first-run guide's first step. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { call } from '../api';
import { loadScopes } from '../scope';
import { useSubmit } from '../submit';
import { Card, ErrorLine, Field } from './form';

export function NewGroupForm(props: { title: string; fieldName: string; children?: ComponentChildren; onCreated: (group: { id: number }) => void }) {
  const [name, setName] = useState('');
  const { submit, error } = useSubmit(async () => {
    const group = await call<{ id: number }>('/v1/groups', { method: 'POST', json: { name: name.trim() } });
    await loadScopes(true);
    props.onCreated(group);
  });
  return (
    <Card title={props.title}>
      {props.children}
      <form onSubmit={submit}>
        <Field label="Group name" name={props.fieldName} value={name} onInput={setName} required />
        <ErrorLine message={error} />
        <button type="submit" class="primary">
          Create group
        </button>
      </form>
    </Card>
  );
}
