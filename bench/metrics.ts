/**
 * What metrics cost ingestion (issue 28: scraping `/metrics` every second
 * costs under 1 % of the ingestion rate). File backend, 500 entries per
 * batch from 4 connections, in windows that take turns within one run so
 * that drift on a shared machine falls on every configuration alike:
 * - metrics off (its own service, its own database);
 * - metrics on, nobody scraping (the counters on the hot path only);
 * - metrics on, `/metrics` scraped every second.
 * The scraping cost is the third against the second (same service, same
 * database); the whole cost of metrics is the third against the first.
 * Each scrape's time and size are printed too.
 *
 * Standalone: `node --import tsx bench/metrics.ts [--quick]`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBatchPool, type BatchPool } from './support/dataset.js';
import { createOrg, fileDatabase, fmt, load, percentile, serviceSettings, startChild, verdict, type BenchOrg, type Child } from './support/harness.js';
import { shots } from './ingest.js';

const BATCH = 500;
const TARGET_COST_PERCENT = 1;

type Config = 'off' | 'on' | 'scraped';

interface Tally {
  entries: number;
  seconds: number;
  /** Rate of each window, in order. */
  windows: number[];
}

/** Scrapes `url` every second until stopped; keeps each scrape's time and size. */
function scrapeEverySecond(url: string): { stop(): Promise<{ ms: number[]; bytes: number[] }> } {
  const ms: number[] = [];
  const bytes: number[] = [];
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(async () => {
      const started = performance.now();
      const res = await fetch(`${url}/metrics`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text.slice(0, 200)}`);
      ms.push(performance.now() - started);
      bytes.push(Buffer.byteLength(text));
    });
  }, 1000);
  return {
    async stop() {
      clearInterval(timer);
      await running;
      return { ms, bytes };
    },
  };
}

/**
 * CPU time one scrape costs the service, measured in this process (CPU
 * time, not wall time, so the machine's other load does not count): a
 * service from `dist/` with metrics on and a few projects' worth of
 * series, scraped `count` times in a row.
 */
async function cpuPerScrape(pool: BatchPool, count: number): Promise<{ ms: number; bytes: number }> {
  const dist = new URL('../dist/lib/', import.meta.url);
  const { createLogService } = (await import(new URL('service.js', dist).href)) as typeof import('../lib/service.js');
  const { silentLogger } = (await import(new URL('core/logger.js', dist).href)) as typeof import('../lib/core/logger.js');
  const db = fileDatabase();
  const service = await createLogService(serviceSettings(db, { metricsEnabled: true }), { logger: silentLogger });
  const server = createServer(service.handler);
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const org = await createOrg(url, 10);
    await load({ url, next: shots(pool, org.keys), connections: 2, totalEntries: 20 * BATCH });
    let bytes = 0;
    for (let i = 0; i < 10; i++) await (await fetch(`${url}/metrics`)).text();
    const before = process.cpuUsage();
    for (let i = 0; i < count; i++) bytes = Buffer.byteLength(await (await fetch(`${url}/metrics`)).text());
    const used = process.cpuUsage(before);
    // The client's share (fetch) is counted too: an upper bound on the service's.
    return { ms: (used.user + used.system) / 1000 / count, bytes };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await service.close();
    await db.drop();
  }
}

/** Standard error of the mean of `rates`, in % of the mean. */
function relativeError(rates: readonly number[]): number {
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  const variance = rates.reduce((a, r) => a + (r - mean) ** 2, 0) / Math.max(1, rates.length - 1);
  return (100 * Math.sqrt(variance / rates.length)) / mean;
}

export async function benchMetrics(options: { quick: boolean }): Promise<void> {
  const rounds = options.quick ? 3 : 6;
  const windowSeconds = options.quick ? 3 : 5;
  console.log(`Metrics (file backend, 500/batch, 4 connections, ${rounds} rounds of ${windowSeconds} s windows per configuration, in turn)`);
  const pool = createBatchPool(options.quick ? 20 : 40, BATCH, 28);
  const dbOff = fileDatabase();
  const dbOn = fileDatabase();
  const children: Child[] = [];
  try {
    const off = await startChild({ kind: 'service', settings: serviceSettings(dbOff) });
    children.push(off);
    const on = await startChild({ kind: 'service', settings: serviceSettings(dbOn, { metricsEnabled: true }) });
    children.push(on);
    const orgs: Record<'off' | 'on', BenchOrg> = { off: await createOrg(off.url, 10), on: await createOrg(on.url, 10) };
    const urls = { off: off.url, on: on.url };
    const next = { off: shots(pool, orgs.off.keys), on: shots(pool, orgs.on.keys) };
    const tally: Record<Config, Tally> = {
      off: { entries: 0, seconds: 0, windows: [] },
      on: { entries: 0, seconds: 0, windows: [] },
      scraped: { entries: 0, seconds: 0, windows: [] },
    };
    const scrapes = { ms: [] as number[], bytes: [] as number[] };

    const window = async (config: Config, seconds: number, counted: boolean) => {
      const service = config === 'off' ? 'off' : 'on';
      const scraper = config === 'scraped' ? scrapeEverySecond(urls.on) : null;
      const deadline = Date.now() + seconds * 1000;
      const result = await load({ url: urls[service], next: next[service], connections: 4, until: () => Date.now() > deadline });
      const seen = await scraper?.stop();
      if (!counted) return;
      tally[config].entries += result.entries;
      tally[config].seconds += result.seconds;
      tally[config].windows.push(result.rate);
      if (seen) {
        scrapes.ms.push(...seen.ms);
        scrapes.bytes.push(...seen.bytes);
      }
    };

    // Warm both services (JIT, caches, the preparation worker) before anything counts.
    await window('off', 2, false);
    await window('scraped', 2, false);
    const orders: Config[][] = [
      ['off', 'on', 'scraped'],
      ['scraped', 'off', 'on'],
      ['on', 'scraped', 'off'],
    ];
    for (let round = 0; round < rounds; round++) {
      for (const config of orders[round % orders.length]!) await window(config, windowSeconds, true);
    }

    const rate = (c: Config) => tally[c].entries / tally[c].seconds;
    const spread = (c: Config) => `${fmt(Math.min(...tally[c].windows))}–${fmt(Math.max(...tally[c].windows))}`;
    const scrapingCost = 100 * (1 - rate('scraped') / rate('on'));
    const wholeCost = 100 * (1 - rate('scraped') / rate('off'));
    console.log(`  metrics off:                       ${fmt(rate('off'))} entries/s (windows ${spread('off')})`);
    console.log(`  metrics on, not scraped:           ${fmt(rate('on'))} entries/s (windows ${spread('on')})`);
    console.log(`  metrics on, scraped every second:  ${fmt(rate('scraped'))} entries/s (windows ${spread('scraped')})`);
    // What the window comparison can resolve: the windows' spread over the square root of their number.
    const resolution = Math.max(...(['off', 'on', 'scraped'] as const).map((c) => relativeError(tally[c].windows)));
    const resolvable = resolution < TARGET_COST_PERCENT;
    console.log(
      `  cost of scraping every second: ${fmt(scrapingCost, 1)} % of the rate unscraped; all of metrics against off: ${fmt(wholeCost, 1)} % (± ${fmt(resolution, 1)} % from window noise) — target < ${TARGET_COST_PERCENT} %: ${resolvable ? verdict(scrapingCost < TARGET_COST_PERCENT) : 'not resolvable at this noise, see the CPU figure'}`,
    );
    const cpu = await cpuPerScrape(pool, options.quick ? 100 : 300);
    const cpuCost = (100 * cpu.ms) / 1000;
    console.log(
      `  CPU per scrape (this process, client included): ${fmt(cpu.ms, 2)} ms for ${fmt(cpu.bytes / 1024, 1)} KiB → ${fmt(cpuCost, 2)} % of one core at one scrape per second — target < ${TARGET_COST_PERCENT} %: ${verdict(cpuCost < TARGET_COST_PERCENT)}`,
    );
    console.log(
      `    ${scrapes.ms.length} scrapes under load: p50 ${fmt(percentile(scrapes.ms, 50), 1)} ms, p99 ${fmt(percentile(scrapes.ms, 99), 1)} ms, ${fmt(percentile(scrapes.bytes, 50) / 1024, 1)} KiB each (wall time, waiting on the busy cores included)`,
    );
  } finally {
    for (const child of children) await child.stop();
    await dbOff.drop();
    await dbOn.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchMetrics({ quick: process.argv.includes('--quick') });
}
