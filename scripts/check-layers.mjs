#!/usr/bin/env node
// The layer check: every import in lib/ and bin/ must point down the order
// below (or stay within its own folder), and no group of modules may import
// each other in a circle. docs/architecture.md explains the order.
//
// Usage: node scripts/check-layers.mjs [root]   (root defaults to the
// current directory; lib/ and bin/ are read under it). Exits 1 and lists
// every offending import when the check fails.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * lib/'s folders, bottom to top. A module may import its own folder and any
 * folder of an earlier row; folders in one row are peers and may not import
 * each other. `(root)` is the files directly in lib/ (the composition root),
 * `bin` the command-line program.
 */
export const LAYERS = [
  ['core'],
  ['search'],
  ['storage'],
  ['audit'],
  ['auth'],
  ['ingest'],
  ['logs'],
  ['live'],
  ['admin', 'ops', 'alerts'],
  ['metrics'],
  ['http'],
  ['(root)'],
  ['bin'],
];

/** Folders that import nothing of the rest of lib/; only these layers may import them. */
export const STANDALONE = { client: ['(root)', 'bin'] };

/** Sub-folders that share a layer but never import each other (the two backends). */
export const SEPARATE = [['storage/sqlite', 'storage/postgres']];

/** Sub-folders written for both backends, which therefore import neither of them. */
export const BACKEND_NEUTRAL = { folders: ['storage/log-index', 'storage/schema'], backends: SEPARATE[0] };

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
// Static imports and re-exports, side-effect imports, dynamic import() and
// `new URL('./x.js', import.meta.url)` (worker and child-process entries).
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bnew URL\(\s*)(['"])(\.{1,2}\/[^'"]+)\1/g;

function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `core`, `storage/sqlite`, `(root)`, `bin`…: where a file sits, relative to root; null outside lib/ and bin/. */
function placeOf(root, file) {
  const parts = relative(root, file).split(sep);
  if (parts[0] === 'bin') return { layer: 'bin', folder: 'bin' };
  if (parts[0] !== 'lib') return null;
  if (parts.length === 2) return { layer: '(root)', folder: '(root)' };
  return { layer: parts[1], folder: parts.slice(1, -1).join('/') };
}

function rankOf(layer) {
  return LAYERS.findIndex((row) => row.includes(layer));
}

function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const found = [];
  for (const match of text.matchAll(SPECIFIER)) {
    const line = text.slice(0, match.index).split('\n').length;
    found.push({ specifier: match[2], line });
  }
  return found;
}

/** What is wrong with one import from `from` to `to`, or null. */
function ruleBroken(from, to) {
  if (from.folder === to.folder) return null;
  const under = (place, folder) => place.folder === folder || place.folder.startsWith(`${folder}/`);
  for (const pair of SEPARATE) {
    const a = pair.find((f) => under(from, f));
    const b = pair.find((f) => under(to, f));
    if (a && b && a !== b) return `${a}/ and ${b}/ never import each other`;
  }
  const neutral = BACKEND_NEUTRAL.folders.find((f) => under(from, f));
  const backend = BACKEND_NEUTRAL.backends.find((f) => under(to, f));
  if (neutral && backend) return `${neutral}/ serves both backends and never imports ${backend}/`;
  if (from.layer === to.layer) return null;
  if (from.layer in STANDALONE) return `${from.layer}/ stands alone and imports nothing outside itself`;
  if (to.layer in STANDALONE) {
    return STANDALONE[to.layer].includes(from.layer) ? null : `only ${STANDALONE[to.layer].join(' and ')} may import ${to.layer}/`;
  }
  const a = rankOf(from.layer);
  const b = rankOf(to.layer);
  if (a < 0) return `folder lib/${from.layer}/ is not in the layer order (scripts/check-layers.mjs)`;
  if (b < 0) return `folder lib/${to.layer}/ is not in the layer order (scripts/check-layers.mjs)`;
  if (a === b) return `${from.layer} and ${to.layer} are peers and may not import each other`;
  if (b > a) return `${from.layer} may not import ${to.layer}, which sits above it`;
  return null;
}

/** Strongly connected groups of more than one module (Tarjan), each as a list of paths. */
function cyclesOf(graph) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const cycles = [];
  const visit = (node) => {
    info.set(node, { index, low: index, onStack: true });
    index++;
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!info.has(next)) {
        visit(next);
        info.get(node).low = Math.min(info.get(node).low, info.get(next).low);
      } else if (info.get(next).onStack) {
        info.get(node).low = Math.min(info.get(node).low, info.get(next).index);
      }
    }
    if (info.get(node).low === info.get(node).index) {
      const group = [];
      let member;
      do {
        member = stack.pop();
        info.get(member).onStack = false;
        group.push(member);
      } while (member !== node);
      if (group.length > 1) cycles.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!info.has(node)) visit(node);
  return cycles;
}

/** Every problem found under root, as `file:line: message` lines. */
export function checkLayers(root) {
  root = resolve(root);
  const problems = [];
  const graph = new Map();
  const files = [...sourceFiles(join(root, 'lib')), ...sourceFiles(join(root, 'bin'))];
  for (const file of files) {
    const from = placeOf(root, file);
    const edges = new Set();
    for (const { specifier, line } of importsOf(file)) {
      const target = resolve(dirname(file), specifier);
      const to = placeOf(root, target);
      if (!to) continue;
      const problem = ruleBroken(from, to);
      if (problem) problems.push(`${relative(root, file)}:${line}: imports ${specifier}: ${problem}`);
      // Sources are written as .ts and imported as .js.
      edges.add(relative(root, target).replace(/\.js$/, '.ts'));
    }
    graph.set(relative(root, file), edges);
  }
  for (const cycle of cyclesOf(graph)) problems.push(`import cycle among ${cycle.join(', ')}`);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkLayers(process.argv[2] ?? '.');
  if (problems.length) {
    console.error(`layers: ${problems.length} import(s) against the order in scripts/check-layers.mjs (see docs/architecture.md)`);
    console.error(problems.join('\n'));
    process.exit(1);
  }
  console.log('layers: ok');
}
