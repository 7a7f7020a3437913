/**
 * Embedding logkeep in your own `node:http` server: the service answers
 * under `/logs` (`/logs/healthz`, `/logs/v1/auth/token`, `/logs/v1/logs` …)
 * next to the application's own routes. logkeep never listens or exits by
 * itself: your server does, and stops it.
 *
 *   SERVICE_JWT_SECRET=$(openssl rand -base64 48) PORT=3000 npx tsx examples/embed-in-http-server.ts ./app-logs.db
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { applyServerBounds, createLogService, serverOptions, type LogService, type LogServiceOptions, type LogServiceSettings } from 'logkeep';

export interface EmbeddingApp {
  /** The host server's address, e.g. `http://127.0.0.1:3000`; logkeep is at `${url}/logs`. */
  url: string;
  server: Server;
  logs: LogService;
  /** Stops taking requests, ends live streams, closes the database. */
  close(): Promise<void>;
}

/** Starts the host application with logkeep mounted at `/logs`. */
export async function main(
  settings: LogServiceSettings,
  options: { port?: number; host?: string; service?: Omit<LogServiceOptions, 'basePath'> } = {},
): Promise<EmbeddingApp> {
  // Resolves once the database is open and migrated: listen only after it (the service is ready).
  const logs = await createLogService(settings, { ...options.service, basePath: '/logs' });

  const server = createServer(serverOptions(logs.config), (req, res) => {
    const path = new URL(req.url ?? '/', 'http://host').pathname;
    if (path === '/logs' || path.startsWith('/logs/')) {
      logs.handler(req, res);
      return;
    }
    // The application's own routes.
    if (req.method === 'GET' && path === '/') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ app: 'hello', logs: '/logs' }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ app: 'no such page' }));
  });
  // logkeep's bounds (header size, timeouts, connection cap) for the whole server.
  applyServerBounds(server, logs.config);
  await new Promise<void>((resolve) => server.listen(options.port ?? 3000, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    server,
    logs,
    async close() {
      // Open live streams get `end` (server_shutdown) first, so closing does not wait for them.
      logs.beginShutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await logs.close();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const jwtSecret = process.env.SERVICE_JWT_SECRET;
  if (!jwtSecret) throw new Error('set SERVICE_JWT_SECRET');
  const app = await main({ dbPath: process.argv[2] ?? './app-logs.db', jwtSecret }, { port: Number(process.env.PORT ?? 3000) });
  if (app.logs.bootstrapAdmin?.generated) {
    console.log(`first administrator '${app.logs.bootstrapAdmin.user.username}', temporary password: ${app.logs.bootstrapAdmin.password}`);
  }
  console.log(`app on ${app.url}/, logkeep on ${app.url}/logs`);
  process.once('SIGINT', () => void app.close());
  process.once('SIGTERM', () => void app.close());
}
