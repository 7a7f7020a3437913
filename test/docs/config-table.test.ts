/**
 * The configuration table of `docs/configuration.md` against the settings table the binary
 * reads (`lib/config-sources.ts`) and the defaults (`lib/core/config.ts`): one
 * row per setting, in the same order, with the same flag, environment
 * variable, embedding key and default. A setting added, renamed or given a
 * new default fails here until the documentation says so. The README
 * links to that page.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SETTINGS, type SettingSpec } from '../../lib/config-sources.js';
import { CONFIG_DEFAULTS } from '../../lib/core/config.js';

interface Row {
  flag: string;
  env: string;
  key: string;
  defaultValue: string;
  notes: string;
}

const CONFIG_DOC = 'docs/configuration.md';

/** The first table after the `## Every setting` heading, as rows of cells. */
function configTable(): Row[] {
  const doc = readFileSync(CONFIG_DOC, 'utf8');
  const start = doc.indexOf('\n## Every setting\n');
  assert.ok(start >= 0, `${CONFIG_DOC} has a "## Every setting" section`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start + 1, end < 0 ? doc.length : end);
  const lines = section.split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  assert.ok(first >= 0, 'the section has a table');
  const table = lines.slice(
    first,
    lines.findIndex((line, i) => i > first && !line.startsWith('|')),
  );
  const [header, rule, ...body] = table;
  assert.match(header!, /^\| Flag \| Environment variable \| Embedding key \| Default \| Notes \|$/);
  assert.match(rule!, /^\|(---\|)+$/);
  return body.map((line) => {
    const cells = line
      .slice(1, -1)
      .split(' | ')
      .map((c) => c.trim());
    assert.equal(cells.length, 5, `five cells in: ${line}`);
    const [flag, env, key, defaultValue, notes] = cells as [string, string, string, string, string];
    return { flag, env, key, defaultValue, notes };
  });
}

function expectedFlag(spec: SettingSpec): string {
  if (spec.flag === null) return '—';
  return spec.kind === 'boolean' ? `\`${spec.flag}\`, \`--no-${spec.flag.slice(2)}\`` : `\`${spec.flag}\``;
}

function expectedEnv(spec: SettingSpec): string {
  return spec.kind === 'secret' ? `\`${spec.env}\` or \`${spec.env}_FILE\`` : `\`${spec.env}\``;
}

/** `required` for the signing secret, `unset` for an empty value, else the value in backticks. */
function expectedDefault(spec: SettingSpec): string {
  if (spec.key === 'jwtSecret') return 'required';
  const value: unknown = CONFIG_DEFAULTS[spec.key as keyof typeof CONFIG_DEFAULTS];
  if (value === null || (Array.isArray(value) && value.length === 0)) return 'unset';
  return `\`${String(value)}\``;
}

describe('configuration table (docs/configuration.md)', () => {
  const rows = configTable();

  it('is linked from the README', () => {
    assert.ok(readFileSync('README.md', 'utf8').includes('](docs/configuration.md)'), 'README links docs/configuration.md');
  });

  it('has one row per setting, in the settings table order', () => {
    assert.deepEqual(
      rows.map((r) => r.env),
      SETTINGS.map(expectedEnv),
    );
  });

  it('names each setting by its flag, variable and embedding key, with its default', () => {
    for (const [i, spec] of SETTINGS.entries()) {
      const row = rows[i]!;
      assert.deepEqual(
        { flag: row.flag, env: row.env, key: row.key, default: row.defaultValue },
        { flag: expectedFlag(spec), env: expectedEnv(spec), key: `\`${spec.key}\``, default: expectedDefault(spec) },
        `row ${i + 1} (${spec.key})`,
      );
      assert.ok(row.notes.length > 0, `${spec.key} has notes`);
    }
  });
});
