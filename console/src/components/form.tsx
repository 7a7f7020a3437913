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
      {props.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}

export function ErrorLine(props: { message: string | null }) {
  return props.message ? (
    <p class="error" role="alert">
      {props.message}
    </p>
  ) : null;
}

export function Card(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** A new project's name and retention, with the submit button: the first-run guide and the projects page ask the same. */
export function NewProjectFields(props: {
  /** Field names are `${prefix}_name` and `${prefix}_retention`. */
  prefix: string;
  name: string;
  onName: (value: string) => void;
  retention: string;
  onRetention: (value: string) => void;
  error: string | null;
}) {
  return (
    <>
      <Field label="Project name" name={`${props.prefix}_name`} value={props.name} onInput={props.onName} required />
      <Field
        label="Retention (days)"
        name={`${props.prefix}_retention`}
        value={props.retention}
        onInput={props.onRetention}
        required
        hint="Entries older than this are deleted; 1 to 36500."
      />
      <ErrorLine message={props.error} />
      <button type="submit" class="primary">
        Create project
      </button>
    </>
  );
}
