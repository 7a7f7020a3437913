/**
 * Two logkeep services in one process, on two databases, sharing nothing:
 * each has its own users, signing secret, projects and entries. Here both
 * hang off one host server (`/a/…` and `/b/…`); two servers work the same.
 *
 *   npx tsx examples/two-services.ts ./a.db ./b.db
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { applyServerBounds, createLogService, serverOptions, type LogService, type LogServiceOptions, type LogServiceSettings } from 'logkeep';

export interface TwoServices {
  /** The host server; service A is at `${url}/a`, service B at `${url}/b`. */
  url: string;
  server: Server;
  a: LogService;
  b: LogService;
  close(): Promise<void>;
}

export async function main(
  settingsA: LogServiceSettings,
  settingsB: LogServiceSettings,
  options: { port?: number; service?: Omit<LogServiceOptions, 'basePath'> } = {},
): Promise<TwoServices> {
  const a = await createLogService(settingsA, { ...options.service, basePath: '/a' });
  const b = await createLogService(settingsB, { ...options.service, basePath: '/b' }).catch(async (err: unknown) => {
    await a.close();
    throw err;
  });
  // One server for both: it takes the first service's bounds (header size, timeouts, connection cap).
  const server = createServer(serverOptions(a.config), (req, res) => {
    // Each handler answers 404 outside its own prefix, so dispatch on it.
    (req.url?.startsWith('/b/') || req.url === '/b' ? b : a).handler(req, res);
  });
  applyServerBounds(server, a.config);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    a,
    b,
    async close() {
      a.beginShutdown();
      b.beginShutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([a.close(), b.close()]);
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Separate secrets: a token of one service means nothing to the other.
  const secret = () => randomBytes(48).toString('base64url');
  const both = await main(
    { dbPath: process.argv[2] ?? './a.db', jwtSecret: secret() },
    { dbPath: process.argv[3] ?? './b.db', jwtSecret: secret() },
    { port: 3000 },
  );
  for (const [name, service] of [
    ['a', both.a],
    ['b', both.b],
  ] as const) {
    if (service.bootstrapAdmin?.generated) console.log(`service ${name}: admin password ${service.bootstrapAdmin.password}`);
  }
  console.log(`service a on ${both.url}/a, service b on ${both.url}/b`);
  process.once('SIGINT', () => void both.close());
}
