/**
 * The OpenAPI description (docs/openapi.yaml) as a checker of real
 * responses: `api()` hands it every response of a logkeep service (one
 * started by `startService` or the bin helpers) and a response whose status,
 * content type, required headers or JSON body the document does not describe
 * for that route fails the test, naming the route and the mismatch.
 */
import { readFileSync } from 'node:fs';
import AjvModule from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { parse } from 'yaml';

/** The document's path, for tests that read it. */
export const OPENAPI_YAML_PATH = new URL('../../docs/openapi.yaml', import.meta.url);

// Both packages are CommonJS: under ESM their default export is the whole module.
const Ajv2020 = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule.default;
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as typeof formatsModule.default;

type Json = Record<string, any>;

/** The parsed document (read once). */
export function openApiDocument(): Json {
  cachedDocument ??= parse(readFileSync(OPENAPI_YAML_PATH, 'utf8')) as Json;
  return cachedDocument;
}
let cachedDocument: Json | undefined;

const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;

/** Every `METHOD /path` the document describes, path templates as written (`{id}`). */
export function documentedOperations(doc: Json = openApiDocument()): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS) if (item[method]) out.push(`${method.toUpperCase()} ${path}`);
  }
  return out;
}

const DOC_ID = 'https://logkeep.invalid/openapi.json';

interface Matcher {
  template: string;
  pattern: RegExp;
  params: number;
}

class ResponseChecker {
  private readonly doc = openApiDocument();
  private readonly ajv;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly matchers: Matcher[];

  constructor() {
    this.ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, allErrors: true });
    addFormats(this.ajv);
    // OpenAPI's own annotations in schemas, this document's extension, and the
    // top-level fields of the document, which is added whole so that response
    // schemas are compiled where they stand and their `$ref`s resolve.
    this.ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs', 'x-status-by-code']);
    this.ajv.addVocabulary(['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'components']);
    this.ajv.addSchema({ ...this.doc, $id: DOC_ID });
    // Literal paths first, so `/v1/users/me` is never read as `/v1/users/{id}`.
    this.matchers = Object.keys(this.doc.paths)
      .map((template) => ({
        template,
        params: (template.match(/\{/g) ?? []).length,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      }))
      .sort((a, b) => a.params - b.params);
  }

  /** What is wrong with this response, or null when the document describes it. */
  problem(method: string, target: string, res: { status: number; headers: Headers; text: string }): string | null {
    const pathname = pathOf(target);
    const verb = method.toLowerCase();
    // Like the router: the first path that matches and serves this method (`PATCH /v1/users/me` is `/v1/users/{id}`).
    const template = this.matchers.find((m) => m.pattern.test(pathname) && this.doc.paths[m.template][verb] !== undefined)?.template;
    const operation = template === undefined ? undefined : this.doc.paths[template][verb];
    const where = operation ? `${method} ${template}` : `${method} ${pathname} (not a documented route)`;
    const responses: Json = operation ? operation.responses : this.unservedResponses(verb);
    const pointerBase = operation ? `/paths/${escapePointer(template!)}/${verb}/responses` : null;

    const key = String(res.status);
    let response = responses[key];
    if (response === undefined) {
      return `${where} answered ${res.status}, which the document does not list (it lists ${Object.keys(responses).join(', ')}): ${res.text.slice(0, 300)}`;
    }
    let pointer = pointerBase ? `${pointerBase}/${key}` : null;
    if (typeof response.$ref === 'string') {
      pointer = response.$ref.slice(1);
      response = this.resolve(response.$ref);
    }

    for (const [name, declared] of Object.entries((response.headers ?? {}) as Json)) {
      const header = typeof declared.$ref === 'string' ? this.resolve(declared.$ref) : declared;
      // Hop-by-hop: what a client sees of it depends on its HTTP stack.
      if (name.toLowerCase() === 'connection') continue;
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) return `${where} ${res.status}: the header ${name} is missing`;
        continue;
      }
      const check = this.ajv.compile(header.schema);
      if (!check(value)) return `${where} ${res.status}: the header ${name} is '${value}', not ${JSON.stringify(header.schema)}`;
    }

    const content = response.content as Json | undefined;
    if (!content) {
      return res.text === '' ? null : `${where} ${res.status}: the document says no body, the response has one: ${res.text.slice(0, 300)}`;
    }
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(mediaType in content)) {
      return `${where} ${res.status}: content type '${mediaType}' is not one of ${Object.keys(content).join(', ')}`;
    }
    if (mediaType !== 'application/json') return null;
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return `${where} ${res.status}: the body is not JSON: ${res.text.slice(0, 300)}`;
    }
    const schemaPointer = pointer ? `${pointer}/content/application~1json/schema` : null;
    const validate = schemaPointer ? this.validator(schemaPointer) : this.ajv.compile(content['application/json'].schema);
    if (validate(body)) return null;
    return `${where} ${res.status}: the body does not match the document: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}\n  body: ${res.text.slice(0, 500)}`;
  }

  /** Compiles every schema of the document (components, bodies, parameters, headers); returns how many. */
  compileEverySchema(): number {
    const pointers: string[] = Object.keys(this.doc.components.schemas).map((name) => `/components/schemas/${escapePointer(name)}`);
    const visit = (node: unknown, pointer: string): void => {
      if (node === null || typeof node !== 'object') return;
      for (const [key, child] of Object.entries(node)) {
        const here = `${pointer}/${escapePointer(key)}`;
        // A schema is compiled whole, with what it contains.
        if (key === 'schema' && child !== null && typeof child === 'object') pointers.push(here);
        else visit(child, here);
      }
    };
    visit(this.doc.paths, '/paths');
    for (const part of ['parameters', 'responses', 'headers', 'requestBodies']) visit(this.doc.components[part], `/components/${part}`);
    for (const pointer of pointers) this.validator(pointer);
    return pointers.length;
  }

  /**
   * A route the document does not list is not served: 404 in the general
   * envelope (400 when the request target is refused before routing), or
   * 204 for a CORS preflight of a configured origin.
   */
  private unservedResponses(verb: string): Json {
    const errors = {
      '400': { $ref: '#/components/responses/BadRequest' },
      '404': { $ref: '#/components/responses/NotFound' },
    };
    return verb === 'options' ? { ...errors, '204': { description: 'CORS preflight' } } : errors;
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  private resolve(ref: string): Json {
    let node: any = this.doc;
    for (const part of ref.replace(/^#\//, '').split('/')) node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) throw new Error(`the document has no ${ref}`);
    return node;
  }
}

/** The path the service routes on, read from a request target the way its handler reads it. */
function pathOf(target: string): string {
  try {
    return (target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target, 'http://localhost')).pathname;
  } catch {
    // The service refuses such a target before routing: no documented route.
    return '';
  }
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

let checker: ResponseChecker | undefined;
const documentedBaseUrls = new Set<string>();

/** Responses from this base URL are checked against the document (it serves logkeep's routes at its root). */
export function checkResponsesOf(baseUrl: string): void {
  documentedBaseUrls.add(baseUrl);
}

/** Throws when a response from a checked base URL is not what the document describes. */
export function assertDocumentedResponse(baseUrl: string, method: string, target: string, res: { status: number; headers: Headers; text: string }): void {
  if (!documentedBaseUrls.has(baseUrl)) return;
  checker ??= new ResponseChecker();
  const problem = checker.problem(method, target, res);
  if (problem !== null) throw new Error(`Response not described by docs/openapi.yaml: ${problem}`);
}

/** Compiles every schema in the document (a broken `$ref` or keyword throws); returns how many. */
export function compileEveryOpenApiSchema(): number {
  checker ??= new ResponseChecker();
  return checker.compileEverySchema();
}

/** For tests of the checker itself: the problem with a response, or null. */
export function openApiProblem(method: string, target: string, res: { status: number; headers: Headers; text: string }): string | null {
  checker ??= new ResponseChecker();
  return checker.problem(method, target, res);
}

/**
 * The same check for a response read with `node:http` (the fuzz's client):
 * `HEAD` answers and bare `431`s (headers refused by the HTTP parser,
 * before any route) carry no body to check.
 */
export function wireResponseProblem(
  method: string,
  target: string,
  res: { status: number; headers: Record<string, string | string[] | undefined>; text: string },
): string | null {
  if (method === 'HEAD' || res.status === 431) return null;
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return openApiProblem(method, target, { status: res.status, headers, text: res.text });
}
