/**
 * Compressed and NDJSON ingestion on the file backend, beside plain JSON
 * arrays of the same entries in the same run:
 * - gzip NDJSON bodies (500 entries each, compressed at gzip's default
 *   level, as `gzip` and most shippers do) against plain JSON arrays, in
 *   alternating windows, target ≥ 0.8 × the plain rate;
 * - a decompression bomb (about 1 MiB of gzip that inflates to 1 GiB of
 *   zeros) refused with 413: time to the answer (target < 100 ms) and the
 *   service's peak RSS rise (target < 2 × the body limit).
 *
 * Standalone: `npm run build && node --import tsx bench/encodings.ts [--quick]`.
 */
import { performance } from 'node:perf_hooks';
import { constants, createGzip, gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { request } from 'undici';
import { createBatchPool } from './support/dataset.js';
import { CONFIG_DEFAULTS } from '../lib/core/config.js';
import { createOrg, fileDatabase, fmt, load, percentile, serviceSettings, startChild, verdict, type Shot } from './support/harness.js';

const BATCH = 500;

export async function benchEncodings(options: { quick: boolean }): Promise<void> {
  const pool = createBatchPool(options.quick ? 20 : 40, BATCH, 21);
  const plain = pool.bodies;
  const ndjsonGzip = plain.map((body) => gzipSync((JSON.parse(body.toString('utf8')) as unknown[]).map((e) => JSON.stringify(e)).join('\n')));
  const db = fileDatabase();
  const child = await startChild({ kind: 'service', settings: serviceSettings(db) });
  const org = await createOrg(child.url, 10);
  const seconds = options.quick ? 3 : 6;
  const rounds = options.quick ? 1 : 2;
  const rates = { plain: 0, gzip: 0 };
  const run = async (kind: 'plain' | 'gzip') => {
    let n = 0;
    const next = (): Shot => {
      const i = n++ % plain.length;
      const key = org.keys[n % org.keys.length]!;
      return kind === 'plain'
        ? { body: plain[i]!, entries: BATCH, key }
        : { body: ndjsonGzip[i]!, entries: BATCH, key, headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' } };
    };
    const deadline = Date.now() + seconds * 1000;
    const result = await load({ url: child.url, next, connections: 4, until: () => Date.now() > deadline });
    rates[kind] += result.rate / rounds;
  };
  for (let r = 0; r < rounds; r++) {
    await run('plain');
    await run('gzip');
  }
  const ratio = rates.gzip / rates.plain;
  const wire = ndjsonGzip.reduce((a, b) => a + b.length, 0) / plain.reduce((a, b) => a + b.length, 0);
  console.log('Compressed and NDJSON ingestion (file backend, 500 entries per request, 4 connections)');
  console.log(
    `  plain JSON arrays: ${fmt(rates.plain)} entries/s; gzip NDJSON (${fmt(100 * wire, 1)} % of the bytes): ${fmt(rates.gzip)} entries/s = ${fmt(ratio, 2)} × plain — target ≥ 0.8: ${verdict(ratio >= 0.8)}`,
  );

  const limit = CONFIG_DEFAULTS.maxIngestBodyBytes;
  const bomb = await gzipOfZeros(2 ** 30);
  const before = (await child.rss()).now;
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const res = await request(`${child.url}/v1/logs`, {
      method: 'POST',
      body: bomb,
      headers: { authorization: `Bearer ${org.keys[0]}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    await res.body.text();
    times.push(performance.now() - started);
    if (res.statusCode !== 413) throw new Error(`the bomb answered ${res.statusCode}`);
  }
  const rss = await child.rss();
  const rssRise = Math.max(0, rss.peak - before) / 2 ** 20;
  await child.stop();
  await db.drop();
  const slowest = Math.max(...times);
  console.log(
    `  bomb: ${fmt(bomb.length / 2 ** 20, 2)} MiB of gzip inflating to 1 GiB, 5 times: 413 after p50 ${fmt(percentile(times, 50), 1)} ms, slowest ${fmt(slowest, 1)} ms — target < 100 ms: ${verdict(slowest < 100)}; peak RSS rose ${fmt(rssRise, 1)} MiB (body limit ${fmt(limit / 2 ** 20)} MiB) — target < ${fmt((2 * limit) / 2 ** 20)} MiB: ${verdict(rssRise < (2 * limit) / 2 ** 20)}`,
  );
}

/** gzip of `bytes` zero bytes, streamed (never held inflated). */
async function gzipOfZeros(bytes: number): Promise<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024);
  let left = bytes;
  const zeros = new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
  return buffer(zeros.pipe(createGzip({ level: constants.Z_BEST_COMPRESSION })));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchEncodings({ quick: process.argv.includes('--quick') });
}
