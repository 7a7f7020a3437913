/**
 * Shipping an application's logs with the ingestion client: entries are
 * buffered and sent in batches over a keep-alive connection, retried when
 * the service is unreachable, and delivered on `close()`.
 *
 *   LOGKEEP_URL=http://localhost:8080 LOGKEEP_KEY=slk_… npx tsx examples/ship-logs.ts
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { IngestClient, type IngestClientStats } from 'logkeep/client';

export interface ShipLogsOptions {
  /** The service's base address (with its path prefix, if mounted under one). */
  url: string;
  /** The project's secret key, `slk_…`. */
  secretKey: string;
  /** How many simulated requests to log (default 20). */
  requests?: number;
}

/** Logs a few simulated HTTP requests, then closes the client; returns its counters. */
export async function main(options: ShipLogsOptions): Promise<IngestClientStats> {
  const logs = new IngestClient({
    url: options.url,
    secretKey: options.secretKey,
    // Defaults shown: 500 entries or 1 MiB per request, at most 1 s of waiting.
    maxBatchEntries: 500,
    flushIntervalMs: 1000,
    // A slow or unreachable service must never grow the application's memory without bound.
    maxBufferedEntries: 10_000,
    overflow: 'drop-oldest',
    onRejected: ({ entry, error, message }) => console.error(`logkeep rejected ${JSON.stringify(entry)}: ${error} (${message})`),
    onError: (err) => console.error(`logkeep gave up on ${err.entries.length} entries: ${err.message}`),
  });

  const sessionId = randomUUID();
  for (let i = 0; i < (options.requests ?? 20); i++) {
    const requestId = randomUUID();
    const started = Date.now();
    // `log()` only buffers: it never waits for the network (with the default overflow policy).
    void logs.log({
      level: 'info',
      event: 'request started',
      logger: 'http',
      session_id: sessionId,
      request_id: requestId,
      method: 'GET',
      path: `/items/${i}`,
    });
    const status = i % 10 === 7 ? 500 : 200;
    void logs.log({
      level: status >= 500 ? 'error' : 'info',
      event: 'request finished',
      logger: 'http',
      session_id: sessionId,
      request_id: requestId,
      status,
      duration_ms: Date.now() - started,
    });
  }

  // On shutdown: deliver what is buffered, then close the connections.
  await logs.close();
  return logs.stats;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = process.env.LOGKEEP_URL ?? 'http://localhost:8080';
  const secretKey = process.env.LOGKEEP_KEY;
  if (!secretKey) throw new Error('set LOGKEEP_KEY to a project secret key (slk_…)');
  const stats = await main({ url, secretKey });
  console.log(`accepted ${stats.accepted}, rejected ${stats.rejected}, failed ${stats.failed}, dropped ${stats.dropped}`);
}
