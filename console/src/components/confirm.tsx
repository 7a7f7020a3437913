/** A destructive action asked twice: the first click shows a question naming what it acts on. */
import { useState } from 'preact/hooks';

export function ConfirmButton(props: {
  /** The button's text, e.g. "Revoke". */
  label: string;
  /** The question, naming the target: "Revoke key ci-runner?". */
  question: string;
  /** The confirming button's text, e.g. "Yes, revoke". */
  confirmLabel: string;
  onConfirm: () => Promise<void> | void;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" class={props.danger === false ? 'small' : 'small danger'} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={props.question}>
      <span>{props.question}</span>{' '}
      <button
        type="button"
        class="small danger"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await props.onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {props.confirmLabel}
      </button>{' '}
      <button type="button" class="small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
