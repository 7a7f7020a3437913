/** A small matcher for method + path segments over the route table. */
import type { HttpMethod, Route } from './route.js';

interface CompiledRoute {
  route: Route;
  segments: { literal: string | null; param: string | null }[];
}

export type RouteMatch =
  | { kind: 'found'; route: Route; rawParams: Record<string, string> }
  | { kind: 'none' };

export interface Router {
  match(method: string, path: string): RouteMatch;
}

export function createRouter(routes: readonly Route[]): Router {
  const compiled: CompiledRoute[] = routes.map((route) => ({
    route,
    segments: route.path
      .split('/')
      .slice(1)
      .map((s) => (s.startsWith(':') ? { literal: null, param: s.slice(1) } : { literal: s, param: null })),
  }));
  return {
    match(method, path) {
      const parts = path.split('/').slice(1);
      for (const c of compiled) {
        if (c.route.method !== (method as HttpMethod) || c.segments.length !== parts.length) continue;
        const rawParams: Record<string, string> = {};
        let ok = true;
        for (let i = 0; i < parts.length; i++) {
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
