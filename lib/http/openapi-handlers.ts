/**
 * `GET /v1/openapi.json`: the OpenAPI description of this API, public, so
 * clients in any language can be generated from the running service. The
 * text is built from `docs/openapi.yaml` at build time (no YAML parser at
 * run time); a test keeps the two and the route table in step.
 */
import { OPENAPI_JSON } from './openapi-document.js';
import type { Reply } from './route.js';

/** The route's function: the document, as the JSON text it was built into. */
export async function getOpenApiDocument(): Promise<Reply> {
  return { status: 200, jsonText: OPENAPI_JSON };
}
