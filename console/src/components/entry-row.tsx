/** One line of the results: level colour, local time (UTC in the title), event, logger, category; all text. */
import { localTime, utcTitle } from '../format';
import { projectName } from '../scope';
import type { Entry } from './entry-detail';

export function EntryRow(props: { entry: Entry; selected: boolean; showProject: boolean; onOpen: (e: Entry) => void }) {
  const e = props.entry;
  return (
    <button type="button" class={`row${props.selected ? ' selected' : ''}`} aria-pressed={props.selected} onClick={() => props.onOpen(e)}>
      <span class={`lvl lvl-${e.level}`}>{e.level}</span>
      <time class="ts" title={utcTitle(e.timestamp)}>
        {localTime(e.timestamp)}
      </time>
      {props.showProject ? <span class="proj">{projectName(e.project_id)}</span> : null}
      <span class="event">{String(e.event)}</span>
      <span class="logger">{e.logger === null || e.logger === undefined ? '' : String(e.logger)}</span>
      <span class="category">{e.category === null || e.category === undefined ? '' : String(e.category)}</span>
    </button>
  );
}
