/**
 * What a route is: data the handler reads (method, path, credential kind,
 * envelope, exemptions) plus the function that serves it. The table itself
 * is `routes.ts`; each area keeps its rows in its own `routes-*.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Struct } from 'superstruct';
import type { Envelope } from './envelopes.js';
import type { ServiceDeps } from './service-deps.js';
import type { AccessClaims } from '../auth/access-tokens.js';
import type { RoleGrant, UserRow } from '../storage/types-org.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** `none`: public; `user`: access token (JWT); `project-key`: `slk_…` secret key. */
export type AuthKind = 'none' | 'user' | 'project-key';

/** The signed-in caller of a `user` route, read fresh from the database. */
export interface UserPrincipal {
  /** The user row as stored now (is_active, token_version, must_change_password fresh). */
  user: UserRow;
  /** Effective grants from the token's `roles` claim (spec: roles are read from the claims). */
  grants: RoleGrant[];
  claims: AccessClaims;
}

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  deps: ServiceDeps;
  route: Route;
  /** Path parameters, all ids, already checked to be positive integers (400 otherwise). */
  params: Record<string, number>;
  query: URLSearchParams;
  /** Socket address, or the trusted X-Forwarded-For hop (D12). */
  clientIp: string;
  userAgent: string | null;
  /** Present on `user` routes. */
  principal: UserPrincipal | null;
  /** The raw bearer value on `project-key` routes (the route authenticates it itself). */
  bearer: string | null;
  /** Reads, parses and validates a JSON body (1 MiB limit unless the route says otherwise). */
  json<T, S>(struct: Struct<T, S>): Promise<T>;
  /** Reads the body and parses JSON without validation (e.g. the ingestion array). */
  rawJson(): Promise<unknown>;
  /** Reads and parses a form-encoded body. */
  form(): Promise<URLSearchParams>;
}

/** What a route function answers. `streamed` means it wrote the response itself. */
export type Reply =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { status: number; jsonText: string; headers?: Record<string, string> }
  | { streamed: true };

export interface Route {
  method: HttpMethod;
  /** `/v1/users/:id`; every `:param` is an integer id. */
  path: string;
  auth: AuthKind;
  envelope: Envelope;
  /** Answers normally while the caller must change their password (the four exemptions). */
  allowDuringPasswordChange?: boolean;
  /** Body size limit in bytes; default 1 MiB. `ingest` uses --max-ingest-body-bytes. */
  bodyLimit?: 'default' | 'ingest';
  /** Credential-sensitive: the IP bucket is spent before anything else runs. */
  rateLimited?: boolean;
  handle(ctx: RequestContext): Promise<Reply>;
}

export const STREAMED: Reply = { streamed: true };
