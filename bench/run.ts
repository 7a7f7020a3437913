/**
 * `npm run bench`: every benchmark in sequence, each bounded in time.
 * `--quick` uses 100k entries per backend instead of 1M (about two minutes
 * instead of about ten) and fewer login-burst windows. The query, histogram,
 * console (headless Chromium) and far-back live-stream benchmarks run on
 * the databases the ingestion benchmark filled; the login-burst benchmark fills its own.
 * The ingestion benchmark prints the file and server backends' rates side
 * by side (server ≥ 25,000 entries/s and ≥ 0.9 × file). The query benchmark
 * seals what ingestion left in the tail first (`sealNow()`) and says how
 * much that was. The sustained-ingestion benchmark loads each backend far
 * past the tails' burst (600k entries, 200k with `--quick`) and prints the
 * rate sealing sustains beside the largest tail seen and its bound.
 * The disk benchmark fills databases of its own (1M varied entries, 50k
 * with `--quick`), seals and settles them, and prints bytes per entry
 * beside `zstd -3` and `gzip -6` (target ≤ 150 B, stretch ≤ 1.2 × zstd -3);
 * the sealed-format ones seal the same entries and measure their tables.
 * `logkeep tail` is cut off 1,000 times (100 with `--quick`) while entries flow.
 * `logkeep export` writes 1M entries (100k with `--quick`) beside its RSS
 * ceiling and `GET /v1/logs` paged from Node.
 * The alerts benchmark (100 rules: webhook latency at 5,000 entries/s, and
 * their cost to saturated ingestion) runs 25 s of traffic per backend, 10 s
 * with `--quick`.
 * `--ten-million` (or `LOGKEEP_BENCH_TEN_MILLION=1`) adds bench/query-scale.ts:
 * one database per backend filled to 1M and queried, then to 10M and
 * queried again (a rare id, a word in 1 % of entries; how each grew). It
 * fills 1M over HTTP and grows to 10M by copying the sealed blocks with
 * shifted ids and times (`--over-http` ingests all 10M, hours on 2 cores).
 * The soak runs last, 2 minutes per backend (a short soak);
 * `LOGKEEP_BENCH_SOAK_MINUTES=30` makes it the full 30-minute one.
 */
import { benchCodecs, benchSealedFormat } from './codecs.js';
import { benchAccessKeys } from './access-keys.js';
import { benchTailDrops } from './tail-drops.js';
import { benchExport } from './export.js';
import { benchAlerts } from './alerts.js';
import { benchConsole } from './console.js';
import { benchDisk } from './disk.js';
import { benchSealedDisk } from './sealed-disk.js';
import { benchEncodings } from './encodings.js';
import { benchHistogram } from './histogram.js';
import { benchIngest } from './ingest.js';
import { benchServerIngest } from './ingest-server.js';
import { benchLogin } from './login.js';
import { benchOtlp } from './otlp.js';
import { benchMetrics } from './metrics.js';
import { benchQuery } from './query.js';
import { benchQueryScale } from './query-scale.js';
import { benchSoak, soakMinutesFromEnv } from './soak.js';
import { benchSustained } from './sustained.js';
import { runStreamBench } from './stream.js';
import { benchFarBack } from './stream-far-back.js';

const quick = process.argv.includes('--quick');
const tenMillion = process.argv.includes('--ten-million') || process.env.LOGKEEP_BENCH_TEN_MILLION === '1';
const started = Date.now();
console.log(
  `logkeep benchmarks (${quick ? 'quick' : 'full'}${tenMillion ? ', with 10M' : ''}), Node ${process.version}, ${(await import('node:os')).cpus().length} cores`,
);
const filled = await benchIngest({ quick });
await benchServerIngest({ quick });
await benchSustained({ quick });
try {
  await benchQuery({ quick }, filled);
  await benchHistogram({ quick }, filled);
  await benchConsole({ quick }, filled);
  await benchFarBack({ quick }, filled);
} finally {
  await filled.file.db.drop();
  await filled.server?.db.drop();
}
if (tenMillion) await benchQueryScale({ entries: 10_000_000, first: 1_000_000, backends: ['file', 'server'] });
await benchDisk({ quick });
await benchCodecs({ quick });
await benchSealedFormat({ quick });
await benchSealedDisk({ quick });
await runStreamBench({ quick });
await benchEncodings({ quick });
await benchOtlp({ quick });
await benchLogin({ quick });
await benchAccessKeys({ quick });
await benchTailDrops({ quick });
await benchExport({ quick });
await benchMetrics({ quick });
await benchAlerts({ quick });
await benchSoak({ minutes: soakMinutesFromEnv() });
console.log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
