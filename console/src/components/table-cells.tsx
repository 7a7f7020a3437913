/** Table pieces every list repeats: the unnamed actions column and a row's way into Explore. */
import { href } from '../router';

/** The header of a column of buttons: named for screen readers, blank on screen. */
export function ActionsHeader() {
  return (
    <th scope="col">
      <span class="visually-hidden">Actions</span>
    </th>
  );
}

/** "Explore" for one row, the row's name spoken after it so each link says where it goes. */
export function ExploreLink(props: { scope: { project_id: string } | { group_id: string }; name: string }) {
  return (
    <a href={href('explore', props.scope)}>
      Explore<span class="visually-hidden"> {props.name}</span>
    </a>
  );
}
