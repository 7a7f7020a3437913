/**
 * Small request helpers shared by the organisation routes: the caller as an
 * `Actor`, an optional JSON body, and the body fields every org schema uses.
 */
import { integer, nullable, optional, refine, size, string, type Struct } from 'superstruct';
import { hasNul } from '../core/text-fields.js';
import type { Actor } from '../admin/org-access.js';
import { DEFAULT_BODY_LIMIT, parseJson, readBody, validateBody } from './body.js';
import type { RequestInfo, UserContext } from './route.js';

/** The signed-in caller of a `user` route. */
export function actorOf(ctx: Pick<UserContext, 'principal'>): Actor {
  return { userId: ctx.principal.user.id, grants: ctx.principal.grants };
}

/** A JSON body that may be left out entirely (an empty body reads as `{}`). */
export async function optionalJson<T, S>(ctx: RequestInfo, struct: Struct<T, S>): Promise<T> {
  const raw = await readBody(ctx.req, DEFAULT_BODY_LIMIT);
  const value = raw.toString('utf8').trim() === '' ? {} : parseJson(raw);
  return validateBody(value, struct);
}

/** A string body field without U+0000 (400 naming the field otherwise). */
export const Text = refine(string(), 'text', (value) => !hasNul(value));
/** Names of groups, teams and projects: 1 to 200 characters. */
export const Name = size(Text, 1, 200);
/** An optional label: absent, null, or up to 200 characters. */
export const OptionalLabel = optional(nullable(size(Text, 0, 200)));
/** A positive integer id in a body. */
export const BodyId = size(integer(), 1, Number.MAX_SAFE_INTEGER);
/** Retention in days: 1 to 36500 (a hundred years keeps every cutoff computation exact). */
export const RetentionDays = size(integer(), 1, 36500);
/** A quota: a non-negative integer, or null for unlimited. */
export const Quota = nullable(size(integer(), 0, Number.MAX_SAFE_INTEGER));
