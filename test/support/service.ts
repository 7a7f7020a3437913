/**
 * A real logkeep service on a real socket (port 0) for HTTP tests, plus a
 * tiny client over fetch that checks every answer of such a service against
 * the OpenAPI document (test/support/openapi.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogService, type LogService, type LogServiceOptions } from '../../lib/service.js';
import { applyServerBounds, serverOptions } from '../../lib/server-bounds.js';
import type { LogServiceSettings } from '../../lib/core/config.js';
import { silentLogger, type ServiceLogger } from '../../lib/core/logger.js';
import type { RateLimiter } from '../../lib/auth/rate-limit.js';
import { newTestDatabase, type BackendName, type TestDatabase } from './backends.js';
import { assertDocumentedResponse, checkResponsesOf } from './openapi.js';

export const TEST_JWT_SECRET = 'test-secret-0123456789abcdef0123456789abcdef';
export const ADMIN_PASSWORD = 'admin-password-1';
/** Cheap scrypt for tests: the hash format and code path are the production ones. */
export const TEST_SCRYPT_LOG_N = 10;

export interface RunningService {
  url: string;
  service: LogService;
  server: Server;
  database: TestDatabase;
  /** Stops the server and the service; keeps the database unless `dropDatabase`. */
  stop(options?: { dropDatabase?: boolean }): Promise<void>;
}

export interface StartOptions {
  settings?: Partial<LogServiceSettings>;
  database?: TestDatabase;
  basePath?: string;
  now?: () => number;
  /** Where the service's diagnostics go (default: nowhere). */
  logger?: ServiceLogger;
  /** false: the retention purge runs only through `service.runPurgeOnce()`. */
  scheduledPurge?: boolean;
  /** The rate limiter's tables, to inspect what they retain. */
  rateLimiter?: RateLimiter;
  /** How long an ingestion body may send nothing before 408 (default: the service's). */
  ingestBodyIdleMs?: number;
  /** Hashing-process options for tests (a short timeout, a lost reply). */
  passwordHashing?: LogServiceOptions['passwordHashing'];
  /** Listen on this port (default: any free one), for settings that must name the service's own address. */
  port?: number;
}

/** A loopback port free right now, for a service whose settings must know its address before it listens. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function startService(backend: BackendName, options: StartOptions = {}): Promise<RunningService> {
  const database = options.database ?? (await newTestDatabase(backend));
  const service = await createLogService(
    {
      ...database.config,
      jwtSecret: TEST_JWT_SECRET,
      bootstrapAdminPassword: ADMIN_PASSWORD,
      rateLimitEnabled: false,
      ...options.settings,
    },
    {
      logger: options.logger ?? silentLogger,
      passwordHashLogN: TEST_SCRYPT_LOG_N,
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.scheduledPurge === undefined ? {} : { scheduledPurge: options.scheduledPurge }),
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
      ...(options.ingestBodyIdleMs === undefined ? {} : { ingestBodyIdleMs: options.ingestBodyIdleMs }),
      ...(options.passwordHashing === undefined ? {} : { passwordHashing: options.passwordHashing }),
    },
  );
  // The bin's bounds (header size, timeouts, connection cap), from the service's configuration.
  const server = createServer(serverOptions(service.config), service.handler);
  applyServerBounds(server, service.config);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  // Unless mounted under a prefix, every answer `api()` gets from it must be one the OpenAPI document describes.
  if (options.basePath === undefined) checkResponsesOf(url);
  return {
    url,
    service,
    server,
    database,
    async stop(stopOptions = {}) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
      if (stopOptions.dropDatabase) await database.cleanup();
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  body: any;
}

export interface ApiRequest {
  token?: string | null;
  /** JSON body (serialised here). */
  json?: unknown;
  /** Form body (application/x-www-form-urlencoded). */
  form?: Record<string, string>;
  /** A raw body, sent as is. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export async function api(baseUrl: string, method: string, path: string, request: ApiRequest = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.token) headers.authorization = `Bearer ${request.token}`;
  let body: string | Buffer | undefined;
  if (request.json !== undefined) {
    body = JSON.stringify(request.json);
    headers['content-type'] ??= 'application/json';
  } else if (request.form !== undefined) {
    body = new URLSearchParams(request.form).toString();
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
  } else if (request.raw !== undefined) {
    body = request.raw;
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text.length ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  assertDocumentedResponse(baseUrl, method, path, { status: res.status, headers: res.headers, text });
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** Password grant; returns the token response body (throws on failure). */
export async function login(baseUrl: string, username: string, password: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await api(baseUrl, 'POST', '/v1/auth/token', { form: { grant_type: 'password', username, password } });
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${res.text}`);
  return res.body;
}
