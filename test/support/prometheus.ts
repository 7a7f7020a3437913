/**
 * A strict reader of the Prometheus text exposition format (what
 * prom-client writes): `# HELP` and `# TYPE` lines, then samples
 * `name{label="value",…} number`. Every line must parse, every sample must
 * belong to a declared family, so a malformed scrape fails the test instead
 * of slipping past a loose regular expression.
 */
import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  /** Family name → its TYPE (`counter`, `gauge`, `histogram`, `summary`). */
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
  /** The value of the one sample with this name and exactly these labels; undefined when absent. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** The sum over samples of this name whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/;
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const m = LABEL.exec(rest);
    assert.ok(m, `a label list that parses: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(m[0].length);
  }
  return labels;
}

/** Special values are read case-insensitively, as Prometheus does (prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === '+inf' || special === 'inf') return Infinity;
  if (special === '-inf') return -Infinity;
  if (special === 'nan') return NaN;
  const n = Number(text);
  assert.ok(text !== '' && !Number.isNaN(n), `a numeric value: ${line}`);
  return n;
}

function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const type = types.get(base);
      if (type === 'histogram' || type === 'summary') return base;
    }
  }
  return undefined;
}

export function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      const rest = line.slice('# HELP '.length);
      const space = rest.indexOf(' ');
      assert.ok(space > 0, `a HELP line: ${line}`);
      help.set(rest.slice(0, space), rest.slice(space + 1));
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice('# TYPE '.length).split(' ');
      assert.ok(name && ['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type ?? ''), `a TYPE line: ${line}`);
      assert.ok(!types.has(name), `one TYPE line per family: ${name}`);
      types.set(name, type!);
      continue;
    }
    assert.ok(!line.startsWith('#'), `only HELP and TYPE comments: ${line}`);
    const m = SAMPLE.exec(line);
    assert.ok(m, `a sample line: ${line}`);
    const name = m[1]!;
    assert.ok(familyOf(name, types) !== undefined, `sample ${name} follows its TYPE line`);
    samples.push({ name, labels: parseLabels(m[2] ?? '', line), value: parseValue(m[3]!, line) });
  }
  const matches = (s: Sample, name: string, labels: Record<string, string>) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  return {
    types,
    help,
    samples,
    value(name, labels = {}) {
      const found = samples.filter((s) => matches(s, name, labels) && Object.keys(s.labels).length === Object.keys(labels).length);
      assert.ok(found.length <= 1, `at most one sample ${name} ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
    sum(name, labels = {}) {
      return samples.filter((s) => matches(s, name, labels)).reduce((total, s) => total + s.value, 0);
    },
  };
}
