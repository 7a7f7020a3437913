/** The filter row above a paged list and the previous/next buttons below it. */
import { Field } from './form';

export function FilterRow(props: { label: string; name: string; value: string; onInput: (v: string) => void; onApply: () => void }) {
  return (
    <form
      class="filter-row"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply();
      }}
    >
      <Field label={props.label} name={props.name} value={props.value} onInput={props.onInput} />
      <div class="field actions">
        <button type="submit">Filter</button>
      </div>
    </form>
  );
}

export function Pager(props: { back: (() => void) | null; next: (() => void) | null }) {
  return (
    <p class="pager">
      <button type="button" disabled={!props.back} onClick={() => props.back?.()}>
        Previous page
      </button>{' '}
      <button type="button" disabled={!props.next} onClick={() => props.next?.()}>
        Next page
      </button>
    </p>
  );
}
