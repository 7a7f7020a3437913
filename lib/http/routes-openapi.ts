/**
 * `GET /v1/openapi.json`: the OpenAPI description of this API, public, so
 * clients in any language can be generated from the running service. The
 * text is built from `docs/openapi.yaml` at build time (no YAML parser at
 * run time); a test keeps the two and the route table in step.
 */
import { OPENAPI_JSON } from './openapi-document.js';
import type { Route } from './route.js';

export const openApiRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/openapi.json',
    auth: 'none',
    envelope: 'general',
    async handle() {
      return { status: 200, jsonText: OPENAPI_JSON };
    },
  },
];
