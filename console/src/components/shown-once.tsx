/** A secret (a key, a temporary password) shown this once, with a copy button. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { copyText } from '../format';

export function CopyButton(props: { text: string; label: string }) {
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <button type="button" class="small" onClick={async () => setDone((await copyText(props.text)) ? 'Copied.' : 'Copying failed; select the text instead.')}>
        {props.label}
      </button>
      <span role="status" class="muted">
        {' '}
        {done ?? ''}
      </span>
    </>
  );
}

export function ShownOnce(props: { title: string; secret: string; onDone: () => void; children?: ComponentChildren }) {
  return (
    <div class="notice shown-once" role="region" aria-label={props.title}>
      <p>
        <strong>{props.title}</strong>: shown this once; it cannot be read again.
      </p>
      <p>
        <code class="secret">{props.secret}</code> <CopyButton text={props.secret} label="Copy" />
      </p>
      {props.children}
      <button type="button" class="small" onClick={props.onDone}>
        I have stored it
      </button>
    </div>
  );
}
