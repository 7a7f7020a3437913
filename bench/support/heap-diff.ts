/**
 * Compares two V8 heap snapshots (`.heapsnapshot` JSON, e.g. from
 * `bench/soak.ts --heap-snapshots DIR`): objects and self size summed per
 * constructor (node name for objects, type otherwise), and the rows that
 * grew most from the first to the second.
 *
 *   node --import tsx bench/support/heap-diff.ts first.heapsnapshot second.heapsnapshot [rows]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export type Census = Map<string, { count: number; bytes: number }>;

export function census(path: string): Census {
  const snap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const out: Census = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    // Strings, code and arrays are named by their content: group them by type.
    const key = type === 'object' || type === 'closure' ? `${type === 'closure' ? 'closure ' : ''}${snap.strings[snap.nodes[i + nameAt]!]}` : `(${type})`;
    const row = out.get(key) ?? { count: 0, bytes: 0 };
    row.count += 1;
    row.bytes += snap.nodes[i + sizeAt]!;
    out.set(key, row);
  }
  return out;
}

export function diff(a: Census, b: Census): { key: string; count: number; bytes: number; countAfter: number; bytesAfter: number }[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].map((key) => {
    const before = a.get(key) ?? { count: 0, bytes: 0 };
    const after = b.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: after.count - before.count, bytes: after.bytes - before.bytes, countAfter: after.count, bytesAfter: after.bytes };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [first, second, rows] = process.argv.slice(2);
  if (!first || !second) throw new Error('usage: heap-diff.ts first.heapsnapshot second.heapsnapshot [rows]');
  const a = census(first);
  const b = census(second);
  const total = (c: Census) => [...c.values()].reduce((s, r) => s + r.bytes, 0);
  console.log(`self size: ${(total(a) / 2 ** 20).toFixed(1)} → ${(total(b) / 2 ** 20).toFixed(1)} MiB`);
  const changes = diff(a, b).sort((x, y) => y.bytes - x.bytes);
  const n = Number(rows ?? 25);
  console.log('grew most (bytes, objects; after):');
  for (const r of changes.slice(0, n))
    console.log(`  ${r.bytes >= 0 ? '+' : ''}${r.bytes}\t${r.count >= 0 ? '+' : ''}${r.count}\t${r.bytesAfter}\t${r.countAfter}\t${r.key}`);
  console.log('grew most (objects):');
  for (const r of [...changes].sort((x, y) => y.count - x.count).slice(0, n))
    console.log(`  ${r.count >= 0 ? '+' : ''}${r.count}\t${r.bytes >= 0 ? '+' : ''}${r.bytes}\t${r.countAfter}\t${r.key}`);
}
