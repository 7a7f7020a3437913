/**
 * `logkeep serve`: open (and migrate) the database, create the first
 * administrator if needed, and only then listen, so `/healthz`
 * never answers before the service is ready. SIGTERM/SIGINT stop accepting,
 * let in-flight requests finish, close the service and exit 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogService, type LogService, type LogServiceOptions } from '../lib/service.js';
import { applyServerBounds, serverOptions } from '../lib/server-bounds.js';
import { limitHeapGrowth } from '../lib/heap-growth.js';
import type { ResolvedConfig } from '../lib/config-resolve.js';
import type { CreatedAdmin } from '../lib/admin/create-admin.js';
import type { ServiceLogger } from '../lib/core/logger.js';
import type { ServiceLogging } from '../lib/logging.js';
import { createBinLogging } from './console-logger.js';
import { EXIT_CONFIG, configurationFailure } from './startup-failure.js';

/** How long in-flight requests (live streams included) get after a stop signal before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

/** `options` are for `npm run dev` (the console served from disk as it is rebuilt). */
export async function serve(resolved: ResolvedConfig, options: Pick<LogServiceOptions, 'console'> = {}): Promise<void> {
  const { config } = resolved;
  // The process is logkeep's alone: collect garbage before it piles up.
  limitHeapGrowth();
  let logging: ServiceLogging;
  try {
    logging = createBinLogging(config);
  } catch (err) {
    const message = configurationFailure(err);
    if (message === null) throw err;
    process.stderr.write(`logkeep: cannot start: ${message}\n`);
    process.exitCode = EXIT_CONFIG;
    return;
  }
  const logger = logging.logger;
  for (const warning of resolved.warnings) logger.warn(warning);
  let service: LogService;
  try {
    service = await createLogService(config, { ...options, logger });
  } catch (err) {
    await logging.close();
    const message = configurationFailure(err);
    if (message === null) throw err;
    process.stderr.write(`logkeep: cannot start: ${message}\n`);
    process.exitCode = EXIT_CONFIG;
    return;
  }
  if (service.bootstrapAdmin) announceBootstrapAdmin(service.bootstrapAdmin, logger);
  // Header size, timeouts and the connection cap, from the configuration.
  const server = createServer(serverOptions(config), service.handler);
  applyServerBounds(server, config);
  try {
    await listen(server, config.httpPort, config.httpHost);
  } catch (err) {
    await service.close();
    await logging.close();
    process.stderr.write(`logkeep: cannot listen on ${config.httpHost}:${config.httpPort}: ${(err as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  logger.info(`logkeep listening on ${addressUrl(server)}`);
  stopOnSignals(server, service, logging);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function addressUrl(server: Server): string {
  const { address, port, family } = server.address() as AddressInfo;
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
}

/**
 * The generated password goes straight to stdout, whatever the log level:
 * it is shown this once and never again.
 */
function announceBootstrapAdmin(admin: CreatedAdmin, logger: ServiceLogger): void {
  if (!admin.generated) {
    logger.info(`created the first administrator '${admin.user.username}' with the configured password; it must be changed at first login`);
    return;
  }
  process.stdout.write(
    `\nlogkeep: created the first administrator '${admin.user.username}'.\n` +
      `TEMPORARY password, shown only this once (it must be changed at first login):\n\n` +
      `    ${admin.password}\n\n`,
  );
}

function stopOnSignals(server: Server, service: LogService, logging: ServiceLogging): void {
  const logger = logging.logger;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: closing open connections now`);
      server.closeAllConnections();
      return;
    }
    stopping = true;
    logger.info(`${signal} received: finishing in-flight requests, then closing the database`);
    shutdown(server, service, logger).then(
      async () => {
        logger.info('logkeep stopped');
        // The log file gets its last lines before the process ends.
        await logging.close();
        process.exit(0);
      },
      async (err: unknown) => {
        logger.error('shutdown failed', { error: err });
        await logging.close();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function shutdown(server: Server, service: LogService, logger: ServiceLogger): Promise<void> {
  // Stop accepting; idle keep-alive connections close now, busy ones when their request ends.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Live streams end now (`end` `server_shutdown`) instead of holding the close for the grace period.
  service.beginShutdown();
  server.closeIdleConnections();
  const grace = setTimeout(() => {
    logger.warn(`requests still open after ${SHUTDOWN_GRACE_MS / 1000} s: closing their connections`);
    server.closeAllConnections();
  }, SHUTDOWN_GRACE_MS);
  try {
    await closed;
  } finally {
    clearTimeout(grace);
  }
  await service.close();
}
