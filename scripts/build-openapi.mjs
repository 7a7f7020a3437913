#!/usr/bin/env node
// Turns the hand-written docs/openapi.yaml into lib/http/openapi-document.ts,
// the JSON text `GET /v1/openapi.json` answers, so the service needs no YAML
// parser at run time. Run by `npm run build`; `--check` only reports (exit 1)
// whether the generated module is out of date.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { writeGenerated } from './generated-file.mjs';

const SOURCE = 'docs/openapi.yaml';
const TARGET = 'lib/http/openapi-document.ts';

const document = parse(readFileSync(SOURCE, 'utf8'));
const text =
  `// Generated from ${SOURCE} by scripts/build-openapi.mjs (npm run build): edit the YAML, not this file.\n` +
  '/** The OpenAPI description of the HTTP API, as the JSON text `GET /v1/openapi.json` answers. */\n' +
  `export const OPENAPI_JSON = ${JSON.stringify(JSON.stringify(document))};\n`;

writeGenerated(TARGET, text, 'scripts/build-openapi.mjs');
