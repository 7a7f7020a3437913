/**
 * The process under measurement, forked by the benchmarks so the loader
 * never shares its event loop: either a real logkeep service or the bare
 * `node:http` ceiling (read the batch, JSON.parse, check levels, 202).
 * Talks to its parent over IPC: `{ready, url}` once listening; answers
 * `rss` with the peak RSS since the last `rss`, `loop` with the event-loop
 * delay since the last `loop`, `memory` with `process.memoryUsage()`, and
 * exits on `stop`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { getHeapSpaceStatistics } from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
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

export type ChildMode = { kind: 'bare' } | { kind: 'fanout' } | { kind: 'service'; settings: LogServiceSettings; passwordHashLogN?: number };

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

/**
 * The live-stream ceiling: `GET /v1/logs/stream` opens an SSE response and
 * `POST /v1/logs` parses the batch, answers 202 and then writes each entry
 * marked `kind: "tracer"` (the entries the benchmark's streams match) as a
 * `log` frame shaped like logkeep's to every open stream. No storage, no
 * filter, no authentication: what node:http alone costs for the same frames
 * on the same sockets.
 */
function fanoutServer(): Server {
  const streams = new Set<import('node:http').ServerResponse>();
  let nextId = 1;
  return createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/v1/logs/stream')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write(': open\n\n');
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    readAll(req).then(
      (body) => {
        const batch = JSON.parse(body.toString('utf8')) as Record<string, unknown>[];
        const receivedAt = new Date().toISOString();
        const frames: string[] = [];
        for (const e of batch) {
          const id = nextId++;
          if (e.kind === 'tracer') frames.push(`id: ${id}\nevent: log\ndata: ${JSON.stringify({ id, project_id: 1, received_at: receivedAt, ...e })}\n\n`);
        }
        const text = JSON.stringify({ accepted: batch.length, rejected: [] });
        res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        // After the answer, as logkeep notifies streams after the commit.
        if (frames.length > 0)
          setImmediate(() => {
            for (const stream of streams) for (const frame of frames) stream.write(frame);
          });
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
  } else if (mode.kind === 'fanout') {
    server = fanoutServer();
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
  // How late the event loop ran its callbacks since the last `loop` message (ms):
  // a request waits that long before its handler (or its database answer) runs.
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  process.on('message', async (message: { type: string }) => {
    if (message.type === 'loop') {
      // The histogram holds whole sampling intervals: their excess over the 5 ms tick is the delay.
      const ms = (ns: number) => Math.max(0, ns / 1e6 - 5);
      process.send!({ type: 'loop', p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) });
      loopDelay.reset();
    } else if (message.type === 'memory') {
      process.send!({ type: 'memory', ...process.memoryUsage() });
    } else if (message.type === 'rss') {
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
