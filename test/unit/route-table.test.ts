/**
 * The route table as data, and the compile-time promise of `route()`: a
 * row's function receives the context of the row's credential kind and path
 * ids, so a mismatch is a type error (the `@ts-expect-error` lines fail
 * `npm run typecheck` if it ever stops being one).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROUTES } from '../../lib/http/routes.js';
import { route, type KeyContext, type ParamNames, type Reply, type UserContext } from '../../lib/http/route.js';

const byId = async (ctx: UserContext<'id'>): Promise<Reply> => ({ status: 200, body: { id: ctx.params.id } });
const byKey = async (ctx: KeyContext): Promise<Reply> => ({ status: 202, body: { project: ctx.key.projectId } });
const byTwo = async (ctx: UserContext<'teamId' | 'userId'>): Promise<Reply> => ({ status: 204, body: ctx.params });

describe('route table', () => {
  it('lists each method and path once', () => {
    const seen = ROUTES.map((r) => `${r.method} ${r.path}`);
    assert.equal(new Set(seen).size, seen.length);
  });

  it('takes a project key only for ingestion (logkeep batches and OTLP exports), marks the token endpoint and single sign-on no-store, gives only the token endpoint the OAuth envelope, and is public only there, for the health check, the API description, the metrics (their own token) and the console', () => {
    const rows = (pick: (r: (typeof ROUTES)[number]) => boolean) => ROUTES.filter(pick).map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(
      rows((r) => r.auth === 'project-key'),
      ['POST /v1/logs', 'POST /v1/otlp/v1/logs'],
    );
    assert.deepEqual(
      rows((r) => r.noStore === true),
      ['POST /v1/auth/token', 'DELETE /v1/auth/token', 'GET /v1/auth/methods', 'GET /v1/auth/oidc/start', 'GET /v1/auth/oidc/callback'],
    );
    assert.deepEqual(
      rows((r) => r.envelope === 'oauth'),
      ['POST /v1/auth/token', 'DELETE /v1/auth/token'],
    );
    assert.deepEqual(
      rows((r) => r.auth === 'none'),
      [
        'GET /healthz',
        'POST /v1/auth/token',
        'DELETE /v1/auth/token',
        'GET /v1/auth/methods',
        'GET /v1/auth/oidc/start',
        'GET /v1/auth/oidc/callback',
        'GET /v1/openapi.json',
        'GET /metrics',
        'GET /',
        'ANY /console/*',
      ],
    );
  });

  it('serves the log query, the stream and the histogram to signed-in users', () => {
    const logs = ROUTES.filter((r) => r.path.startsWith('/v1/logs') && r.auth === 'user').map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(logs, ['GET /v1/logs', 'GET /v1/logs/stream', 'GET /v1/logs/histogram']);
  });

  it('lists /v1/users/me before /v1/users/:id, so the first match never reads `me` as an id', () => {
    const paths = ROUTES.filter((r) => r.method === 'DELETE').map((r) => r.path);
    assert.ok(paths.indexOf('/v1/users/me') < paths.indexOf('/v1/users/:id'));
  });

  it('refuses, at compile time, a function whose context the row cannot give', () => {
    const names: ParamNames<'/v1/teams/:teamId/members/:userId'>[] = ['teamId', 'userId'];
    assert.equal(names.length, 2);
    assert.equal(route({ method: 'GET', path: '/v1/things/:id', auth: 'user', handle: byId }).envelope, 'general');
    route({ method: 'DELETE', path: '/v1/teams/:teamId/members/:userId', auth: 'user', handle: byTwo });
    route({ method: 'POST', path: '/v1/things', auth: 'project-key', handle: byKey });
    // @ts-expect-error a public row has no signed-in caller to give
    route({ method: 'GET', path: '/v1/things/:id', auth: 'none', handle: byId });
    // @ts-expect-error the path has no :id
    route({ method: 'GET', path: '/v1/things', auth: 'user', handle: byId });
    // @ts-expect-error a user row has no project key to give
    route({ method: 'POST', path: '/v1/things', auth: 'user', handle: byKey });
    // @ts-expect-error the path has :teamId but no :userId
    route({ method: 'DELETE', path: '/v1/teams/:teamId/members', auth: 'user', handle: byTwo });
  });
});
