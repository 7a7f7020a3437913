/**
 * What a route is: data the handler reads (method, path, credential kind,
 * envelope, flags) plus the function that serves it, and the request
 * context that function receives. The context's type follows the route's
 * credential kind and path, so a `user` route's function sees a principal
 * and `/v1/users/:id` sees `params.id` without any check of its own.
 * The table itself is `routes.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Struct } from 'superstruct';
import type { Envelope } from './envelopes.js';
import type { ServiceDeps } from './service-deps.js';
import type { AccessClaims } from '../auth/access-tokens.js';
import type { AccessKeyPermission, AuthenticatedAccessKey } from '../auth/access-keys.js';
import type { RoleGrant, UserRow } from '../storage/types-org.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** `none`: public; `user`: access token (JWT); `project-key`: `slk_…` secret key. */
export type AuthKind = 'none' | 'user' | 'project-key';

/** The signed-in caller of a `user` route, read fresh from the database. */
export interface UserPrincipal {
  /** The user row as stored now (is_active, token_version, must_change_password fresh). */
  user: UserRow;
  /** Effective grants, as the access token's `roles` claim carries them. */
  grants: RoleGrant[];
  /** The access token's claims; null when the caller used an access key. */
  claims: AccessClaims | null;
  /** The access key the caller used (its grants are then the user's, read fresh); null for an access token. */
  accessKey: AuthenticatedAccessKey | null;
}

/**
 * The key a `project-key` route was called with, its project not blocked:
 * a project's secret key, or (where the route accepts one) a person's
 * access key allowed to write to the project named by `project_id`.
 */
export interface AuthenticatedKey {
  keyId: number | null;
  accessKeyId: number | null;
  projectId: number;
}

/** What every route has besides its function. */
export interface RouteInfo {
  /** `ANY`: every method reaches the function (the console answers them all itself). */
  method: HttpMethod | 'ANY';
  /** `/v1/users/:id`; every `:param` is an integer id. A last segment `*` matches the rest of the path, however many segments. */
  path: string;
  auth: AuthKind;
  envelope: Envelope;
  /** Answers normally while the caller must change their password (the four exemptions). */
  allowDuringPasswordChange?: true;
  /** Body size limit in bytes; default 1 MiB. `ingest` uses --max-ingest-body-bytes. */
  bodyLimit?: 'default' | 'ingest';
  /** Credential-sensitive: the IP bucket is spent before anything else runs. */
  rateLimited?: true;
  /** Every response of the route, errors included, says it must not be cached. */
  noStore?: true;
  /** The permission a person's access key needs here; absent: access keys answer 403. */
  accessKey?: AccessKeyPermission;
}

/** The request before credentials and path ids are read. */
export interface RequestInfo {
  req: IncomingMessage;
  res: ServerResponse;
  deps: ServiceDeps;
  route: RouteInfo;
  /** The request's path without the service's base path: `/console/app.js` under `/logs`. */
  path: string;
  /** The prefix every route is served under (`/logs`), or `''`. */
  basePath: string;
  query: URLSearchParams;
  /** Socket address, or the address a trusted proxy hop forwarded. */
  clientIp: string;
  userAgent: string | null;
  /** Reads, parses and validates a JSON body (1 MiB limit unless the route says otherwise). */
  json<T, S>(struct: Struct<T, S>): Promise<T>;
  /** Reads the body and parses JSON without validation (e.g. the ingestion array). */
  rawJson(): Promise<unknown>;
  /** Reads and parses a form-encoded body. */
  form(): Promise<URLSearchParams>;
}

/** Path ids by name, each already checked to be a positive integer (400 otherwise). */
export type PathParams<N extends string> = { readonly [K in N]: number };

/** The `:param` names of a path: `'/v1/teams/:teamId/members/:userId'` → `'teamId' | 'userId'`. */
export type ParamNames<P extends string> = P extends `${string}/:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}/:${infer Name}`
    ? Name
    : never;

/** The context of a public route; `N` names its path ids. */
export interface PublicContext<N extends string = never> extends RequestInfo {
  params: PathParams<N>;
}

/** The context of a `user` route: the caller is signed in. */
export interface UserContext<N extends string = never> extends PublicContext<N> {
  principal: UserPrincipal;
}

/** The context of a `project-key` route: the key has been checked. */
export interface KeyContext<N extends string = never> extends PublicContext<N> {
  key: AuthenticatedKey;
}

export type ContextFor<A extends AuthKind, N extends string> = A extends 'user' ? UserContext<N> : A extends 'project-key' ? KeyContext<N> : PublicContext<N>;

/** What a route function answers. `streamed` means it wrote the response itself. */
export type Reply =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { status: number; jsonText: string; headers?: Record<string, string> }
  | { status: number; bytes: Uint8Array; contentType: string; headers?: Record<string, string> }
  | { streamed: true };

export const STREAMED: Reply = { streamed: true };

/** A row of the table as the handler sees it: the function's context chosen by `auth`. */
export type Route =
  | (RouteInfo & { auth: 'none'; handle(ctx: PublicContext<string>): Promise<Reply> })
  | (RouteInfo & { auth: 'user'; handle(ctx: UserContext<string>): Promise<Reply> })
  | (RouteInfo & { auth: 'project-key'; handle(ctx: KeyContext<string>): Promise<Reply> });

/** A row as written in the table; `envelope` defaults to `general`. */
export interface RouteSpec<A extends AuthKind, P extends string> extends Omit<RouteInfo, 'path' | 'auth' | 'envelope'> {
  path: P;
  auth: A;
  envelope?: Envelope;
  /** A property, not a method, so that its context type is checked strictly against `auth` and `path`. */
  handle: (ctx: ContextFor<A, ParamNames<P>>) => Promise<Reply>;
}

/**
 * One row of the table. The compiler checks that the function accepts the
 * context of the row's credential kind and path ids; the handler builds
 * exactly that context from `auth` and `path`, which is why the row can then
 * be stored in the table's common type.
 */
export function route<A extends AuthKind, P extends string>(spec: RouteSpec<A, P>): Route {
  return { envelope: 'general', ...spec } as RouteInfo as Route;
}
