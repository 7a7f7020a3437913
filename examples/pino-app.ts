/**
 * A pino application shipping to logkeep through the `logkeep/pino`
 * transport (pino runs it in a worker thread). Ending the transport's
 * stream delivers what is still buffered; a process that ends normally
 * does so by itself. Run it as its own process: ending the stream blocks
 * the thread, so a logkeep served from the same thread could not answer.
 *
 *   LOGKEEP_URL=http://localhost:8080 LOGKEEP_KEY=slk_… npx tsx examples/pino-app.ts
 */
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import pino from 'pino';

export interface PinoAppOptions {
  /** The service's base address (with its path prefix, if mounted under one). */
  url: string;
  /** The project's secret key, `slk_…`. */
  secretKey: string;
  /** How many simulated requests to log (default 10). */
  requests?: number;
}

/** Logs a few simulated requests with pino, then closes the transport (which delivers them). */
export async function main(options: PinoAppOptions): Promise<void> {
  const transport = pino.transport({ target: 'logkeep/pino', options: { url: options.url, key: options.secretKey } });
  // `name` becomes the entry's `logger`, `msg` its `event`; every other field is kept.
  const logger = pino({ name: 'http', level: 'debug' }, transport);

  const sessionId = randomUUID();
  for (let i = 0; i < (options.requests ?? 10); i++) {
    const requestId = randomUUID();
    const log = logger.child({ session_id: sessionId, request_id: requestId });
    log.debug({ path: `/items/${i}` }, 'request started');
    const status = i % 5 === 3 ? 500 : 200;
    if (status >= 500) log.error({ status }, 'request failed');
    else log.info({ status }, 'request finished');
  }

  // On shutdown: ending the stream returns once the worker has delivered everything
  // (it blocks this thread meanwhile, as pino's own exit handling does).
  const finished = once(transport, 'finish');
  transport.end();
  await finished;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const url = process.env.LOGKEEP_URL ?? 'http://localhost:8080';
  const secretKey = process.env.LOGKEEP_KEY;
  if (!secretKey) {
    console.error('Set LOGKEEP_KEY to a project secret key (slk_…).');
    process.exit(1);
  }
  await main({ url, secretKey });
}
