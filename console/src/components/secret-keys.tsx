/** A project's secret keys: the list, creating one (the secret shown once, with examples), revoking. */
import { useEffect, useState } from 'preact/hooks';
import { BASE, call } from '../api';
import { localTime, utcTitle } from '../format';
import { useSubmit } from '../submit';
import { ConfirmButton } from './confirm';
import { Card, ErrorLine, Field } from './form';
import { CopyButton, ShownOnce } from './shown-once';
import { ActionsHeader } from './table-cells';

interface SecretKey {
  id: number;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

const keyName = (k: SecretKey) => (k.label ? `${k.label} (key ${k.id})` : `key ${k.id}`);

export function SecretKeys(props: { project: { id: number; name: string }; canManage: boolean; onCreated?: () => void }) {
  const [keys, setKeys] = useState<SecretKey[] | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const [label, setLabel] = useState('');
  const base = `/v1/projects/${props.project.id}/secret-keys`;
  const { run, error } = useSubmit();
  /** An action, then the list read again; the first reading shares the error line. */
  const attempt = (act: () => Promise<unknown>) =>
    run(async () => {
      await act();
      setKeys((await call<{ items: SecretKey[] }>(base)).items);
    });
  useEffect(() => void attempt(async () => {}), [props.project.id]);
  const create = (e: Event) => {
    e.preventDefault();
    void attempt(async () => {
      const k = await call<{ secret: string }>(base, { method: 'POST', json: { label: label.trim() || null } });
      setCreated(k.secret);
      setLabel('');
      props.onCreated?.();
    });
  };
  return (
    <Card title="Secret keys">
      <ErrorLine message={error} />
      {created ? (
        <ShownOnce title="The new key" secret={created} onDone={() => setCreated(null)}>
          <Examples secret={created} />
        </ShownOnce>
      ) : null}
      {!keys ? (
        <p role="status">Loading…</p>
      ) : keys.length === 0 ? (
        <p class="muted">No key yet.</p>
      ) : (
        <table class="list keys">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Revoked</th>
              {props.canManage ? <ActionsHeader /> : null}
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>{keyName(k)}</td>
                <td title={utcTitle(k.created_at)}>{localTime(k.created_at)}</td>
                <td>{k.revoked_at ? <span title={utcTitle(k.revoked_at)}>{localTime(k.revoked_at)}</span> : 'no'}</td>
                {props.canManage ? (
                  <td>
                    {k.revoked_at ? null : (
                      <ConfirmButton
                        label="Revoke"
                        question={`Revoke ${keyName(k)}? Applications using it are refused at once.`}
                        confirmLabel="Yes, revoke"
                        onConfirm={() => attempt(() => call(`${base}/${k.id}`, { method: 'DELETE' }))}
                      />
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.canManage ? (
        <form onSubmit={create} class="new-key">
          <Field label="New key's label" name="key_label" value={label} onInput={setLabel} hint="Optional, up to 200 characters: where the key is used." />
          <button type="submit" class="primary">
            Create key
          </button>
        </form>
      ) : null}
    </Card>
  );
}

/** Ready-to-paste examples with this service's address and the new key. */
function Examples(props: { secret: string }) {
  const url = `${location.origin}${BASE}`;
  const curl = `curl -s ${url}/v1/logs -H 'Authorization: Bearer ${props.secret}' -H 'Content-Type: application/json' \\\n  -d '[{"level": "info", "event": "hello from curl", "timestamp": "${new Date().toISOString()}"}]'`;
  const client = `import { IngestClient } from 'logkeep/client';\n\nconst logs = new IngestClient({ url: '${url}', secretKey: '${props.secret}' });\nlogs.log({ level: 'info', event: 'hello from my app' });\nawait logs.close();`;
  return (
    <>
      <p>
        Send a first entry with curl <CopyButton text={curl} label="Copy curl example" />
      </p>
      <pre class="snippet">{curl}</pre>
      <p>
        or from Node with IngestClient <CopyButton text={client} label="Copy IngestClient example" />
      </p>
      <pre class="snippet">{client}</pre>
    </>
  );
}
