/**
 * Codecs for sealed blocks, measured on runs of varied entries
 * (bench/support/varied-entries.ts): each run of N consecutive entries is
 * compressed as one payload (their JSON texts one after another, as a
 * sealed block keeps them), and the table gives bytes per entry, the ratio
 * to the JSON, and compress and decompress speed in MB of JSON per second
 * on one core. Codecs: `node:zlib` deflate (raw, levels 1 and 6) and
 * brotli (qualities 4 and 6), each with and without a preset dictionary
 * (Node 20's brotli takes none, so brotli is measured without); and zstd
 * through the `zstd-napi` package when it is installed (it is not a
 * dependency: `npm install --no-save zstd-napi` to include it), with and
 * without the same dictionary.
 *
 * The preset dictionary is 32 KiB of entries of another seed (raw content,
 * as deflate's window takes it), so it carries the keys, message
 * templates and frames a project's entries share, never the measured
 * entries themselves.
 *
 * Standalone: `node --import tsx bench/codecs.ts [--quick]`.
 */
import { createRequire } from 'node:module';
import { brotliCompressSync, brotliDecompressSync, constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { sealRun } from '../lib/storage/log-index/seal-run.js';
import { buildDictionary, cutSealRuns, type SealInput } from '../lib/storage/log-index/sealed-block.js';
import { fmt } from './support/harness.js';
import { variedEntries } from './support/varied-entries.js';

interface Codec {
  name: string;
  compress(input: Buffer): Buffer;
  decompress(input: Buffer, size: number): Buffer;
}

/** Up to `bytes` of entries of another seed, newest last (deflate favours near matches). */
export function presetDictionary(bytes = 32 * 1024, seed = 99): Buffer {
  const texts: string[] = [];
  let size = 0;
  for (const e of variedEntries(400, seed)) {
    const text = JSON.stringify(e);
    if (size + text.length > bytes) break;
    texts.push(text);
    size += text.length;
  }
  return Buffer.from(texts.join(''));
}

function zlibCodecs(dictionary: Buffer): Codec[] {
  const deflate = (level: number, dict: boolean): Codec => ({
    name: `deflate ${level}${dict ? ' + dictionary' : ''}`,
    compress: (b) => deflateRawSync(b, { level, ...(dict ? { dictionary } : {}) }),
    decompress: (b) => inflateRawSync(b, dict ? { dictionary } : {}),
  });
  const brotli = (quality: number): Codec => ({
    name: `brotli ${quality}`,
    compress: (b) =>
      brotliCompressSync(b, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: quality,
          [constants.BROTLI_PARAM_SIZE_HINT]: b.length,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        },
      }),
    decompress: (b) => brotliDecompressSync(b),
  });
  return [deflate(1, false), deflate(6, false), deflate(6, true), brotli(4), brotli(6)];
}

/** zstd through zstd-napi, if it is installed (it is not a dependency of logkeep). */
function zstdCodecs(dictionary: Buffer): Codec[] {
  let z: any;
  try {
    z = createRequire(import.meta.url)('zstd-napi');
  } catch {
    console.log('  (zstd-napi not installed: `npm install --no-save zstd-napi` to measure zstd)');
    return [];
  }
  const make = (level: number, dict: boolean): Codec => {
    const c = new z.Compressor();
    c.setParameters({ compressionLevel: level });
    const d = new z.Decompressor();
    if (dict) {
      c.loadDictionary(dictionary);
      d.loadDictionary(dictionary);
    }
    return { name: `zstd ${level}${dict ? ' + dictionary' : ''} (zstd-napi)`, compress: (b) => c.compress(b), decompress: (b) => d.decompress(b) };
  };
  return [make(3, false), make(3, true), make(6, false)];
}

interface Row {
  codec: string;
  perBlock: number;
  bytesPerEntry: number;
  ratio: number;
  compressMBs: number;
  decompressMBs: number;
}

function measure(codec: Codec, runs: Buffer[], entriesPerRun: number, repeat: number): Row {
  let raw = 0;
  let packed = 0;
  const compressed: Buffer[] = [];
  let t = performance.now();
  for (let r = 0; r < repeat; r++) {
    for (const run of runs) {
      const out = codec.compress(run);
      if (r === 0) {
        compressed.push(out);
        raw += run.length;
        packed += out.length;
      }
    }
  }
  const compressMs = (performance.now() - t) / repeat;
  t = performance.now();
  for (let r = 0; r < repeat; r++) {
    compressed.forEach((c, i) => {
      const out = codec.decompress(c, runs[i]!.length);
      if (r === 0 && !out.equals(runs[i]!)) throw new Error(`${codec.name} did not return its input`);
    });
  }
  const decompressMs = (performance.now() - t) / repeat;
  return {
    codec: codec.name,
    perBlock: entriesPerRun,
    bytesPerEntry: packed / (runs.length * entriesPerRun),
    ratio: packed / raw,
    compressMBs: raw / 1e6 / (compressMs / 1000),
    decompressMBs: raw / 1e6 / (decompressMs / 1000),
  };
}

export async function benchCodecs(options: { quick: boolean }): Promise<Row[]> {
  const total = options.quick ? 16_384 : 65_536;
  const texts = variedEntries(total, 5).map((e) => JSON.stringify(e));
  const raw = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / total;
  console.log(`Codecs for sealed blocks (${fmt(total)} varied entries of ${fmt(raw)} B; MB/s of JSON on one core)`);
  const dictionary = presetDictionary();
  const codecs = [...zlibCodecs(dictionary), ...zstdCodecs(dictionary)];
  const rows: Row[] = [];
  console.log('  | codec | entries per block | B per entry | × JSON | compress MB/s | decompress MB/s |');
  console.log('  |---|---|---|---|---|---|');
  for (const perBlock of [256, 1024, 4096]) {
    const runs: Buffer[] = [];
    for (let i = 0; i + perBlock <= total; i += perBlock) runs.push(Buffer.from(texts.slice(i, i + perBlock).join('')));
    for (const codec of codecs) {
      const row = measure(codec, runs, perBlock, options.quick ? 1 : 2);
      rows.push(row);
      console.log(
        `  | ${row.codec} | ${perBlock} | ${fmt(row.bytesPerEntry, 1)} | ${fmt(row.ratio, 3)} | ${fmt(row.compressMBs)} | ${fmt(row.decompressMBs)} |`,
      );
      await new Promise((r) => setImmediate(r));
    }
  }
  return rows;
}

/**
 * The sealed format itself (lib/storage/log-index/seal-run.ts) over the same
 * kind of entries: blocks of up to 1,024 entries with a dictionary taken
 * from the project's first entries, as a backend would seal them. Prints
 * the block and filter bytes per entry (what a backend stores besides one
 * row per block and per filter shard) and the CPU sealing takes per entry.
 */
export async function benchSealedFormat(options: { quick: boolean }): Promise<{ blockBytes: number; filterBytes: number; sealMicros: number }> {
  const total = options.quick ? 20_480 : 102_400;
  const texts = variedEntries(total, 6).map((e) => JSON.stringify(e));
  const inputs: SealInput[] = texts.map((body, i) => ({
    id: 1 + i * 3,
    receivedAt: 1_750_000_000_000 + Math.floor(i / 500),
    ts: 1_750_000_000_000 + i * 20,
    level: i % 5,
    body,
  }));
  const dictionary = { id: 1, bytes: buildDictionary(texts.slice(0, 1024)) };
  let blockBytes = 0;
  let filterBytes = 0;
  const started = process.cpuUsage();
  for (const run of cutSealRuns(inputs, true)) {
    const sealed = sealRun(run, dictionary);
    blockBytes += sealed.block.length;
    filterBytes += sealed.shards.reduce((n, s) => n + s.length, 0);
    await new Promise((r) => setImmediate(r));
  }
  const cpu = process.cpuUsage(started);
  const result = { blockBytes: blockBytes / total, filterBytes: filterBytes / total, sealMicros: (cpu.user + cpu.system) / total };
  console.log(
    `  sealed format v1 (${fmt(total)} entries, blocks of 1,024, frames of 128, deflate 6 + project dictionary): block ${fmt(result.blockBytes, 1)} B + filter ${fmt(result.filterBytes, 1)} B per entry; sealing ${fmt(result.sealMicros, 1)} µs CPU per entry`,
  );
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  await benchCodecs({ quick });
  await benchSealedFormat({ quick });
}
