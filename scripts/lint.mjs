#!/usr/bin/env node
// House checks that the type checker cannot make: no focused or skipped
// tests, no console.log left in lib/, no file in lib/ over 400 lines, no
// benchmark figure in a lib/ comment (they go stale: docs/measurements.md
// keeps them), and imports that follow the layer order (scripts/check-layers.mjs).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkLayers } from './check-layers.mjs';

const MAX_LIB_FILE_LINES = 400;
/** A speed quoted in a comment: "2.7×", "15 % faster", "entries/s", "measured … 13 ms". */
const BENCHMARK_FIGURE = /\d(\.\d+)?×|\d ?% (faster|slower|sooner|more|less)|entries\/s|rows\/s|measured[^.]*\d+(\.\d+)? ?(ms|µs|s)\b/;
const COMMENT_LINE = /^\s*(\/\/|\/\*|\*)/;
const problems = [...checkLayers('.')];
function walk(dir, visit) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, visit);
    else visit(p);
  }
}
walk('test', (p) => {
  if (!p.endsWith('.ts')) return;
  const text = readFileSync(p, 'utf8');
  if (/\b(it|test|describe)\.only\(|\.skip\(|\bxit\(|\{\s*only:\s*true/.test(text)) problems.push(`${p}: focused or skipped test`);
});
walk('lib', (p) => {
  if (!p.endsWith('.ts')) return;
  const text = readFileSync(p, 'utf8');
  if (/console\.log\(/.test(text)) problems.push(`${p}: console.log in library code`);
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_LIB_FILE_LINES) problems.push(`${p}: ${lines} lines; split it (at most ${MAX_LIB_FILE_LINES} in lib/)`);
  text.split('\n').forEach((line, i) => {
    if (COMMENT_LINE.test(line) && BENCHMARK_FIGURE.test(line)) {
      problems.push(`${p}:${i + 1}: a benchmark figure in a comment; put it in docs/measurements.md and keep the why`);
    }
  });
});
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('lint: ok');
