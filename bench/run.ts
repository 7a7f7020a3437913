/**
 * `npm run bench`: every benchmark in sequence, each bounded in time.
 * `--quick` uses 100k entries per backend instead of 1M (about two minutes
 * instead of about ten) and fewer login-burst windows. The query, histogram,
 * console (headless Chromium) and far-back live-stream benchmarks run on
 * the databases the ingestion benchmark filled; the login-burst benchmark fills its own.
 * The disk benchmark fills databases of its own (200k varied entries, 50k
 * with `--quick`) and prints bytes per entry beside `zstd -3` and `gzip -6`;
 * the sealed-format ones seal the same entries and measure their tables.
 * `logkeep tail` is cut off 1,000 times (100 with `--quick`) while entries flow.
 * `logkeep export` writes 1M entries (100k with `--quick`) beside its RSS
 * ceiling and `GET /v1/logs` paged from Node.
 * The alerts benchmark (100 rules: webhook latency at 5,000 entries/s, and
 * their cost to saturated ingestion) runs 25 s of traffic per backend, 10 s
 * with `--quick`. The soak runs last, 2 minutes per backend (a short soak);
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
import { benchSoak, soakMinutesFromEnv } from './soak.js';
import { runStreamBench } from './stream.js';
import { benchFarBack } from './stream-far-back.js';

const quick = process.argv.includes('--quick');
const started = Date.now();
console.log(`logkeep benchmarks (${quick ? 'quick' : 'full'}), Node ${process.version}, ${(await import('node:os')).cpus().length} cores`);
const filled = await benchIngest({ quick });
await benchServerIngest({ quick });
try {
  await benchQuery({ quick }, filled);
  await benchHistogram({ quick }, filled);
  await benchConsole({ quick }, filled);
  await benchFarBack({ quick }, filled);
} finally {
  await filled.file.db.drop();
  await filled.server?.db.drop();
}
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
