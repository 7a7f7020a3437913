#!/usr/bin/env node
// Turns the schemas of docs/openapi.yaml (`components.schemas`) into
// TypeScript types for the console, console/src/api-types.ts, so the
// console's view of an answer cannot drift from the document the service is
// tested against. Run by `npm run build` and `npm run typecheck` (before
// tsc); `--check` only reports (exit 1) whether the file is out of date. The
// file is committed as well, so an editor and `tsc` work in a fresh clone.
//
// Only what the document's schemas use is converted: `$ref`, `type` (one or
// a list), `enum`, `const`, `oneOf`/`anyOf` (a union), `allOf` (an
// intersection), objects with `properties`/`required`/`additionalProperties`
// and arrays. `Page` becomes the generic `Page<T>`, and a schema built as
// `allOf: [Page, {items: {items: X}}]` becomes `Page<X>` (and its own fields).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { writeGenerated } from './generated-file.mjs';

const SOURCE = 'docs/openapi.yaml';
const TARGET = 'console/src/api-types.ts';
const SCHEMA_REF = '#/components/schemas/';
const PAGE = 'Page';

const schemas = parse(readFileSync(SOURCE, 'utf8')).components.schemas;

/** The TypeScript name a `$ref` points to. */
function refName(ref) {
  if (!ref.startsWith(SCHEMA_REF)) throw new Error(`${SOURCE}: unsupported $ref ${ref}`);
  const name = ref.slice(SCHEMA_REF.length);
  if (!(name in schemas)) throw new Error(`${SOURCE}: $ref to a missing schema ${ref}`);
  return name;
}

/** A doc comment from a schema's description, indented to `pad`. */
function doc(schema, pad) {
  const text = typeof schema === 'object' && schema !== null ? schema.description?.trim() : undefined;
  if (!text) return '';
  const lines = text.replaceAll('*/', '*\\/').split('\n');
  if (lines.length === 1) return `${pad}/** ${lines[0]} */\n`;
  return `${pad}/**\n${lines.map((l) => `${pad} *${l ? ` ${l}` : ''}`).join('\n')}\n${pad} */\n`;
}

/** A literal in the house style (single quotes). */
const literal = (v) => (typeof v === 'string' ? `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : JSON.stringify(v));
const parenthesised = (t) => (/[|&]/.test(t) ? `(${t})` : t);
const union = (types) => [...new Set(types)].join(' | ');

/** The TypeScript type of a schema, written at indentation `pad`. */
function typeOf(schema, pad = '') {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (schema.$ref) return refName(schema.$ref);
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.enum) return union(schema.enum.map(literal));
  if (schema.oneOf || schema.anyOf) return union((schema.oneOf ?? schema.anyOf).map((s) => typeOf(s, pad)));
  if (schema.allOf) return allOfType(schema, pad);
  let types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) types = schema.properties || schema.required ? ['object'] : schema.items ? ['array'] : [];
  if (types.length === 0) return 'unknown';
  return union(types.map((t) => plainType(t, schema, pad)));
}

function plainType(type, schema, pad) {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${parenthesised(typeOf(schema.items, pad))}[]`;
    case 'object':
      return objectType(schema, pad);
    default:
      throw new Error(`${SOURCE}: unsupported type ${type}`);
  }
}

/** An object's fields; `replace` overrides some fields' types (a generic parameter). */
function objectType(schema, pad, replace = {}) {
  const props = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (props.length === 0) return extra === false ? 'Record<string, never>' : `Record<string, ${extra && extra !== true ? typeOf(extra, pad) : 'unknown'}>`;
  const required = new Set(schema.required ?? []);
  const inner = `${pad}  `;
  const lines = props.map(([name, prop]) => {
    const type = replace[name] ?? typeOf(prop, inner);
    // A property forbidden with `false` may be absent only.
    const optional = prop === false || !required.has(name);
    return `${doc(prop, inner)}${inner}${name}${optional ? '?' : ''}: ${type};`;
  });
  if (extra !== undefined && extra !== false) lines.push(`${inner}[key: string]: ${extra === true ? 'unknown' : typeOf(extra, inner)};`);
  return `{\n${lines.join('\n')}\n${pad}}`;
}

/** `allOf` as an intersection, with a page of X written `Page<X>`. */
function allOfType(schema, pad) {
  const parts = [];
  let itemType = null;
  for (const part of schema.allOf) {
    if (part.$ref === `${SCHEMA_REF}${PAGE}`) continue;
    const { items, ...rest } = part.properties ?? {};
    if (schema.allOf.some((p) => p.$ref === `${SCHEMA_REF}${PAGE}`) && items?.items) {
      itemType = typeOf(items.items, pad);
      if (Object.keys(rest).length === 0) continue;
      parts.push(typeOf({ ...part, properties: rest, required: (part.required ?? []).filter((r) => r !== 'items') }, pad));
    } else parts.push(typeOf(part, pad));
  }
  if (schema.allOf.some((p) => p.$ref === `${SCHEMA_REF}${PAGE}`)) parts.unshift(`${PAGE}<${itemType ?? 'unknown'}>`);
  return parts.join(' & ');
}

const out = [
  `// Generated from ${SOURCE} by scripts/build-api-types.mjs (npm run build or npm run typecheck):`,
  '// edit the YAML, not this file. To regenerate alone: node scripts/build-api-types.mjs',
  '/** The schemas of the HTTP API (`components.schemas` of the OpenAPI document), as TypeScript types. */',
  '',
];
for (const [name, schema] of Object.entries(schemas)) {
  out.push(doc(schema, '').trimEnd());
  if (name === PAGE) out.push(`export type ${PAGE}<T = unknown> = ${objectType(schema, '', { items: 'T[]' })};`);
  else out.push(`export type ${name} = ${typeOf(schema)};`);
  out.push('');
}
const text = out
  .filter((line, i) => line !== '' || out[i - 1] !== '')
  .join('\n')
  .replace(/\n+$/, '\n');

writeGenerated(TARGET, text, 'scripts/build-api-types.mjs');
