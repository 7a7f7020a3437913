/** Small form pieces shared by the pages: a labelled field and an error line. */
import type { ComponentChildren } from 'preact';

export function Field(props: {
  label: string;
  name: string;
  type?: 'text' | 'password';
  value: string;
  onInput: (value: string) => void;
  autoComplete?: string;
  required?: boolean;
  hint?: string;
}) {
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        autoComplete={props.autoComplete}
        required={props.required}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
      {props.hint ? <p class="hint" id={`${id}-hint`}>{props.hint}</p> : null}
    </div>
  );
}

export function ErrorLine(props: { message: string | null }) {
  return props.message ? <p class="error" role="alert">{props.message}</p> : null;
}

export function Card(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}
