/**
 * docs/openapi.yaml against the code: a valid OpenAPI 3.1 document, served
 * as built (the generated module is its JSON), listing exactly the routes of
 * the route table and exactly the error codes of `ERROR_CODES` with their
 * statuses, and exactly the audit actions of `AUDIT_ACTIONS` (the console's
 * types are generated from it, so this is what keeps the console in step);
 * and the response checker the HTTP tests use really refuses what the
 * document does not describe.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { AUDIT_ACTIONS } from '../../lib/audit/audit.js';
import { allRoutes } from '../../lib/http/routes.js';
import { ERROR_CODES } from '../../lib/core/errors.js';
import { OPENAPI_JSON } from '../../lib/http/openapi-document.js';
import { compileEveryOpenApiSchema, documentedOperations, openApiDocument, openApiProblem } from '../support/openapi.js';

/** `GET /v1/users/:id` → `GET /v1/users/{id}`. */
function asTemplate(method: string, path: string): string {
  return `${method} ${path.replace(/:([A-Za-z]+)/g, '{$1}')}`;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: new Headers({ 'content-type': 'application/json; charset=utf-8', ...headers }),
  text: JSON.stringify(body),
});

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = openApiDocument();
    assert.match(doc.openapi, /^3\.1\./);
    const result = await new Validator().validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });

  it('has schemas that all compile as JSON Schema 2020-12, references resolved', () => {
    assert.ok(compileEveryOpenApiSchema() > 100);
  });

  it('is what GET /v1/openapi.json serves (the generated module is up to date)', () => {
    assert.deepEqual(
      JSON.parse(OPENAPI_JSON),
      openApiDocument(),
      'lib/http/openapi-document.ts is stale: run `node scripts/build-openapi.mjs` (part of `npm run build`)',
    );
  });

  it("lists exactly the routes of the route table (but the console's files)", () => {
    const table = new Set(
      allRoutes()
        .filter((r) => !r.path.startsWith('/console'))
        .map((r) => asTemplate(r.method, r.path)),
    );
    const documented = new Set(documentedOperations());
    assert.deepEqual([...table].filter((op) => !documented.has(op)).sort(), [], 'routes the document does not describe');
    assert.deepEqual([...documented].filter((op) => !table.has(op)).sort(), [], 'documented operations the service does not serve');
  });

  it('names every path parameter of every route, as an integer id', () => {
    const doc = openApiDocument();
    for (const [path, item] of Object.entries(doc.paths as Record<string, any>)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'parameters') continue;
        const declared = [...(item.parameters ?? []), ...((operation as any).parameters ?? [])]
          .map((p: any) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p))
          .filter((p: any) => p.in === 'path');
        assert.deepEqual(declared.map((p: any) => p.name).sort(), [...names].sort(), `${method} ${path}`);
        for (const p of declared) assert.equal(p.schema.$ref, '#/components/schemas/Id', `${method} ${path} {${p.name}}`);
      }
    }
  });

  it('lists exactly the audit actions the service writes, in its order', () => {
    assert.deepEqual(openApiDocument().components.schemas.AuditAction.enum, [...AUDIT_ACTIONS]);
  });

  it("is what the console's generated types say (console/src/api-types.ts is up to date)", () => {
    // Exits 1, and the test fails with its message, when the file is stale.
    const root = fileURLToPath(new URL('../..', import.meta.url));
    execFileSync(process.execPath, ['scripts/build-api-types.mjs', '--check'], { cwd: root, stdio: 'pipe' });
  });

  it('documents every error code with its statuses, and no other code', () => {
    const codes = openApiDocument().components.schemas.ErrorCode;
    const statuses = (entry: number | readonly number[]) => (typeof entry === 'number' ? [entry] : [...entry]);
    assert.deepEqual([...codes.enum].sort(), Object.keys(ERROR_CODES).sort());
    assert.deepEqual(Object.keys(codes['x-status-by-code']).sort(), Object.keys(ERROR_CODES).sort());
    for (const [code, entry] of Object.entries(ERROR_CODES) as [string, number | readonly number[]][]) {
      const documented = statuses(codes['x-status-by-code'][code]);
      // The usual status first; the document may know one more place a code is answered with another.
      assert.equal(documented[0], statuses(entry)[0], `the status of ${code}`);
      for (const status of statuses(entry)) assert.ok(documented.includes(status), `${code} is also answered with ${status}`);
      assert.match(codes.description, new RegExp(`\\| ${code} \\| ${documented.join(', ')} \\|`), `the ErrorCode table row of ${code}`);
    }
  });

  it('answers every operation with an error response for each 4xx and 5xx it lists', () => {
    for (const op of documentedOperations()) {
      const [method, path] = op.split(' ') as [string, string];
      const responses = openApiDocument().paths[path][method.toLowerCase()].responses as Record<string, unknown>;
      // A redirect (`GET /` to the console) is that operation's success.
      assert.ok(
        Object.keys(responses).some((s) => s.startsWith('2') || s.startsWith('3')),
        `${op} has a success response`,
      );
      assert.ok('400' in responses, `${op} lists 400 (a request target refused before routing)`);
    }
  });
});

describe('the response checker of the HTTP tests', () => {
  it('accepts a response the document describes', () => {
    assert.equal(openApiProblem('GET', '/healthz', json(200, { status: 'ok' })), null);
    assert.equal(
      openApiProblem('GET', '/v1/groups/7/teams', json(200, { items: [{ id: 1, group_id: 7, name: 't', created_at: '2024-05-01T12:00:00.000Z' }] })),
      null,
    );
    assert.equal(openApiProblem('DELETE', '/v1/users/me', { status: 204, headers: new Headers(), text: '' }), null);
    assert.equal(openApiProblem('GET', '/v1/nope', json(404, { error: 'not_found', message: 'No such route.' })), null);
  });

  it('refuses a status the route does not list', () => {
    assert.match(openApiProblem('GET', '/healthz', json(418, { error: 'x', message: 'y' })) ?? '', /GET \/healthz answered 418/);
    assert.match(openApiProblem('GET', '/v1/nope', json(200, {})) ?? '', /not a documented route/);
  });

  it('refuses a body, a content type or a header that does not match', () => {
    assert.match(openApiProblem('GET', '/healthz', json(200, { status: 'ok', extra: 1 })) ?? '', /does not match/);
    assert.match(openApiProblem('GET', '/v1/groups/1/teams', json(200, { items: [{ id: 1, name: 't' }] })) ?? '', /group_id/);
    assert.match(openApiProblem('GET', '/v1/users', json(403, { error: 'not_found', message: 'm' })) ?? '', /does not match/);
    assert.match(openApiProblem('GET', '/v1/users', json(200, { items: [], next_cursor: null, created_at: '2024-05-01 12:00' })) ?? '', /does not match/);
    assert.match(openApiProblem('GET', '/healthz', { status: 200, headers: new Headers({ 'content-type': 'text/plain' }), text: 'ok' }) ?? '', /content type/);
    assert.match(openApiProblem('DELETE', '/v1/users/me', { status: 204, headers: new Headers(), text: 'x' }) ?? '', /no body/);
    assert.match(openApiProblem('POST', '/v1/auth/change-password', json(429, { error: 'too_many_requests', message: 'm' })) ?? '', /Retry-After is missing/);
    assert.match(
      openApiProblem(
        'POST',
        '/v1/auth/token',
        json(200, { access_token: 'a', refresh_token: 'r', token_type: 'Bearer', expires_in: 900, refresh_expires_in: 9 }),
      ) ?? '',
      /Cache-Control is missing/,
    );
  });

  it("knows the OTLP route answers in the request's encoding: protobuf bytes, or JSON with an int64 as a string", () => {
    const otlp = '/v1/otlp/v1/logs';
    const protobuf = { status: 200, headers: new Headers({ 'content-type': 'application/x-protobuf' }), text: '' };
    assert.equal(openApiProblem('POST', otlp, protobuf), null);
    assert.equal(openApiProblem('POST', otlp, json(200, {})), null);
    assert.equal(openApiProblem('POST', otlp, json(200, { partialSuccess: { rejectedLogRecords: '2', errorMessage: 'm' } })), null);
    assert.match(openApiProblem('POST', otlp, json(200, { partialSuccess: { rejectedLogRecords: 2, errorMessage: 'm' } })) ?? '', /does not match/);
    assert.match(openApiProblem('POST', otlp, json(503, { error: 'temporarily_unavailable', message: 'm' })) ?? '', /Retry-After is missing/);
    assert.equal(openApiProblem('POST', otlp, json(503, { error: 'temporarily_unavailable', message: 'm' }, { 'retry-after': '5' })), null);
  });
});
