/**
 * The process under measurement, forked by the benchmarks so the loader
 * never shares its event loop: either a real logkeep service or the bare
 * `node:http` ceiling (read the batch, JSON.parse, check levels, 202).
 * Talks to its parent over IPC: `{ready, url}` once listening; answers
 * `rss` with the peak RSS since the last `rss`, and exits on `stop`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { getHeapSpaceStatistics } from 'node:v8';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import type { LogService } from '../../lib/service.js';
import type { LogServiceSettings } from '../../lib/core/config.js';

/**
 * The service is loaded from `dist/` (`npm run bench` builds it first), so
 * what is measured is what ships: from source, its ingestion worker and its
 * password-hashing process would each load tsx and compile TypeScript, which
 * costs memory and, when the hashing process starts, ~150 ms of CPU at full
 * priority (35 ms compiled).
 */
async function loadLibrary() {
  const dist = new URL('../../dist/lib/', import.meta.url);
  if (!existsSync(new URL('service.js', dist))) throw new Error('dist/ is missing: run `npm run build` before a benchmark');
  const [service, heap, logger] = await Promise.all([
    import(new URL('service.js', dist).href) as Promise<typeof import('../../lib/service.js')>,
    import(new URL('heap-growth.js', dist).href) as Promise<typeof import('../../lib/heap-growth.js')>,
    import(new URL('core/logger.js', dist).href) as Promise<typeof import('../../lib/core/logger.js')>,
  ]);
  return { createLogService: service.createLogService, limitHeapGrowth: heap.limitHeapGrowth, silentLogger: logger.silentLogger };
}

export type ChildMode = { kind: 'bare' } | { kind: 'service'; settings: LogServiceSettings; passwordHashLogN?: number };

const LEVELS = new Set(['debug', 'info', 'warning', 'error', 'critical']);

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function bareServer(): Server {
  return createServer((req, res) => {
    readAll(req).then(
      (body) => {
        const batch = JSON.parse(body.toString('utf8')) as { level?: unknown }[];
        let accepted = 0;
        for (const e of batch) if (LEVELS.has(e.level as string)) accepted += 1;
        const text = JSON.stringify({ accepted, rejected: [] });
        res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
      () => res.destroy(),
    );
  });
}

async function main(): Promise<void> {
  const mode = JSON.parse(process.env.LOGKEEP_BENCH_CHILD ?? '{"kind":"bare"}') as ChildMode;
  let service: LogService | null = null;
  let server: Server;
  if (mode.kind === 'bare') {
    server = bareServer();
  } else {
    const { createLogService, limitHeapGrowth, silentLogger } = await loadLibrary();
    // As the bin runs it (bin/serve.ts).
    if (process.env.LOGKEEP_BENCH_HEAP_DEFAULTS !== '1') limitHeapGrowth();
    service = await createLogService(mode.settings, { logger: silentLogger, ...(mode.passwordHashLogN ? { passwordHashLogN: mode.passwordHashLogN } : {}) });
    server = createServer(service.handler);
  }
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  let peak = process.memoryUsage().rss;
  let atPeak: Record<string, unknown> = { ...process.memoryUsage() };
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    if (usage.rss > peak) {
      peak = usage.rss;
      atPeak = { ...usage };
      if (process.env.LOGKEEP_BENCH_VERBOSE) for (const space of getHeapSpaceStatistics()) atPeak[space.space_name] = Math.round(space.space_used_size / 1e6);
    }
  }, 20);
  process.on('message', async (message: { type: string }) => {
    if (message.type === 'rss') {
      const now = process.memoryUsage().rss;
      process.send!({ type: 'rss', peak: Math.max(peak, now), now, atPeak });
      peak = now;
      atPeak = { ...process.memoryUsage() };
    } else if (message.type === 'stop') {
      clearInterval(sampler);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service?.close();
      process.send!({ type: 'stopped' }, () => process.exit(0));
    }
  });
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}` });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
