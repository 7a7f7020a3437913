/**
 * `logkeep export` of 1M entries (100k with `--quick`): the built program
 * writes one project's entries as plain NDJSON to a file (no `--gzip`)
 * while its RSS (VmRSS from /proc) is sampled every 100 ms.
 *
 * Target: the export's peak RSS stays under 100 MiB, and the file holds
 * exactly the project's entries. Printed beside it, as the ceiling of the
 * same run: paging `GET /v1/logs` with `next_cursor` from Node (fetch) over
 * the same entries after the export, asking `limit=1000` (the service
 * serves at most 200 a page, as the export asks). The project is filled through `POST /v1/logs`
 * in batches of 1,000 from 4 connections; the service seals on its own in
 * the background (nothing here forces it), so some of the entries read are
 * sealed and some still in the tail. The same paging runs once before the
 * export too, so that the export does not pay alone for the first read
 * after filling (several times slower: cold caches, sealing under way); its
 * time is printed apart.
 *
 * Standalone (after `npm run build`): node --import tsx bench/export.ts [--quick] [--backend file|server|both]
 */
import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBatchPool } from './support/dataset.js';
import { shots } from './ingest.js';
import {
  createOrg,
  fmt,
  load,
  serviceSettings,
  startChild,
  verdict,
  type BenchDatabase,
  onEachBackend,
  backendsFromArgv,
  type BackendChoice,
} from './support/harness.js';

const BIN = fileURLToPath(new URL('../dist/bin/logkeep.cjs', import.meta.url));
const RSS_CEILING = 100 * 2 ** 20;
const MiB = 2 ** 20;

/** VmRSS of `pid` in bytes, or null once the process is gone. */
function vmRss(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Newlines in a file, read in chunks (the file may be larger than is comfortable to hold). */
async function countLines(path: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

interface ExportRun {
  seconds: number;
  peakRss: number;
  samples: number;
  bytes: number;
  lines: number;
  code: number | null;
  stderr: string;
}

/** The built program exporting `projectId` to `output`, its RSS sampled every 100 ms. */
async function runExport(url: string, key: string, projectId: number, output: string, configDir: string): Promise<ExportRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOGKEEP_URL: url, LOGKEEP_KEY: key, LOGKEEP_CONFIG: join(configDir, 'config.json') };
  delete env.LOGKEEP_PROFILE;
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'export', '--project', String(projectId), '--output', output], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  let peakRss = 0;
  let samples = 0;
  const sample = () => {
    const rss = vmRss(child.pid!);
    if (rss === null) return;
    samples++;
    if (rss > peakRss) peakRss = rss;
  };
  const sampler = setInterval(sample, 100);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  return { seconds, peakRss, samples, bytes: statSync(output).size, lines: await countLines(output), code, stderr };
}

/** Every entry of the project through `GET /v1/logs` pages, counted, not kept. */
async function pageFromNode(url: string, key: string, projectId: number): Promise<{ entries: number; bytes: number; pages: number; seconds: number }> {
  let cursor: string | null = null;
  let entries = 0;
  let bytes = 0;
  let pages = 0;
  const started = performance.now();
  do {
    const query = new URLSearchParams({ project_id: String(projectId), limit: '1000' });
    if (cursor) query.set('cursor', cursor);
    const res = await fetch(`${url}/v1/logs?${query}`, { headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /v1/logs answered ${res.status}: ${text.slice(0, 200)}`);
    const page = JSON.parse(text) as { items: unknown[]; next_cursor: string | null };
    entries += page.items.length;
    bytes += Buffer.byteLength(text);
    pages++;
    cursor = page.next_cursor;
  } while (cursor);
  return { entries, bytes, pages, seconds: (performance.now() - started) / 1000 };
}

async function benchOne(name: string, db: BenchDatabase, total: number): Promise<void> {
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  const configDir = mkdtempSync(join(process.env.LOGKEEP_BENCH_DIR ?? tmpdir(), 'logkeep-export-bench-'));
  try {
    const org = await createOrg(child.url, 1);
    const projectId = org.projectIds[0]!;
    const pool = createBatchPool(100, 1_000);
    const filled = await load({ url: child.url, next: shots(pool, org.keys), connections: 4, totalEntries: total });
    const created = await fetch(`${child.url}/v1/access-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        label: 'export bench',
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        scope: { permissions: ['read'], group_ids: [org.groupId] },
      }),
    });
    if (created.status !== 201) throw new Error(`creating the access key answered ${created.status}`);
    const key = ((await created.json()) as { secret: string }).secret;
    console.log(`  ${name}: ${fmt(filled.entries)} entries stored in ${fmt(filled.seconds, 1)} s (${fmt(filled.rate)}/s, 1,000 a batch, 4 connections)`);

    const output = join(configDir, 'export.ndjson');
    const before = await pageFromNode(child.url, key, projectId);
    const run = await runExport(child.url, key, projectId, output, configDir);
    const after = await pageFromNode(child.url, key, projectId);
    const node = after;
    const exact = run.code === 0 && run.lines === filled.entries && before.entries === filled.entries && after.entries === filled.entries;
    console.log(
      `    logkeep export (plain NDJSON to a file): ${fmt(run.lines)} lines, ${fmt(run.bytes / MiB, 1)} MiB in ${fmt(run.seconds, 1)} s: ` +
        `${fmt(run.lines / run.seconds)} entries/s, ${fmt(run.bytes / MiB / run.seconds, 1)} MiB/s (exit ${String(run.code)}); ` +
        `every entry once ${verdict(exact)}`,
    );
    console.log(
      `    peak RSS ${fmt(run.peakRss / MiB, 1)} MiB over ${fmt(run.samples)} samples — ceiling ${fmt(RSS_CEILING / MiB)} MiB: ${run.peakRss < RSS_CEILING ? 'met' : 'MISSED'}`,
    );
    console.log(
      `    beside it, GET /v1/logs paged from Node (fetch, limit=1000 asked, ${fmt(node.entries / node.pages)} a page served): ${fmt(node.entries)} entries, ` +
        `${fmt(node.bytes / MiB, 1)} MiB of JSON in ${fmt(node.seconds, 1)} s after the export: ${fmt(node.entries / node.seconds)} entries/s, ` +
        `${fmt(node.bytes / MiB / node.seconds, 1)} MiB/s (export at ${fmt((100 * run.lines) / run.seconds / (node.entries / node.seconds))} % of it)`,
    );
    console.log(
      `    (the first read after filling, the same paging before the export, took ${fmt(before.seconds, 1)} s: ${fmt(before.entries / before.seconds)} entries/s)`,
    );
    if (!exact) console.log(`    export stderr (end): ${run.stderr.slice(-800)}`);
  } finally {
    await child.stop().catch(() => undefined);
    rmSync(configDir, { recursive: true, force: true });
  }
}

export async function benchExport({ quick, backends = ['file', 'server'] }: { quick: boolean; backends?: BackendChoice[] }): Promise<void> {
  const total = quick ? 100_000 : 1_000_000;
  console.log(`\n== logkeep export of ${fmt(total)} entries: peak RSS beside 100 MiB, rate beside GET /v1/logs paged from Node`);
  await onEachBackend(backends, (name, db) => benchOne(name, db, total));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchExport({ quick: process.argv.includes('--quick'), backends: backendsFromArgv(process.argv) });
}
