// Writes a generated, committed file only when its text changed; with
// `--check` on the command line, only reports (exit 1) that it is out of
// date. Shared by the scripts that generate files from docs/openapi.yaml.
import { readFileSync, writeFileSync } from 'node:fs';

export function writeGenerated(target, text, script) {
  let current = null;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = null;
  }
  if (process.argv.includes('--check')) {
    if (current !== text) {
      console.error(`${target} is out of date: run \`node ${script}\` (or \`npm run build\`).`);
      process.exit(1);
    }
  } else if (current !== text) {
    writeFileSync(target, text);
    console.log(`wrote ${target}`);
  }
}
