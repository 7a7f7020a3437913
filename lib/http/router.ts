/** A small matcher for method + path segments over the route table. */
import type { HttpMethod, Route } from './route.js';

interface CompiledRoute {
  route: Route;
  segments: { literal: string | null; param: string | null }[];
  /** The path ends in `/*`: any further segments (or none) match. */
  rest: boolean;
}

export type RouteMatch = { kind: 'found'; route: Route; rawParams: Record<string, string> } | { kind: 'none' };

export interface Router {
  match(method: string, path: string): RouteMatch;
}

export function createRouter(routes: readonly Route[]): Router {
  const compiled: CompiledRoute[] = routes.map((route) => {
    const parts = route.path.split('/').slice(1);
    const rest = parts[parts.length - 1] === '*';
    if (rest) parts.pop();
    return {
      route,
      rest,
      segments: parts.map((s) => (s.startsWith(':') ? { literal: null, param: s.slice(1) } : { literal: s, param: null })),
    };
  });
  return {
    match(method, path) {
      const parts = path.split('/').slice(1);
      for (const c of compiled) {
        if (c.route.method !== 'ANY' && c.route.method !== (method as HttpMethod)) continue;
        if (c.rest ? parts.length < c.segments.length : c.segments.length !== parts.length) continue;
        const rawParams: Record<string, string> = {};
        let ok = true;
        for (let i = 0; i < c.segments.length; i++) {
          const seg = c.segments[i]!;
          const part = parts[i]!;
          if (seg.literal !== null) {
            if (seg.literal !== part) {
              ok = false;
              break;
            }
          } else if (part === '') {
            ok = false;
            break;
          } else {
            rawParams[seg.param!] = part;
          }
        }
        if (ok) return { kind: 'found', route: c.route, rawParams };
      }
      return { kind: 'none' };
    },
  };
}
