/**
 * Hash routing: `#/explore?project_id=3&level=error`. The whole query lives
 * in the URL, so a link can be shared and the back button works; the
 * service only ever serves `/console/` itself.
 */
import { signal } from '@preact/signals';

export interface Route {
  page: string;
  params: URLSearchParams;
}

function parse(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const page = (q === -1 ? raw : raw.slice(0, q)) || 'explore';
  return { page, params: new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)) };
}

export const route = signal<Route>(parse(location.hash));
/** Bumped when the same URL is asked for again (searching again re-runs the query). */
export const refreshTick = signal(0);
addEventListener('hashchange', () => {
  route.value = parse(location.hash);
});

export function href(page: string, params?: URLSearchParams | Record<string, string>): string {
  const query = new URLSearchParams(params as Record<string, string>).toString();
  return `#/${page}${query ? `?${query}` : ''}`;
}

/** Goes to a page; `replace` keeps the back button on the previous query. */
export function navigate(page: string, params?: URLSearchParams | Record<string, string>, replace = false): void {
  const target = href(page, params);
  if (target === location.hash) {
    refreshTick.value++;
    return;
  }
  if (replace) {
    history.replaceState(null, '', target);
    route.value = parse(target);
  } else {
    location.hash = target;
  }
}
